// Float32 forward convolution on oneDNN: the input and output are passed in
// their own layouts (contiguous or channels-last, as the model allocated
// them: no copies), the weight is reordered into the layout the chosen
// implementation wants on each call (Inductor hands it over as an
// intermediate it rewrote, so it cannot be kept packed across calls) unless
// it is a frozen constant (read-only storage: mkldnn_blob.hpp), which is
// read in place when the export packed it in the layout the primitive
// wants, else reordered once into a copy kept with it, and
// the bias and a fused op's activation and residual sum (post-ops) are
// applied by the primitive. One primitive per geometry, post-ops and
// OpenMP team size, cached; each takes the calling thread's scratchpad
// (onednn.hpp says why).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "mkldnn_blob.hpp"
#include "compute/eltwise_onednn.hpp"
#include "compute/onednn.hpp"
#include "compute/scratch.hpp"

namespace aotrun::shim::kernels {
namespace {

using dnnl::memory;

struct ConvPrimitive {
  bool implemented = false;  // false: oneDNN has nothing for this geometry
  std::optional<dnnl::convolution_forward> conv;
  std::optional<dnnl::reorder> weight_reorder;  // the caller's weight layout -> the primitive's
  memory::desc src, weight_user, weight, bias, dst;
  memory::desc conv_scratch, reorder_scratch;
};

onednn::PrimitiveCache<ConvPrimitive>& cache() {
  static auto* c = new onednn::PrimitiveCache<ConvPrimitive>(1024);
  return *c;
}

void append(std::vector<int64_t>& key, const std::vector<int64_t>& v) {
  key.push_back(static_cast<int64_t>(v.size()));
  key.insert(key.end(), v.begin(), v.end());
}

// The fields that identify a oneDNN 2.6 memory layout, as a key.
void append_desc(std::vector<int64_t>& key, const memory::desc& d) {
  const dnnl_memory_desc_t& m = d.data;
  key.push_back(m.ndims);
  key.push_back(m.data_type);
  key.push_back(m.format_kind);
  key.push_back(m.offset0);
  for (int i = 0; i < m.ndims; ++i) {
    key.push_back(m.dims[i]);
    key.push_back(m.padded_dims[i]);
    key.push_back(m.padded_offsets[i]);
  }
  if (m.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = m.format_desc.blocking;
    for (int i = 0; i < m.ndims; ++i) key.push_back(b.strides[i]);
    key.push_back(b.inner_nblks);
    for (int i = 0; i < b.inner_nblks; ++i) {
      key.push_back(b.inner_blks[i]);
      key.push_back(b.inner_idxs[i]);
    }
  }
  key.push_back(static_cast<int64_t>(m.extra.flags));
}

// A frozen weight in the primitive's layout: reordered once per layout and
// kept with the weight's storage. Not zero-filled first: a oneDNN reorder
// writes the whole destination, the padding of blocked layouts included
// (the shim and pt2 suites and the real tier's convolution nets gave the
// same results with the buffer filled with NaNs before the reorder).
struct PackedWeight {
  std::unique_ptr<float[]> data;
};

// The weight [O, C/g, k...] with these strides viewed as [g, O/g, C/g, k...]
// for groups > 1.
void grouped(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t groups,
             std::vector<int64_t>* gsizes, std::vector<int64_t>* gstrides) {
  *gsizes = sizes;
  *gstrides = strides;
  if (groups == 1) return;
  gsizes->front() = sizes[0] / groups;
  gsizes->insert(gsizes->begin(), groups);
  gstrides->insert(gstrides->begin(), strides[0] * (sizes[0] / groups));
}

// t's strides, with those of its size-1 dims (which address nothing) set as
// a dense layout in `order` would have them when the other dims agree with
// it: oneDNN's fast paths recognise a layout by all of its strides, and
// PyTorch leaves size-1 dims' strides as they fall (a [N, C, 1, 1] channels-
// last tensor reads as contiguous otherwise, and mixed layouts get oneDNN's
// reference implementation).
std::vector<int64_t> strides_as(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& order) {
  const std::vector<int64_t> dense = strides_in_order(sizes, order);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && dense[d] != strides[d]) return strides;
  }
  return dense;
}

// The post-ops for `post` (sum into dst, then the activation), or false
// when oneDNN 2.6 has no eltwise for that activation. Each is the same
// function as pointwise_fusion.cpp's (hardsigmoid as clip(x/6 + 1/2, 0, 1));
// the transcendental ones are eltwise_onednn.hpp's algorithms.
bool post_ops_of(const ConvEpilogue& post, dnnl::post_ops* po) {
  if (post.accumulate != nullptr) po->append_sum(1.0f);
  using alg = dnnl::algorithm;
  const Unary& u = post.unary;
  switch (u.kind) {
    case Unary::kNone: return true;
    case Unary::kRelu: po->append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f); return true;
    case Unary::kLeakyRelu: po->append_eltwise(1.0f, alg::eltwise_relu, u.a, 0.0f); return true;
    case Unary::kHardtanh: po->append_eltwise(1.0f, alg::eltwise_clip_v2, u.a, u.b); return true;
    case Unary::kHardswish: po->append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f); return true;
    case Unary::kHardsigmoid:
      po->append_eltwise(1.0f, alg::eltwise_linear, 1.0f / 6.0f, 0.5f);
      po->append_eltwise(1.0f, alg::eltwise_clip_v2, 0.0f, 1.0f);
      return true;
    default: {
      alg a;
      float alpha;
      if (!eltwise_algorithm(u, &a, &alpha)) return false;
      po->append_eltwise(1.0f, a, alpha, 0.0f);
      return true;
    }
  }
}

