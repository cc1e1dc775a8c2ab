// aoti_torch_cpu_avg_pool2d / _avg_pool3d and
// aoti_torch_cpu_max_pool2d_with_indices / _max_pool3d_with_indices (since
// aotrun-shim 1.7): what Inductor calls for the pools it does not lower to
// its own loops (kernels of more than 25 elements: S3D's average pools,
// YOLO's 13 x 13 max pool). Windows of kernel_size elements (max: dilation
// apart) every stride, padding on each side, output sizes as libtorch's
// pooling_output_shape (ceil_mode rounds up, but a last window must start
// inside the input or its left padding).
//  - avg: a window clipped to the padded input counts its padding when
//    count_include_pad, else only its elements; divisor_override replaces
//    either; sums in the compute type (float for bfloat16 and float16,
//    int64 divided as C++ divides for int64), in libtorch's order.
//  - max: libtorch's step (a NaN or a greater value takes over: the first
//    of equal maxima, the last NaN); int64 indices into the input's plane
//    (d * H * W + h * W + w); a window with no element in the input (wide
//    dilations) gives the lowest value and its first position's index, as
//    libtorch's (its channels-last-3d kernel leaves out the depth there:
//    not followed, docs/SHIM.md).
// Three walks (pooling_window.hpp): channel vectors for channels-last
// inputs; for stride 1 in height and width, planes padded once and read in
// long runs (the common fallbacks: S3D's 3 x 3 x 3, YOLO's 13 x 13); else
// output row by output row.
// dtypes and layouts as libtorch 2.15's CPU kernels: avg_pool2d float32,
// float64, bfloat16, float16 and int64; avg_pool3d float32, float64 and
// int64 (libtorch has no 16-bit kernel for it); max pooling every real
// dtype but bool and uint16-64. Results are channels-last for
// channels-last inputs, but avg_pool3d's, which libtorch returns contiguous.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "pooling_window.hpp"

