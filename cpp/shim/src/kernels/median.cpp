// aoti_torch_cpu_median (since aotrun-shim 1.8): the median of every element
// of self (aten::median.default), a 0-d tensor of self's dtype, as libtorch
// 2.15's CPU kernel (median_impl) gives it: the element of rank
// (numel - 1) / 2 (the lower median for an even count); NaN when any
// element is NaN; for an empty self NaN in the floating dtypes and what
// libtorch's conversion of NaN leaves in the integer ones (the lowest int32
// and int64, 0 for int16, int8 and uint8). Which of two equal values comes
// out (0.0 or -0.0) is decided as libtorch decides it: the elements in the
// order of self's clone in memory, partitioned by std::nth_element.
// Floating and integer dtypes; bool, complex and the unsigned 16-64-bit
// dtypes are refused, as libtorch's dispatch refuses them.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

template <typename S>
S empty_median() {
  if constexpr (std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>) {
    return std::numeric_limits<S>::lowest();
  } else if constexpr (std::is_integral_v<S>) {
    return S(0);
  } else {
    return Elem<S>::from(std::numeric_limits<typename Elem<S>::Key>::quiet_NaN());
  }
}

template <typename S>
void median_into(const Tensor& self, Tensor& out) {
  using K = typename Elem<S>::Key;
  const int64_t n = self.numel();
  if (n == 0) {
    store<S>(out.data(), 0, empty_median<S>());
    return;
  }
  // The elements as self.clone() lays them out (self's dims ordered by
  // stride, densely).
  const int64_t nd = self.dim();
  const std::vector<int64_t> dense = dense_strides_like(self.sizes, self.strides);
  std::vector<K> v(static_cast<size_t>(n));
  bool nan = false;
  for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
    const K x = load_key<S>(self.data(), nd > 0 ? offset_of(pos, self.strides) : 0);
    nan = nan || is_nan(x);
    v[static_cast<size_t>(nd > 0 ? offset_of(pos, dense) : 0)] = x;
  });
  if (nan) {
    store<S>(out.data(), 0, Elem<S>::from(std::numeric_limits<K>::quiet_NaN()));
    return;
  }
  const auto mid = v.begin() + (n - 1) / 2;
  std::nth_element(v.begin(), mid, v.end());
  store<S>(out.data(), 0, Elem<S>::from(*mid));
}

}  // namespace

Tensor median(const Tensor& self, const char* op) {
  expect_cpu_defined(self, op, "self");
  Tensor out;
  dispatch_real(self.dtype, false, op, "self", [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, Bool8>) {  // bool is refused by dispatch_real above
      out = empty_contiguous({}, self.dtype);
      median_into<S>(self, out);
    }
  });
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_median(AtenTensorHandle self, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::median(s, "aoti_torch_cpu_median"));
  });
}