std::shared_ptr<ConvPrimitive> build(const Tensor& x, const Tensor& w, bool has_bias, const ConvParams& p,
                                     const Tensor& y, const ConvEpilogue* post) {
  auto e = std::make_shared<ConvPrimitive>();
  // The layout the output was given (channels-last or contiguous) is the
  // one the input and weight are read as where their strides allow.
  std::vector<int64_t> order = {0, 1};
  for (int64_t d = 2; d < y.dim(); ++d) order.push_back(d);
  if (y.dim() > 2 && y.strides[1] == 1 && y.sizes[1] > 1) {
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  std::vector<int64_t> ws, wst;
  grouped(w.sizes, strides_as(w.sizes, w.strides, order), p.groups, &ws, &wst);
  e->src = onednn::f32_desc(x.sizes, strides_as(x.sizes, x.strides, order));
  e->dst = onednn::f32_desc(y.sizes, strides_as(y.sizes, y.strides, order));
  e->weight_user = onednn::f32_desc(ws, wst);
  const memory::desc weight_any(memory::dims(ws.begin(), ws.end()), memory::data_type::f32, memory::format_tag::any);
  e->bias = memory::desc({w.sizes[0]}, memory::data_type::f32, memory::format_tag::a);
  memory::dims strides(p.stride.begin(), p.stride.end()), pad(p.padding.begin(), p.padding.end()), dil;
  for (int64_t d : p.dilation) dil.push_back(d - 1);  // oneDNN counts the gaps
  try {
    using fwd = dnnl::convolution_forward;
    const fwd::desc desc = has_bias ? fwd::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                e->src, weight_any, e->bias, e->dst, strides, dil, pad, pad)
                                    : fwd::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                e->src, weight_any, e->dst, strides, dil, pad, pad);
    const dnnl::primitive_attr attr = onednn::user_scratchpad();
    dnnl::primitive_attr conv_attr = onednn::user_scratchpad();
    if (post != nullptr) {
      dnnl::post_ops po;
      if (!post_ops_of(*post, &po)) return e;
      conv_attr.set_post_ops(po);
    }
    const fwd::primitive_desc pd(desc, conv_attr, onednn::cpu_engine());
    e->weight = pd.weights_desc();
    e->conv_scratch = pd.scratchpad_desc();
    e->conv.emplace(pd);
    if (e->weight != e->weight_user) {
      const dnnl::reorder::primitive_desc rpd(onednn::cpu_engine(), e->weight_user, onednn::cpu_engine(), e->weight,
                                              attr);
      e->reorder_scratch = rpd.scratchpad_desc();
      e->weight_reorder.emplace(rpd);
    }
    e->implemented = true;
  } catch (const dnnl::error& err) {
    if (err.status != dnnl_unimplemented) throw ShimError(std::string("oneDNN: ") + err.what());
  }
  return e;
}

// This thread's memory objects for one primitive's source, destination,
// bias and scratchpad, made on its first call on this thread and pointed at
// each call's buffers (set_data_handle): making and freeing a dnnl::memory
// costs about 300 ns (aligned allocations inside oneDNN), pointing one at
// a plain layout 5-25 ns. The weight's memory is still made per call: kept
// and re-pointed, the frozen (blocked) weights made frozen MobileNetV3 3%
// slower than a new one per call (docs/PERFORMANCE.md section 34).
struct ThreadArgs {
  std::weak_ptr<const ConvPrimitive> owner;  // expired: made for a primitive since freed
  memory src, dst, bias, scratch;
};

ThreadArgs& thread_args(const std::shared_ptr<ConvPrimitive>& e) {
  constexpr size_t kMaxEntries = 2048;  // twice the primitive cache's capacity
  thread_local std::unordered_map<const ConvPrimitive*, ThreadArgs> by_primitive;
  if (by_primitive.size() >= kMaxEntries) {
    for (auto it = by_primitive.begin(); it != by_primitive.end();) {
      it = it->second.owner.expired() ? by_primitive.erase(it) : std::next(it);
    }
    if (by_primitive.size() >= kMaxEntries) by_primitive.clear();
  }
  ThreadArgs& a = by_primitive[e.get()];
  if (a.owner.expired()) {
    const dnnl::engine& eng = onednn::cpu_engine();
    a.src = memory(e->src, eng, nullptr);
    a.dst = memory(e->dst, eng, nullptr);
    a.bias = memory(e->bias, eng, nullptr);
    a.scratch = memory(e->conv_scratch, eng, nullptr);
    a.owner = e;
  }
  return a;
}

}  // namespace