namespace aotrun::shim::kernels {
namespace {

using pooling::Geometry;

// The window's parameters per pooled dim, padded to three (2-d: depth 1).
struct Window {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
};

std::string list_str(IntList l) {
  std::string s = "[";
  for (int64_t i = 0; i < l.len && l.data != nullptr; ++i) s += (i ? ", " : "") + std::to_string(l.data[i]);
  return s + "]";
}

// One value per pooled dim (into[3 - dims...]) from a list of 1 or `dims`.
void read_list(IntList l, int dims, const char* op, const char* arg, bool may_be_empty, int64_t* into) {
  if (l.len != 1 && l.len != dims) {
    fail_arg(op, arg,
             std::string("must have ") + (may_be_empty ? "0, " : "") + "1 or " + std::to_string(dims) +
                 " values, got " + std::to_string(l.len));
  }
  if (l.data == nullptr) fail_arg(op, arg, "is null with length " + std::to_string(l.len));
  for (int i = 0; i < dims; ++i) into[3 - dims + i] = l.data[l.len == 1 ? 0 : i];
}

Window read_window(int dims, IntList kernel, IntList stride, IntList padding, const IntList* dilation, const char* op) {
  Window w;
  read_list(kernel, dims, op, "kernel_size", false, w.k);
  if (stride.len == 0) {
    std::copy(w.k, w.k + 3, w.s);
  } else {
    read_list(stride, dims, op, "stride", true, w.s);
  }
  read_list(padding, dims, op, "padding", false, w.p);
  if (dilation != nullptr) read_list(*dilation, dims, op, "dilation", false, w.dil);
  for (int i = 3 - dims; i < 3; ++i) {
    // Beyond int32 no window means anything, and sums of them could overflow.
    const int64_t limit = INT32_MAX;
    if (w.k[i] > limit) fail_arg(op, "kernel_size", "is too large: " + list_str(kernel));
    if (w.s[i] > limit) fail_arg(op, "stride", "is too large: " + list_str(stride));
    if (w.p[i] > limit) fail_arg(op, "padding", "is too large: " + list_str(padding));
    if (w.dil[i] > limit) fail_arg(op, "dilation", "is too large: " + list_str(*dilation));
    if (w.k[i] <= 0) fail_arg(op, "kernel_size", "must be positive, got " + list_str(kernel));
    if (w.s[i] <= 0) fail_arg(op, "stride", "must be positive, got " + list_str(stride));
    if (w.dil[i] <= 0) fail_arg(op, "dilation", "must be positive, got " + list_str(*dilation));
    if (w.p[i] < 0) fail_arg(op, "padding", "must be non-negative, got " + list_str(padding));
    // libtorch checks both halves, of the kernel and of the dilated kernel;
    // the dilated one is never the smaller.
    if (w.p[i] > w.k[i] / 2) {
      fail_arg(
          op, "padding",
          "must be at most half of kernel_size, got " + list_str(padding) + " for kernel_size " + list_str(kernel));
    }
  }
  return w;
}

// libtorch's pooling_output_shape: floor (or, ceil_mode, ceiling) division,
// a last window that would start in the right padding dropped.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t dil, bool ceil_mode) {
  const int64_t span = in + 2 * p - dil * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t o = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

// The output sizes of self's pooled dims (checked at least 1).
std::vector<int64_t> output_sizes(const Tensor& self, int dims, const Window& w, bool ceil_mode, const char* op) {
  std::vector<int64_t> out(dims);
  const int64_t first = self.dim() - dims;
  bool empty = false;
  for (int i = 0; i < dims; ++i) {
    const int k = 3 - dims + i;
    out[i] = pooled_size(self.sizes[first + i], w.k[k], w.s[k], w.p[k], w.dil[k], ceil_mode);
    empty = empty || out[i] < 1;
  }
  if (empty) {
    std::string in = "[", o = "[";
    for (int i = 0; i < dims; ++i) {
      in += (i ? ", " : "") + std::to_string(self.sizes[first + i]);
      o += (i ? ", " : "") + std::to_string(out[i]);
    }
    fail_arg(op, "self", "is too small: its pooled dims " + in + "] would give an output of " + o + "]");
  }
  return out;
}

using pooling::Span;

// One output index's window along one dim. avg: [lo, hi) clipped to the
// input, `padded` its length clipped to input + padding. max: the positions
// lo, lo + dil, ... below hi (lo the first at or past 0).
std::vector<Span> avg_spans(int64_t out, int64_t in, int64_t k, int64_t s, int64_t p) {
  std::vector<Span> v(out);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lo = o * s - p, hi = std::min(lo + k, in + p);
    v[o] = {std::max<int64_t>(lo, 0), std::min(hi, in), hi - lo};
  }
  return v;
}

std::vector<Span> max_spans(int64_t out, int64_t in, int64_t k, int64_t s, int64_t p, int64_t dil) {
  std::vector<Span> v(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t lo = o * s - p;
    const int64_t hi = std::min(lo + (k - 1) * dil + 1, in);
    if (lo < 0) lo += (-lo + dil - 1) / dil * dil;
    v[o] = {lo, hi, 0};
  }
  return v;
}

// Elements one window visits at most (for the choice to split the work).
int64_t window_work(const Geometry& g, const Window& w) {
  int64_t v = 1;
  for (int i = 0; i < 3; ++i) v *= std::min(w.k[i], g.in[i]);
  return v;
}

// The planar kernels' padded-plane path: stride 1 in height and width,
// padding small beside the plane (the path walks the padded plane once per
// kernel offset), every offset into the padded planes an int32.
bool flat_fits(const Geometry& g, const Window& w, const pooling::PlaneGroup& pg) {
  return w.s[1] == 1 && w.s[2] == 1 && pg.slice <= 4 * g.in[1] * g.in[2] + 1024 &&
         g.in[0] * pg.slice * pg.group < (int64_t{1} << 31);
}

// The kernel columns kw that some output column reads inside the input
// ([first, first + cols.size())) and, for each, those output columns
// (computed once per call: the divisions are not cheap).
struct KernelColumns {
  int64_t first;
  std::vector<pooling::Columns> cols;
};
KernelColumns column_ranges(int64_t k, int64_t dil, int64_t pad, int64_t stride, int64_t width, int64_t out_width) {
  const pooling::Columns reach = pooling::kernel_columns(k, dil, pad, stride, width, out_width);
  KernelColumns kc{reach.lo, {}};
  for (int64_t kw = reach.lo; kw < reach.hi; ++kw) {
    kc.cols.push_back(pooling::columns(kw * dil - pad, stride, width, out_width));
  }
  return kc;
}

template <typename S>
void avg_run(const S* x, const Geometry& g, const Window& w, bool include_pad, const int64_t* divisor, S* y) {
  using K = typename Elem<S>::Key;
  pooling::Spans sp;
  for (int i = 0; i < 3; ++i) sp.dim[i] = avg_spans(g.out[i], g.in[i], w.k[i], w.s[i], w.p[i]);
  const std::vector<Span>&sd = sp.dim[0], &sh = sp.dim[1], &sw = sp.dim[2];
  const int64_t OW = g.out[2], kvol = window_work(g, w);
  // Each output position's divisor in the compute type, as libtorch
  // divides (int64: integer division); 1 for a window with no element,
  // whose sum (0) libtorch writes as 0.
  std::vector<K> divs(g.out[0] * g.out[1] * OW);
  for (int64_t od = 0, o = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow, ++o) {
        const Span &a = sd[od], &b = sh[oh], &c = sw[ow];
        int64_t f = 1;
        if (!a.empty() && !b.empty() && !c.empty()) {
          f = divisor != nullptr ? *divisor
              : include_pad      ? a.padded * b.padded * c.padded
                                 : (a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo);
        }
        divs[o] = static_cast<K>(f);
      }
  auto factor = [&](int64_t od, int64_t oh, int64_t ow) { return divs[(od * g.out[1] + oh) * OW + ow]; };
  const S zero = Elem<S>::from(K(0));
  if (pooling::channel_vectors(g)) {
    const int64_t C = g.c;
    pooling::walk_channel_vectors<K>(
        x, g, sp, OW * kvol * C, false,
        [&](int64_t, int64_t, int64_t, K* acc, int64_t*) { std::fill(acc, acc + OW * C, K(0)); },
        [&](K* acc, int64_t*, const S* p, int64_t) { pooling::add_vector(acc, p, C); },
        [&](int64_t n, int64_t od, int64_t oh, const K* acc, const int64_t*) {
          pooling::store_vectors(y + n * g.out_n + od * g.out_s[0] + oh * g.out_s[1], OW, C, g.out_s[2], g.out_c, acc,
                                 [&](int64_t ow, int64_t, K v) { return Elem<S>::from(v / factor(od, oh, ow)); });
        });
    return;
  }
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2], s2 = w.s[2];
  const int64_t OH = g.out[1], run = (OH - 1) * (W + 2 * w.p[2]) + OW;
  const pooling::PlaneGroup pg = pooling::plane_group(g, w.p[1], w.p[2], run);
  if (flat_fits(g, w, pg)) {
    // Stride 1 in height and width: the padded planes (zeros: a sum is
    // unchanged by them) read in runs over a depth slice of the outputs,
    // held with the padded row pitch (the last read of a run is the
    // slice's last element). Per output the same order of additions.
    const int64_t P = pg.group, Wp = pg.Wp, slice = pg.slice, planes = g.n * g.c;
    pooling::run_tasks(planes * g.out_rows() * OW * kvol >= pooling::kSplitWork, (planes + P - 1) / P, [&](int64_t t) {
      const int64_t first = t * P, count = std::min(P, planes - first);
      thread_local Scratch pad_buf, acc_buf;
      K* pad = pad_buf.room<K>(D * slice * P);
      K* acc = acc_buf.room<K>(run * P);
      pooling::padded_planes(x, g, pg, first, count, w.p[1], w.p[2], K(0), pad);
      for (int64_t od = 0; od < g.out[0]; ++od) {
        std::fill(acc, acc + run * P, K(0));
        for (int64_t id = sd[od].lo; id < sd[od].hi; ++id) {
          for (int64_t kh = 0; kh < w.k[1]; ++kh)
            for (int64_t kw = 0; kw < w.k[2]; ++kw) {
              pooling::add_run(acc, pad + (id * slice + kh * Wp + kw) * P, run * P);
            }
        }
        const K* dv = divs.data() + od * OH * OW;
        for (int64_t j = 0; j < count; ++j) {
          const int64_t n = (first + j) / g.c, c = (first + j) % g.c;
          S* yd = y + n * g.out_n + c * g.out_c + od * g.out_s[0];
          for (int64_t oh = 0; oh < OH; ++oh) {
            S* __restrict yr = yd + oh * g.out_s[1];
            const K* __restrict ar = acc + oh * Wp * P + j;
            const K* __restrict dr = dv + oh * OW;
            if (P == 1 && g.out_s[2] == 1) {
              for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = Elem<S>::from(ar[ow] / dr[ow]);
            } else {
              for (int64_t ow = 0; ow < OW; ++ow) yr[ow * g.out_s[2]] = Elem<S>::from(ar[ow * P] / dr[ow]);
            }
          }
        }
      }
    });
    return;
  }
  const KernelColumns kcols = column_ranges(w.k[2], 1, w.p[2], s2, W, OW);
  pooling::for_each_plane_row(x, g, OW * kvol, [&](const K* plane, int64_t n, int64_t c, int64_t od, int64_t oh) {
    thread_local Scratch acc_buf;
    K* acc = acc_buf.room<K>(OW);
    const Span &a = sd[od], &b = sh[oh];
    S* yrow = y + n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1];
    if (a.empty() || b.empty()) {
      for (int64_t ow = 0; ow < OW; ++ow) yrow[ow * g.out_s[2]] = zero;
      return;
    }
    std::fill(acc, acc + OW, K(0));
    // Row by row of the window, each kernel column added to every output
    // column that reads it: per output the same order as a window loop.
    for (int64_t id = a.lo; id < a.hi; ++id)
      for (int64_t ih = b.lo; ih < b.hi; ++ih) {
        const K* row = plane + (id * H + ih) * W;
        for (size_t i = 0; i < kcols.cols.size(); ++i) {
          const int64_t kw = kcols.first + static_cast<int64_t>(i);
          const pooling::Columns cols = kcols.cols[i];
          if (cols.hi <= cols.lo) continue;
          K* __restrict dst = acc + cols.lo;
          const K* __restrict src = row + cols.lo * s2 + kw - w.p[2];
          const int64_t count = cols.hi - cols.lo;
          for (int64_t j = 0; j < count; ++j) dst[j] += src[j * s2];
        }
      }
    for (int64_t ow = 0; ow < OW; ++ow) yrow[ow * g.out_s[2]] = Elem<S>::from(acc[ow] / factor(od, oh, ow));
  });
}

