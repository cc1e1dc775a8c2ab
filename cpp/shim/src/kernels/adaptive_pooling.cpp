// aoti_torch_cpu__adaptive_avg_pool2d / _3d and
// aoti_torch_cpu_adaptive_max_pool2d / _3d (since aotrun-shim 1.7): Inductor
// lowers an adaptive pool itself only when the windows divide evenly and
// are small; the others (and every 3-d one) come here. Output index o of a
// dim of `in` elements pooled to `out` reads [floor(o * in / out),
// ceil((o + 1) * in / out)): windows may overlap, and an output larger than
// the input repeats elements. An output size of 0 gives an empty result.
//  - avg: the window's sum over its depth, then height, then width, divided
//    by its depth, height and width in turn, as libtorch's kernels. The 2-d
//    op sums in float for bfloat16 and float16; libtorch's 3-d kernel sums
//    and divides in the input's dtype, each step rounded to it (bfloat16
//    sums stop growing at 256 once the terms are below 1), and so does this
//    one, to return libtorch's numbers.
//  - max: libtorch's step (a NaN or a greater value takes over), int64
//    indices into the input's plane (d * H * W + h * W + w).
// float32, float64, bfloat16 and float16, as libtorch's CPU kernels. The
// 2-d results are channels-last for channels-last inputs; the 3-d ones are
// contiguous for any input, as libtorch's.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "pooling_window.hpp"

