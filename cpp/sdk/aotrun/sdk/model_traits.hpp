// Compile-time description of what a model class provides. Required members
// are checked with static_assert (readable errors); optional ones are detected.
//
// Required:
//   static aotrun::sdk::Signature signature();
//   explicit Model(const aotrun::sdk::InstanceContext& ctx);
//   void forward(aotrun::sdk::RunContext& run, const DLTensor* inputs, DLTensor* outputs);
// Optional:
//   static void validate_constants(const aotrun::sdk::Constants& constants);
//   static void output_shapes(const aotrun::sdk::InputShapes& in,
//                             const aotrun::sdk::OutputShapes& out);
//       (required when an output has a dynamic dimension)
//   static bool supports_device(DLDevice device);   (default: CPU only)
//   struct Shared { Shared(); };   one per container, reachable from every
//       instance through InstanceContext::shared<Model::Shared>().
#pragma once

#include <type_traits>
#include <utility>

#include <dlpack/dlpack.h>

#include "aotrun/sdk/constants.hpp"
#include "aotrun/sdk/context.hpp"
#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/signature.hpp"

namespace aotrun {
namespace sdk {
namespace traits {

template <class M, class = void>
struct has_signature : std::false_type {};
template <class M>
struct has_signature<M, std::void_t<decltype(Signature(M::signature()))>> : std::true_type {};

template <class M, class = void>
struct has_forward : std::false_type {};
template <class M>
struct has_forward<M, std::void_t<decltype(std::declval<M&>().forward(
                          std::declval<RunContext&>(), std::declval<const DLTensor*>(), std::declval<DLTensor*>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_validate_constants : std::false_type {};
template <class M>
struct has_validate_constants<M, std::void_t<decltype(M::validate_constants(std::declval<const Constants&>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_output_shapes : std::false_type {};
template <class M>
struct has_output_shapes<
    M, std::void_t<decltype(M::output_shapes(std::declval<const InputShapes&>(), std::declval<const OutputShapes&>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_supports_device : std::false_type {};
template <class M>
struct has_supports_device<M, std::void_t<decltype(bool(M::supports_device(std::declval<DLDevice>())))>>
    : std::true_type {};

template <class M, class = void>
struct has_shared : std::false_type {};
template <class M>
struct has_shared<M, std::void_t<typename M::Shared>> : std::true_type {};

template <class M>
constexpr void check_model() {
  static_assert(has_signature<M>::value, "model class needs: static aotrun::sdk::Signature signature();");
  static_assert(std::is_constructible<M, const InstanceContext&>::value,
                "model class needs a constructor taking const aotrun::sdk::InstanceContext&");
  static_assert(has_forward<M>::value,
                "model class needs: void forward(aotrun::sdk::RunContext&, const DLTensor* "
                "inputs, DLTensor* outputs);");
}

}  // namespace traits
}  // namespace sdk
}  // namespace aotrun