template <typename S>
void max_run(const S* x, const Geometry& g, const Window& w, S* y, int64_t* yi) {
  using K = typename Elem<S>::Key;
  pooling::Spans sp;
  for (int i = 0; i < 3; ++i) {
    sp.dim[i] = max_spans(g.out[i], g.in[i], w.k[i], w.s[i], w.p[i], w.dil[i]);
    sp.step[i] = w.dil[i];
  }
  const std::vector<Span>&sd = sp.dim[0], &sh = sp.dim[1], &sw = sp.dim[2];
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], kvol = window_work(g, w);
  const int64_t d0 = w.dil[0], d1 = w.dil[1], d2 = w.dil[2];
  const K low = pooling::lowest<K>();
  if (pooling::channel_vectors(g)) {
    pooling::max_channel_vectors(x, g, sp, OW * kvol * g.c, y, yi);
    return;
  }
  const int64_t s2 = w.s[2], D = g.in[0];
  // libtorch's index of a window none of whose elements takes over.
  auto first_index = [&](const Span& a, const Span& b, const Span& cw) { return (a.lo * H + b.lo) * W + cw.lo; };
  const int64_t OH = g.out[1], run = (OH - 1) * (W + 2 * w.p[2]) + OW;
  const pooling::PlaneGroup pg = pooling::plane_group(g, w.p[1], w.p[2], run);
  if (flat_fits(g, w, pg)) {
    // Stride 1 in height and width: as avg_run's padded planes, the border
    // the lowest value (never taking over); an index is its offset q in the
    // interleaved planes (int32: flat_fits), q / P the padded position,
    // mapped back at the end; -1 where nothing took over.
    const int64_t p1 = w.p[1], p2 = w.p[2], P = pg.group, Wp = pg.Wp, slice = pg.slice, planes = g.n * g.c;
    pooling::run_tasks(planes * g.out_rows() * OW * kvol >= pooling::kSplitWork, (planes + P - 1) / P, [&](int64_t t) {
      const int64_t first = t * P, count = std::min(P, planes - first);
      thread_local Scratch pad_buf, val_buf, idx_buf;
      K* pad = pad_buf.room<K>(D * slice * P);
      K* m = val_buf.room<K>(run * P);
      int32_t* ix = idx_buf.room<int32_t>(run * P);
      pooling::padded_planes(x, g, pg, first, count, p1, p2, low, pad);
      for (int64_t od = 0; od < g.out[0]; ++od) {
        std::fill(m, m + run * P, low);
        std::fill(ix, ix + run * P, -1);
        const Span& a = sd[od];
        for (int64_t id = a.lo; id < a.hi; id += d0)
          for (int64_t kh = 0; kh < w.k[1]; ++kh)
            for (int64_t kw = 0; kw < w.k[2]; ++kw) {
              const int64_t at = (id * slice + kh * d1 * Wp + kw * d2) * P;
              pooling::max_run_seq(m, ix, pad + at, run * P, static_cast<int32_t>(at));
            }
        for (int64_t j = 0; j < count; ++j) {
          const int64_t n = (first + j) / g.c, c = (first + j) % g.c;
          const int64_t yo = n * g.out_n + c * g.out_c + od * g.out_s[0];
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t i = (oh * Wp + ow) * P + j, o = yo + oh * g.out_s[1] + ow * g.out_s[2];
              y[o] = Elem<S>::from(m[i]);
              const int64_t q = ix[i] / P, r = q % slice;
              yi[o] = ix[i] < 0 ? first_index(a, sh[oh], sw[ow]) : ((q / slice) * H + r / Wp - p1) * W + r % Wp - p2;
            }
        }
      }
    });
    return;
  }
  const KernelColumns kcols = column_ranges(w.k[2], d2, w.p[2], s2, W, OW);
  pooling::for_each_plane_row(x, g, OW * kvol, [&](const K* plane, int64_t n, int64_t c, int64_t od, int64_t oh) {
    thread_local Scratch val_buf, idx_buf;
    K* m = val_buf.room<K>(OW);
    int64_t* ix = idx_buf.room<int64_t>(OW);
    const Span &a = sd[od], &b = sh[oh];
    for (int64_t ow = 0; ow < OW; ++ow) {
      m[ow] = low;
      ix[ow] = first_index(a, b, sw[ow]);
    }
    for (int64_t id = a.lo; id < a.hi; id += d0)
      for (int64_t ih = b.lo; ih < b.hi; ih += d1) {
        const int64_t base = (id * H + ih) * W;
        const K* row = plane + base;
        for (size_t i = 0; i < kcols.cols.size(); ++i) {
          const int64_t off = (kcols.first + static_cast<int64_t>(i)) * d2 - w.p[2];
          const pooling::Columns cols = kcols.cols[i];
          for (int64_t ow = cols.lo; ow < cols.hi; ++ow) {
            const int64_t pos = ow * s2 + off;
            const K v = row[pos];
            const bool take = pooling::takes_over(v, m[ow]);
            m[ow] = take ? v : m[ow];
            ix[ow] = take ? base + pos : ix[ow];
          }
        }
      }
    const int64_t yoff = n * g.out_n + c * g.out_c + od * g.out_s[0] + oh * g.out_s[1];
    for (int64_t ow = 0; ow < OW; ++ow) {
      y[yoff + ow * g.out_s[2]] = Elem<S>::from(m[ow]);
      yi[yoff + ow * g.out_s[2]] = ix[ow];
    }
  });
}