namespace aotrun::shim::kernels {
namespace {

using pooling::Geometry;

using pooling::Span;

// Each pooled dim's windows: [floor(o * in / out), ceil((o + 1) * in / out)).
pooling::Spans adaptive_spans(const Geometry& g) {
  pooling::Spans sp;
  for (int i = 0; i < 3; ++i) {
    const int64_t out = g.out[i], in = g.in[i];
    sp.dim[i].resize(out);
    for (int64_t o = 0; o < out; ++o) sp.dim[i][o] = {o * in / out, ((o + 1) * in + out - 1) / out};
  }
  return sp;
}

std::vector<int64_t> read_output_size(int dims, IntList output_size, const char* op) {
  if (output_size.len != dims) {
    fail_arg(op, "output_size",
             "must have " + std::to_string(dims) + " values, got " + std::to_string(output_size.len));
  }
  if (output_size.data == nullptr) fail_arg(op, "output_size", "is null");
  std::vector<int64_t> out(output_size.data, output_size.data + dims);
  for (int i = 0; i < dims; ++i) {
    if (out[i] < 0) fail_arg(op, "output_size", "must be non-negative, got " + std::to_string(out[i]));
    // o * in must not overflow: no output dim is ever larger than this.
    if (out[i] > (int64_t{1} << 31)) fail_arg(op, "output_size", "is too large: " + std::to_string(out[i]));
  }
  return out;
}

// Planes pooled together, interleaved (1: each on its own): up to 16 when
// the planes are small (a few thousand elements, as adaptive pools' inputs
// mostly are) and there are several.
int64_t group_size(const Geometry& g) {
  if (g.in_plane() > (int64_t{1} << 14)) return 1;
  return std::min<int64_t>(16, g.n * g.c);
}

// Rounds a float to S and back (identity for float and double).
template <typename S, typename K>
inline K rounded(K v) {
  if constexpr (std::is_same_v<S, K>) {
    return v;
  } else {
    return Elem<S>::key(Elem<S>::from(v));
  }
}

// kStorageSums: every sum and quotient rounded to S (libtorch's 3-d kernel).
template <typename S, bool kStorageSums>
void avg_run(const S* x, const Geometry& g, S* y) {
  using K = typename Elem<S>::Key;
  const pooling::Spans sp = adaptive_spans(g);
  const std::vector<Span>&sd = sp.dim[0], &sh = sp.dim[1], &sw = sp.dim[2];
  auto add = [](K acc, K v) { return kStorageSums ? rounded<S>(acc + v) : acc + v; };
  // sum / kd / kh / kw, as libtorch divides.
  auto mean = [](K sum, const Span& a, const Span& b, const Span& c) {
    K r = sum;
    for (int64_t len : {a.hi - a.lo, b.hi - b.lo, c.hi - c.lo}) {
      r = kStorageSums ? rounded<S>(r / rounded<S>(static_cast<K>(len))) : r / static_cast<K>(len);
    }
    return r;
  };
  // libtorch's channels-last kernel (2-d, channels-last results) divides
  // the channels of its whole vectors by the window's size at once, the
  // rest by its height and width in turn: the first `whole` channels.
  const int64_t lanes = (int4pack_capability() == Int4PackCapability::kAvx512 ? 64 : 32) / int64_t{sizeof(K)};
  const int64_t whole = !kStorageSums && g.out_c == 1 && g.c > 1 ? g.c - g.c % lanes : 0;
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2];
  // A window's elements, at most (the windows of an output index overlap by one at most).
  const int64_t work = (g.in[0] / std::max<int64_t>(g.out[0], 1) + 2) * (H / std::max<int64_t>(g.out[1], 1) + 2) *
                       (W / std::max<int64_t>(OW, 1) + 2);
  if (pooling::channel_vectors(g)) {
    const int64_t C = g.c;
    pooling::walk_channel_vectors<K>(
        x, g, sp, OW * work * C, false,
        [&](int64_t, int64_t, int64_t, K* acc, int64_t*) { std::fill(acc, acc + OW * C, K(0)); },
        [&](K* acc, int64_t*, const S* p, int64_t) {
          if constexpr (kStorageSums) {
            for (int64_t c = 0; c < C; ++c) acc[c] = add(acc[c], Elem<S>::key(p[c]));
          } else {
            pooling::add_vector(acc, p, C);
          }
        },
        [&](int64_t n, int64_t od, int64_t oh, const K* acc, const int64_t*) {
          const Span &a = sd[od], &b = sh[oh];
          pooling::store_vectors(y + n * g.out_n + od * g.out_s[0] + oh * g.out_s[1], OW, C, g.out_s[2], g.out_c, acc,
                                 [&](int64_t ow, int64_t c, K v) {
                                   return Elem<S>::from(c < whole
                                                            ? v / static_cast<K>(a.size() * b.size() * sw[ow].size())
                                                            : mean(v, a, b, sw[ow]));
                                 });
        });
    return;
  }
  if (const int64_t P = group_size(g); P > 1) {
    // Small planes: P of them interleaved (pooling_window.hpp's
    // padded_planes, no padding), each window position one run of P lanes.
    const int64_t planes = g.n * g.c, vol = g.in_plane();
    const pooling::PlaneGroup pg{H, W, H * W, P};
    pooling::run_tasks(planes * g.out_rows() * OW * work >= pooling::kSplitWork, (planes + P - 1) / P, [&](int64_t t) {
      const int64_t first = t * P, count = std::min(P, planes - first);
      thread_local Scratch pad_buf, acc_buf;
      K* pad = pad_buf.room<K>(vol * P);
      K* acc = acc_buf.room<K>(P);
      pooling::padded_planes(x, g, pg, first, count, 0, 0, K(0), pad);
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Span &a = sd[od], &b = sh[oh], &cw = sw[ow];
            std::fill(acc, acc + P, K(0));
            for (int64_t id = a.lo; id < a.hi; ++id)
              for (int64_t ih = b.lo; ih < b.hi; ++ih)
                for (int64_t iw = cw.lo; iw < cw.hi; ++iw) {
                  const K* p = pad + ((id * H + ih) * W + iw) * P;
                  if constexpr (kStorageSums) {
                    for (int64_t j = 0; j < P; ++j) acc[j] = add(acc[j], p[j]);
                  } else {
                    pooling::add_run(acc, p, P);
                  }
                }
            for (int64_t j = 0; j < count; ++j) {
              const int64_t n = (first + j) / g.c, c = (first + j) % g.c;
              y[n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1] + ow * g.out_s[2]] =
                  Elem<S>::from(mean(acc[j], a, b, cw));
            }
          }
    });
    return;
  }
  pooling::for_each_plane_row(x, g, OW * work, [&](const K* plane, int64_t n, int64_t c, int64_t od, int64_t oh) {
    thread_local Scratch acc_buf;
    K* acc = acc_buf.room<K>(OW);
    const Span &a = sd[od], &b = sh[oh];
    std::fill(acc, acc + OW, K(0));
    for (int64_t id = a.lo; id < a.hi; ++id)
      for (int64_t ih = b.lo; ih < b.hi; ++ih) {
        const K* row = plane + (id * H + ih) * W;
        for (int64_t ow = 0; ow < OW; ++ow) {
          K s = acc[ow];
          for (int64_t iw = sw[ow].lo; iw < sw[ow].hi; ++iw) s = add(s, row[iw]);
          acc[ow] = s;
        }
      }
    S* yrow = y + n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1];
    for (int64_t ow = 0; ow < OW; ++ow) yrow[ow * g.out_s[2]] = Elem<S>::from(mean(acc[ow], a, b, sw[ow]));
  });
}