bool convolution_onednn(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                        const Tensor& out, const ConvEpilogue* post) {
  if (post != nullptr && post->accumulate == nullptr && post->unary.kind == Unary::kNone) post = nullptr;
  // Inputs in a layout oneDNN's fast paths do not read (overlapping or
  // gapped views) are made contiguous first.
  Tensor x = input;
  if (!x.is_non_overlapping_and_dense()) {
    x = empty_contiguous(input.sizes, kFloat32);
    copy_elements(x, input);
  }
  Tensor b;
  if (bias != nullptr) {
    b = *bias;
    if (b.dtype != kFloat32 || b.strides[0] != 1) {
      b = empty_contiguous(bias->sizes, kFloat32);
      copy_elements(b, *bias);
    }
  }
  // This thread's key, its capacity kept from call to call (no allocation
  // on a hit; the cache copies it on a miss).
  thread_local onednn::Key key;
  key.v.clear();
  key.v.insert(key.v.end(), {onednn::team_size(), p.groups, bias != nullptr ? 1 : 0});
  const std::vector<int64_t>* parts[] = {&x.sizes,     &x.strides, &weight.sizes, &weight.strides,
                                         &out.strides, &p.stride,  &p.padding,    &p.dilation};
  for (const std::vector<int64_t>* v : parts) append(key.v, *v);
  if (post != nullptr) {
    const Unary& u = post->unary;
    float ab[2] = {u.a, u.b};
    int64_t bits;
    std::memcpy(&bits, ab, sizeof bits);
    key.v.insert(key.v.end(), {post->accumulate != nullptr ? 1 : 0, static_cast<int64_t>(u.kind), bits});
  }
  const std::shared_ptr<ConvPrimitive> e =
      cache().get(key, [&] { return build(x, weight, bias != nullptr, p, out, post); });
  if (!e->implemented) return false;
  try {
    const dnnl::engine& eng = onednn::cpu_engine();
    dnnl::stream& s = onednn::thread_stream();
    memory w;
    thread_local Scratch packed;  // this thread's reordered weight
    const void* blob = e->weight_reorder ? blob_in_layout(weight, e->weight) : nullptr;
    if (blob != nullptr) {  // the export packed it as this primitive wants it
      w = memory(e->weight, eng, const_cast<void*>(blob));
    } else if (e->weight_reorder && weight.storage->read_only()) {
      thread_local std::vector<int64_t> wkey;  // capacity kept, as `key`'s
      wkey.assign(1, weight.storage_offset);
      append_desc(wkey, e->weight_user);
      append_desc(wkey, e->weight);
      const auto kept = std::static_pointer_cast<PackedWeight>(weight.storage->derived(wkey, [&] {
        auto p = std::make_shared<PackedWeight>();
        p->data.reset(new float[(e->weight.get_size() + sizeof(float) - 1) / sizeof(float)]);
        const std::shared_ptr<const void> held = weight.read();  // no lasting plain copy of a frozen weight
        memory w_user(e->weight_user, eng, const_cast<void*>(held.get()));
        memory to(e->weight, eng, p->data.get());
        const memory scratch = onednn::scratchpad_for(e->reorder_scratch);
        onednn::execute(*e->weight_reorder, s,
                        {{DNNL_ARG_FROM, &w_user}, {DNNL_ARG_TO, &to}, {DNNL_ARG_SCRATCHPAD, &scratch}});
        s.wait();
        return std::shared_ptr<void>(p);
      }));
      w = memory(e->weight, eng, kept->data.get());
    } else if (e->weight_reorder) {
      w = memory(e->weight, eng, packed.room<unsigned char>(static_cast<int64_t>(e->weight.get_size())));
      memory w_user(e->weight_user, eng, weight.data());
      const memory scratch = onednn::scratchpad_for(e->reorder_scratch);
      onednn::execute(*e->weight_reorder, s,
                      {{DNNL_ARG_FROM, &w_user}, {DNNL_ARG_TO, &w}, {DNNL_ARG_SCRATCHPAD, &scratch}});
    } else {  // the primitive reads the weight as it is
      w = memory(e->weight_user, eng, weight.data());
    }
    ThreadArgs& a = thread_args(e);
    a.src.set_data_handle(x.data());
    a.dst.set_data_handle(out.data());
    a.scratch.set_data_handle(onednn::scratchpad_room(e->conv_scratch));
    if (bias != nullptr) a.bias.set_data_handle(b.data());
    onednn::execute(*e->conv, s,
                    {{DNNL_ARG_SRC, &a.src},
                     {DNNL_ARG_WEIGHTS, &w},
                     {DNNL_ARG_BIAS, bias != nullptr ? &a.bias : nullptr},
                     {DNNL_ARG_DST, &a.dst},
                     {DNNL_ARG_SCRATCHPAD, &a.scratch}});
    s.wait();
  } catch (const dnnl::error& err) {
    throw ShimError(std::string("oneDNN: ") + err.what());
  }
  return true;
}

}  // namespace aotrun::shim::kernels