// A 4-d [C, D, H, W] self that is [1, C, D, H, W] in the dense
// channels-last-3d layout and not contiguous: libtorch's max_pool3d pools
// it as such and returns that layout (c10's exact-layout rules: size-1
// dims take any stride).
bool unbatched_channels_last_3d(const Tensor& t) {
  auto dense_in = [&](std::initializer_list<int> inner_first) {
    int64_t expected = 1;
    for (int d : inner_first) {
      if (t.sizes[d] == 1) continue;
      if (t.strides[d] != expected) return false;
      expected *= t.sizes[d];
    }
    return true;
  };
  return dense_in({0, 3, 2, 1}) && !dense_in({3, 2, 1, 0});
}

// Its result: channels innermost, then width, height, depth.
Tensor unbatched_channels_last_result(Geometry& g, int32_t dtype) {
  std::vector<int64_t> sizes = {1, g.c, g.out[0], g.out[1], g.out[2]};
  std::vector<int64_t> strides = pooling::c10_channels_last_strides(sizes);
  sizes.erase(sizes.begin());
  strides.erase(strides.begin());
  g.out_c = strides[0];
  for (int i = 0; i < 3; ++i) g.out_s[i] = strides[1 + i];
  return empty_tensor(std::move(sizes), std::move(strides), dtype);
}

}  // namespace