template <typename S>
void max_run(const S* x, const Geometry& g, S* y, int64_t* yi) {
  using K = typename Elem<S>::Key;
  const pooling::Spans sp = adaptive_spans(g);
  const std::vector<Span>&sd = sp.dim[0], &sh = sp.dim[1], &sw = sp.dim[2];
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2];
  const int64_t work = (g.in[0] / std::max<int64_t>(g.out[0], 1) + 2) * (H / std::max<int64_t>(g.out[1], 1) + 2) *
                       (W / std::max<int64_t>(OW, 1) + 2);
  const K low = pooling::lowest<K>();
  if (pooling::channel_vectors(g)) {
    pooling::max_channel_vectors(x, g, sp, OW * work * g.c, y, yi);
    return;
  }
  if (const int64_t P = group_size(g); P > 1) {
    // Small planes interleaved, as in avg_run.
    const int64_t planes = g.n * g.c, vol = g.in_plane();
    const pooling::PlaneGroup pg{H, W, H * W, P};
    pooling::run_tasks(planes * g.out_rows() * OW * work >= pooling::kSplitWork, (planes + P - 1) / P, [&](int64_t t) {
      const int64_t first = t * P, count = std::min(P, planes - first);
      thread_local Scratch pad_buf, val_buf, idx_buf;
      K* pad = pad_buf.room<K>(vol * P);
      K* m = val_buf.room<K>(P);
      int64_t* ix = idx_buf.room<int64_t>(P);
      pooling::padded_planes(x, g, pg, first, count, 0, 0, low, pad);
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Span &a = sd[od], &b = sh[oh], &cw = sw[ow];
            std::fill(m, m + P, low);
            std::fill(ix, ix + P, (a.lo * H + b.lo) * W + cw.lo);
            for (int64_t id = a.lo; id < a.hi; ++id)
              for (int64_t ih = b.lo; ih < b.hi; ++ih)
                for (int64_t iw = cw.lo; iw < cw.hi; ++iw) {
                  const int64_t flat = (id * H + ih) * W + iw;
                  pooling::max_run_at(m, ix, pad + flat * P, P, flat);
                }
            for (int64_t j = 0; j < count; ++j) {
              const int64_t n = (first + j) / g.c, c = (first + j) % g.c;
              const int64_t o = n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1] + ow * g.out_s[2];
              y[o] = Elem<S>::from(m[j]);
              yi[o] = ix[j];
            }
          }
    });
    return;
  }
  pooling::for_each_plane_row(x, g, OW * work, [&](const K* plane, int64_t n, int64_t c, int64_t od, int64_t oh) {
    thread_local Scratch val_buf, idx_buf;
    K* m = val_buf.room<K>(OW);
    int64_t* ix = idx_buf.room<int64_t>(OW);
    const Span &a = sd[od], &b = sh[oh];
    for (int64_t ow = 0; ow < OW; ++ow) {
      m[ow] = low;
      ix[ow] = (a.lo * H + b.lo) * W + sw[ow].lo;
    }
    for (int64_t id = a.lo; id < a.hi; ++id)
      for (int64_t ih = b.lo; ih < b.hi; ++ih) {
        const int64_t base = (id * H + ih) * W;
        const K* row = plane + base;
        for (int64_t ow = 0; ow < OW; ++ow) {
          K best = m[ow];
          int64_t at = ix[ow];
          for (int64_t iw = sw[ow].lo; iw < sw[ow].hi; ++iw) {
            if (pooling::takes_over(row[iw], best)) {
              best = row[iw];
              at = base + iw;
            }
          }
          m[ow] = best;
          ix[ow] = at;
        }
      }
    const int64_t yoff = n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1];
    for (int64_t ow = 0; ow < OW; ++ow) {
      y[yoff + ow * g.out_s[2]] = Elem<S>::from(m[ow]);
      yi[yoff + ow * g.out_s[2]] = ix[ow];
    }
  });
}

