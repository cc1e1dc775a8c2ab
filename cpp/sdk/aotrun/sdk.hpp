// aotrun package SDK — everything a model package author needs.
//
// A package is one model class plus one export macro:
//
//   #include <aotrun/sdk.hpp>
//   namespace sdk = aotrun::sdk;
//
//   class Double {
//    public:
//     static sdk::Signature signature() {
//       return {{{"x", sdk::dtype::float32(), {-1}}}, {{"y", sdk::dtype::float32(), {-1}}}};
//     }
//     static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) {
//       out[0][0] = in[0][0];
//     }
//     explicit Double(const sdk::InstanceContext&) {}
//     void forward(sdk::RunContext& run, const DLTensor* in, DLTensor* out) {
//       const float* x = sdk::data_ptr<const float>(in[0]);
//       float* y = sdk::data_ptr<float>(out[0]);
//       const int64_t n = in[0].shape[0];
//       run.launch([x, y, n] { for (int64_t i = 0; i < n; ++i) y[i] = 2 * x[i]; });
//     }
//   };
//   AOTRUN_PKG_EXPORT(Double);
//
// Rules for the model class (model_traits.hpp lists every member):
//   - One object is one model instance. The container creates num_models of
//     them; the threaded run may call forward() on different instances from
//     different threads at once, never on one instance twice at once.
//   - forward() validates nothing (the container did) and computes nothing
//     inline: it ENQUEUES its work with run.launch(...) on the run's stream.
//     Lambdas capture values (pointers into inputs/outputs/constants/scratch),
//     because the work may run later on another thread, or be recorded into a
//     graph and replayed many times.
//   - Temporary memory comes from run.scratch(bytes) (stream-ordered host
//     allocation, freed on the stream after the work), never from a member
//     buffer that grows: a captured graph keeps the raw pointers it saw.
//   - Throw aotrun::sdk::Error (or any exception) to fail; the status and
//     message reach the host via aotrun_pkg_get_last_error().
//   - Log with ctx.host().log_lazy(level, [&]{ return std::string(...); }).
//
// Build with cmake's aotrun_add_package() (cmake/AotrunPackage.cmake), which
// compiles with -fvisibility=hidden and defines AOTRUN_PKG_TARGET_ABI.
#pragma once

#include "aotrun/sdk/args.hpp"
#include "aotrun/sdk/config.hpp"
#include "aotrun/sdk/constants.hpp"
#include "aotrun/sdk/container.hpp"
#include "aotrun/sdk/context.hpp"
#include "aotrun/sdk/dtype.hpp"
#include "aotrun/sdk/entry.hpp"
#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/export.hpp"
#include "aotrun/sdk/host.hpp"
#include "aotrun/sdk/model_traits.hpp"
#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/signature.hpp"
#include "aotrun/sdk/tensor.hpp"
