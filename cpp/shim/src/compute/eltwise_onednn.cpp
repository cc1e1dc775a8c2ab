// eltwise_in_place (eltwise_onednn.hpp): one oneDNN eltwise primitive per
// element count, activation and OpenMP team size, built once and cached as
// the convolutions are (onednn.hpp), run in place over the tensor's memory
// as a 1-d array.
#include "compute/eltwise_onednn.hpp"

#include <memory>
#include <string>

#include "compute/onednn.hpp"
#include "dtype.hpp"
#include "error.hpp"

namespace aotrun::shim::kernels {
namespace {

using dnnl::memory;

struct EltwisePrimitive {
  memory::desc data;
  memory::desc scratch;
  dnnl::eltwise_forward prim;
};

onednn::PrimitiveCache<EltwisePrimitive>& cache() {
  static onednn::PrimitiveCache<EltwisePrimitive> c(256);
  return c;
}

}  // namespace

bool eltwise_algorithm(const Unary& u, dnnl::algorithm* alg, float* alpha) {
  *alpha = 0.0f;
  switch (u.kind) {
    case Unary::kGeluErf: *alg = dnnl::algorithm::eltwise_gelu_erf; return true;
    case Unary::kGeluTanh: *alg = dnnl::algorithm::eltwise_gelu_tanh; return true;
    case Unary::kTanh: *alg = dnnl::algorithm::eltwise_tanh; return true;
    case Unary::kSigmoid: *alg = dnnl::algorithm::eltwise_logistic; return true;
    case Unary::kSwish: *alg = dnnl::algorithm::eltwise_swish, *alpha = 1.0f; return true;  // x * sigmoid(1 * x)
    default: return false;
  }
}

bool eltwise_in_place(const Unary& u, const Tensor& t) {
  dnnl::algorithm alg;
  float alpha;
  if (!eltwise_algorithm(u, &alg, &alpha) || t.dtype != kFloat32 || !t.is_non_overlapping_and_dense()) return false;
  const int64_t n = t.numel();
  if (n == 0) return true;
  onednn::Key key;
  key.v = {onednn::team_size(), static_cast<int64_t>(alg), n};
  try {
    const std::shared_ptr<EltwisePrimitive> e = cache().get(key, [&] {
      auto p = std::make_shared<EltwisePrimitive>();
      p->data = memory::desc({n}, memory::data_type::f32, memory::format_tag::a);
      const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, p->data, alpha, 0.0f);
      const dnnl::eltwise_forward::primitive_desc pd(desc, onednn::user_scratchpad(), onednn::cpu_engine());
      p->scratch = pd.scratchpad_desc();
      p->prim = dnnl::eltwise_forward(pd);
      return p;
    });
    // The memory the dense tensor spans, from its lowest element (a dense
    // tensor with negative strides does not exist: strides here are >= 0).
    memory data(e->data, onednn::cpu_engine(), t.data());
    const memory scratch = onednn::scratchpad_for(e->scratch);
    onednn::execute(e->prim, onednn::thread_stream(),
                    {{DNNL_ARG_SRC, &data}, {DNNL_ARG_DST, &data}, {DNNL_ARG_SCRATCHPAD, &scratch}});
    onednn::thread_stream().wait();
  } catch (const dnnl::error& err) {
    throw ShimError(std::string("oneDNN eltwise: ") + err.what());
  }
  return true;
}

}  // namespace aotrun::shim::kernels