template <typename F>
void dispatch_floating(int32_t dtype, F&& f) {
  switch (dtype) {
    case kFloat32: f(float{}); break;
    case kFloat64: f(double{}); break;
    case kBFloat16: f(BF16{}); break;
    default: f(F16{}); break;
  }
}

}  // namespace

Tensor adaptive_avg_pool(const Tensor& self, int dims, IntList output_size, const char* op) {
  // libtorch's 2-d op requires only the pooled dims to be non-empty.
  expect_cpu_defined(self, op, "self");
  pooling::check_input(self, dims, dims == 2 ? std::max<int64_t>(self.dim() - 2, 0) : 1, op);
  pooling::check_dtype(self, {kFloat32, kFloat64, kBFloat16, kFloat16}, op);
  const std::vector<int64_t> out = read_output_size(dims, output_size, op);
  Geometry g = pooling::geometry(self, dims, out.data());
  Tensor y = pooling::allocate(self, dims, g, dims == 2, self.dtype);
  if (y.numel() == 0) return y;
  const void* x = self.data();
  void* yp = y.data();
  dispatch_floating(self.dtype, [&](auto tag) {
    using S = decltype(tag);
    if (dims == 3) {
      avg_run<S, true>(static_cast<const S*>(x), g, static_cast<S*>(yp));
    } else {
      avg_run<S, false>(static_cast<const S*>(x), g, static_cast<S*>(yp));
    }
  });
  return y;
}

void adaptive_max_pool(const Tensor& self, int dims, IntList output_size, Tensor* values, Tensor* indices,
                       const char* op) {
  pooling::check_input(self, dims, 1, op);
  pooling::check_dtype(self, {kFloat32, kFloat64, kBFloat16, kFloat16}, op);
  const std::vector<int64_t> out = read_output_size(dims, output_size, op);
  Geometry g = pooling::geometry(self, dims, out.data());
  *values = pooling::allocate(self, dims, g, dims == 2, self.dtype);
  *indices = pooling::allocate_like(*values, kInt64);
  if (values->numel() == 0) return;
  const void* x = self.data();
  void* yp = values->data();
  int64_t* ip = static_cast<int64_t*>(indices->data());
  dispatch_floating(self.dtype, [&](auto tag) {
    using S = decltype(tag);
    max_run<S>(static_cast<const S*>(x), g, static_cast<S*>(yp), ip);
  });
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                              int64_t output_size_len_, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::adaptive_avg_pool(s, 2, kernels::IntList{output_size, output_size_len_}, __func__));
  });
}

extern "C" AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                              int64_t output_size_len_, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::adaptive_avg_pool(s, 3, kernels::IntList{output_size, output_size_len_}, __func__));
  });
}

namespace {

AOTITorchError adaptive_max_entry(const char* fn, int dims, AtenTensorHandle self, const int64_t* output_size,
                                  int64_t output_size_len, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(fn, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::adaptive_max_pool(s, dims, kernels::IntList{output_size, output_size_len}, &values, &indices, fn);
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                             int64_t output_size_len_, AtenTensorHandle* ret0,
                                                             AtenTensorHandle* ret1) {
  return adaptive_max_entry(__func__, 2, self, output_size, output_size_len_, ret0, ret1);
}

extern "C" AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                             int64_t output_size_len_, AtenTensorHandle* ret0,
                                                             AtenTensorHandle* ret1) {
  return adaptive_max_entry(__func__, 3, self, output_size, output_size_len_, ret0, ret1);
}