Tensor avg_pool(const Tensor& self, int dims, IntList kernel_size, IntList stride, IntList padding, bool ceil_mode,
                bool count_include_pad, const int64_t* divisor_override, const char* op) {
  pooling::check_input(self, dims, self.dim() == dims + 2 ? 1 : 0, op);
  if (dims == 2) {
    pooling::check_dtype(self, {kFloat32, kFloat64, kBFloat16, kFloat16, kInt64}, op);
  } else {
    pooling::check_dtype(self, {kFloat32, kFloat64, kInt64}, op);
  }
  const Window w = read_window(dims, kernel_size, stride, padding, nullptr, op);
  if (divisor_override != nullptr && *divisor_override == 0) fail_arg(op, "divisor_override", "must not be 0");
  if (dims == 3) {
    // libtorch's avg_pool3d (only) wants each pooled dim at least the kernel, padding aside.
    for (int i = 0; i < 3; ++i) {
      if (self.sizes[self.dim() - 3 + i] < w.k[i]) {
        fail_arg(op, "self",
                 "is smaller than kernel_size " + list_str(kernel_size) + " in pooled dim " + std::to_string(i));
      }
    }
  }
  const std::vector<int64_t> out = output_sizes(self, dims, w, ceil_mode, op);
  Geometry g = pooling::geometry(self, dims, out.data());
  // libtorch's avg_pool3d returns a contiguous result for any input.
  Tensor y = pooling::allocate(self, dims, g, dims == 2, self.dtype);
  if (y.numel() == 0) return y;
  const void* x = self.data();
  void* yp = y.data();
  auto run = [&](auto tag) {
    using S = decltype(tag);
    avg_run<S>(static_cast<const S*>(x), g, w, count_include_pad, divisor_override, static_cast<S*>(yp));
  };
  switch (self.dtype) {
    case kFloat32: run(float{}); break;
    case kFloat64: run(double{}); break;
    case kBFloat16: run(BF16{}); break;
    case kFloat16: run(F16{}); break;
    default: run(int64_t{}); break;
  }
  return y;
}

void max_pool_with_indices(const Tensor& self, int dims, IntList kernel_size, IntList stride, IntList padding,
                           IntList dilation, bool ceil_mode, Tensor* values, Tensor* indices, const char* op) {
  pooling::check_input(self, dims, self.dim() == dims + 2 ? 1 : 0, op);
  pooling::check_dtype(self, {kFloat32, kFloat64, kBFloat16, kFloat16, kInt64, kInt32, kInt16, kInt8, kUInt8}, op);
  const Window w = read_window(dims, kernel_size, stride, padding, &dilation, op);
  const std::vector<int64_t> out = output_sizes(self, dims, w, ceil_mode, op);
  Geometry g = pooling::geometry(self, dims, out.data());
  if (dims == 3 && self.dim() == 4 && unbatched_channels_last_3d(self)) {
    *values = unbatched_channels_last_result(g, self.dtype);
  } else {
    // libtorch's max_pool3d takes a 4-d self only contiguous or as above.
    if (dims == 3 && self.dim() == 4 && is_channels_last(self)) {
      fail_arg(op, "self", "is a 4-d tensor in the channels-last layout, which libtorch's max_pool3d refuses");
    }
    *values = pooling::allocate(self, dims, g, true, self.dtype);
  }
  *indices = pooling::allocate_like(*values, kInt64);
  if (values->numel() == 0) return;
  const void* x = self.data();
  void* yp = values->data();
  int64_t* ip = static_cast<int64_t*>(indices->data());
  auto run = [&](auto tag) {
    using S = decltype(tag);
    max_run<S>(static_cast<const S*>(x), g, w, static_cast<S*>(yp), ip);
  };
  switch (self.dtype) {
    case kFloat32: run(float{}); break;
    case kFloat64: run(double{}); break;
    case kBFloat16: run(BF16{}); break;
    case kFloat16: run(F16{}); break;
    case kInt64: run(int64_t{}); break;
    case kInt32: run(int32_t{}); break;
    case kInt16: run(int16_t{}); break;
    case kInt8: run(int8_t{}); break;
    default: run(uint8_t{}); break;
  }
}

}  // namespace aotrun::shim::kernels

namespace {

using aotrun::shim::kernels::IntList;

AOTITorchError avg_pool_entry(const char* fn, int dims, AtenTensorHandle self, const int64_t* kernel_size,
                              int64_t kernel_size_len, const int64_t* stride, int64_t stride_len,
                              const int64_t* padding, int64_t padding_len, int32_t ceil_mode, int32_t count_include_pad,
                              const int64_t* divisor_override, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(fn, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::avg_pool(s, dims, IntList{kernel_size, kernel_size_len}, IntList{stride, stride_len},
                                        IntList{padding, padding_len}, ceil_mode != 0, count_include_pad != 0,
                                        divisor_override, fn));
  });
}

AOTITorchError max_pool_entry(const char* fn, int dims, AtenTensorHandle self, const int64_t* kernel_size,
                              int64_t kernel_size_len, const int64_t* stride, int64_t stride_len,
                              const int64_t* padding, int64_t padding_len, const int64_t* dilation,
                              int64_t dilation_len, int32_t ceil_mode, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(fn, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::max_pool_with_indices(s, dims, IntList{kernel_size, kernel_size_len}, IntList{stride, stride_len},
                                   IntList{padding, padding_len}, IntList{dilation, dilation_len}, ceil_mode != 0,
                                   &values, &indices, fn);
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* stride,
                                                    int64_t stride_len_, const int64_t* padding, int64_t padding_len_,
                                                    int32_t ceil_mode, int32_t count_include_pad,
                                                    int64_t* divisor_override, AtenTensorHandle* ret0) {
  return avg_pool_entry(__func__, 2, self, kernel_size, kernel_size_len_, stride, stride_len_, padding, padding_len_,
                        ceil_mode, count_include_pad, divisor_override, ret0);
}

extern "C" AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* stride,
                                                    int64_t stride_len_, const int64_t* padding, int64_t padding_len_,
                                                    int32_t ceil_mode, int32_t count_include_pad,
                                                    int64_t* divisor_override, AtenTensorHandle* ret0) {
  return avg_pool_entry(__func__, 3, self, kernel_size, kernel_size_len_, stride, stride_len_, padding, padding_len_,
                        ceil_mode, count_include_pad, divisor_override, ret0);
}

extern "C" AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                                 int64_t kernel_size_len_, const int64_t* stride,
                                                                 int64_t stride_len_, const int64_t* padding,
                                                                 int64_t padding_len_, const int64_t* dilation,
                                                                 int64_t dilation_len_, int32_t ceil_mode,
                                                                 AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return max_pool_entry(__func__, 2, self, kernel_size, kernel_size_len_, stride, stride_len_, padding, padding_len_,
                        dilation, dilation_len_, ceil_mode, ret0, ret1);
}

extern "C" AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                                 int64_t kernel_size_len_, const int64_t* stride,
                                                                 int64_t stride_len_, const int64_t* padding,
                                                                 int64_t padding_len_, const int64_t* dilation,
                                                                 int64_t dilation_len_, int32_t ceil_mode,
                                                                 AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return max_pool_entry(__func__, 3, self, kernel_size, kernel_size_len_, stride, stride_len_, padding, padding_len_,
                        dilation, dilation_len_, ceil_mode, ret0, ret1);
}
