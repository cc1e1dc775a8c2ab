// Shared by pooling.cpp and adaptive_pooling.cpp (since aotrun-shim 1.7):
// the input's shape checks, the geometry every pooling kernel walks (batch,
// channels and the pooled dims padded to three, with element strides), the
// result's layout, and the ways the kernels walk the input:
//  - channel vectors: inputs whose channels are unit-stride (channels-last)
//    are walked window position by window position, each adding (or
//    comparing) C contiguous elements; one output row (n, od, oh) per task;
//    the fixed and the adaptive pools share this walk (walk_channel_vectors,
//    max_channel_vectors), told apart by their spans;
//  - plane groups: up to 16 planes (batch, channel) copied into a thread's
//    scratch interleaved, plane innermost, with their padding materialised
//    where a fixed window has any: every window offset (or position) is then
//    one long run, vectorised; a group per task;
//  - planar rows: one [D, H, W] plane, read in place when dense (else
//    gathered), one output row (od, oh) per task, each kernel column added
//    along the row (strided fixed windows, large adaptive planes).
// Each visits every output's window in libtorch's order (depth, then
// height, then width; padding adds zeros or the lowest value, which change
// nothing), so sums round as libtorch's do and ties and NaNs pick
// libtorch's index. Results do not depend on the OpenMP team's size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/scratch.hpp"
#include "compute/team_split.hpp"
#include "compute/typed.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "pooling_runs.hpp"

namespace aotrun::shim::kernels::pooling {

// Work (window elements visited) below which a call stays on one thread.
constexpr int64_t kSplitWork = int64_t{1} << 16;

struct Geometry {
  int64_t n = 1, c = 1;                             // batch (1 unbatched), channels
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};    // depth, height, width
  int64_t in_n = 0, in_c = 0, in_s[3] = {0, 0, 0};  // input strides (elements)
  int64_t out_n = 0, out_c = 0, out_s[3] = {0, 0, 0};
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_rows() const { return out[0] * out[1]; }
};

// c10's channels-last strides (get_channels_last_strides_2d/_3d): unlike
// channels_last_strides(), a size-0 dim makes the strides outside it 0, as
// libtorch's empty tensors of that format have them.
inline std::vector<int64_t> c10_channels_last_strides(const std::vector<int64_t>& sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> st(nd);
  st[1] = 1;
  int64_t acc = sizes[1];
  for (int64_t d = nd - 1; d >= 2; --d) {
    st[d] = acc;
    acc *= sizes[d];
  }
  st[0] = acc;
  return st;
}

// self must be (dims + 1)-d or (dims + 2)-d (batched); the dims from
// `first_nonzero` on (counted from self's first) may not be empty.
// libtorch's ops differ in which dims they require to be non-empty.
inline void check_input(const Tensor& self, int dims, int64_t first_nonzero, const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  if (nd != dims + 1 && nd != dims + 2) {
    fail_arg(op, "self",
             "must be " + std::to_string(dims + 1) + "-d or " + std::to_string(dims + 2) + "-d (batched), got " +
                 std::to_string(nd) + "-d");
  }
  for (int64_t d = first_nonzero; d < nd; ++d) {
    if (self.sizes[d] == 0) {
      fail_arg(op, "self", "has size 0 in dim " + std::to_string(d) + "; only the batch dim may be empty");
    }
  }
}

// "float32, float64" for an error message.
inline std::string dtype_list(std::initializer_list<int32_t> dts) {
  std::string s;
  for (int32_t d : dts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

inline void check_dtype(const Tensor& self, std::initializer_list<int32_t> allowed, const char* op) {
  for (int32_t d : allowed) {
    if (d == self.dtype) return;
  }
  fail_arg(op, "self", std::string("has dtype ") + dtype_name(self.dtype) + "; expected " + dtype_list(allowed));
}

// The geometry of self (checked by check_input) pooled to `out` (the pooled
// dims, innermost last).
inline Geometry geometry(const Tensor& self, int dims, const int64_t* out) {
  Geometry g;
  const int64_t nd = self.dim();
  const bool batched = nd == dims + 2;
  const int64_t cd = batched ? 1 : 0;
  if (batched) {
    g.n = self.sizes[0];
    g.in_n = self.strides[0];
  }
  g.c = self.sizes[cd];
  g.in_c = self.strides[cd];
  for (int i = 0; i < dims; ++i) {
    const int k = 3 - dims + i;
    g.in[k] = self.sizes[cd + 1 + i];
    g.in_s[k] = self.strides[cd + 1 + i];
    g.out[k] = out[i];
  }
  return g;
}

// A new result for `g` (the output strides are set in g): channels-last
// when `keep_channels_last` and self is (for 4-d and 5-d selves; libtorch's
// suggest_memory_format), else contiguous.
inline Tensor allocate(const Tensor& self, int dims, Geometry& g, bool keep_channels_last, int32_t dtype) {
  const int64_t nd = self.dim();
  const bool batched = nd == dims + 2;
  std::vector<int64_t> sizes;
  if (batched) sizes.push_back(g.n);
  sizes.push_back(g.c);
  for (int i = 0; i < dims; ++i) sizes.push_back(g.out[3 - dims + i]);
  const bool cl = keep_channels_last && batched && (dims == 2 ? is_channels_last(self) : is_channels_last_3d(self));
  std::vector<int64_t> strides = cl ? c10_channels_last_strides(sizes) : contiguous_strides(sizes);
  const int64_t cd = batched ? 1 : 0;
  if (batched) g.out_n = strides[0];
  g.out_c = strides[cd];
  for (int i = 0; i < dims; ++i) g.out_s[3 - dims + i] = strides[cd + 1 + i];
  return empty_tensor(std::move(sizes), std::move(strides), dtype);
}

// The same strides for a second result (max pooling's indices).
inline Tensor allocate_like(const Tensor& like, int32_t dtype) { return empty_tensor(like.sizes, like.strides, dtype); }

// Channels unit-stride (and more than one): the channel-vector walk.
inline bool channel_vectors(const Geometry& g) { return g.c > 1 && g.in_c == 1; }

// One output index's window along one pooled dim: the input positions lo,
// lo + step, ... below hi. padded: a fixed average pool's window length
// clipped to the padded input (its count_include_pad divisor), else 0.
struct Span {
  int64_t lo = 0, hi = 0, padded = 0;
  int64_t size() const { return hi - lo; }
  bool empty() const { return hi <= lo; }
};

// Every output index's span per pooled dim (depth, height, width) and the
// step between a window's positions (a fixed max pool's dilation, else 1):
// all a walk needs to know of how a pool picks its windows.
struct Spans {
  std::vector<Span> dim[3];
  int64_t step[3] = {1, 1, 1};
};

// Runs body(i) for i in [0, n), split over the calling thread's team when
// `split`; the first exception of any task is rethrown after the loop.
template <typename F>
void run_tasks(bool split, int64_t n, F&& body) {
  std::string failure;
  for_range(split, n, [&](int64_t i) {
    try {
      body(i);
    } catch (const std::exception& e) {
#pragma omp critical(aotrun_shim_pooling_failure)
      if (failure.empty()) failure = e.what();
    }
  });
  if (!failure.empty()) throw ShimError(failure);
}

// The planar walk: row(plane, n, c, od, oh) for every output row, `plane`
// the [D, H, W] plane of (n, c) as a dense array of the compute type K.
// row_work: window elements one row visits (to decide on splitting).
template <typename S, typename Row>
void for_each_plane_row(const S* x, const Geometry& g, int64_t row_work, Row&& row) {
  using K = typename Elem<S>::Key;
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t planes = g.n * g.c, rows = g.out_rows();
  const bool split = planes * rows * row_work >= kSplitWork;
  if constexpr (std::is_same_v<S, K>) {
    const bool dense = (W == 1 || g.in_s[2] == 1) && (H == 1 || g.in_s[1] == W) && (D == 1 || g.in_s[0] == H * W);
    if (dense) {
      run_tasks(split, planes * rows, [&](int64_t t) {
        const int64_t p = t / rows, r = t % rows, n = p / g.c, c = p % g.c;
        row(x + n * g.in_n + c * g.in_c, n, c, r / g.out[1], r % g.out[1]);
      });
      return;
    }
  }
  run_tasks(split, planes, [&](int64_t p) {
    const int64_t n = p / g.c, c = p % g.c;
    thread_local Scratch plane_buf;
    K* plane = plane_buf.room<K>(D * H * W);
    const S* src = x + n * g.in_n + c * g.in_c;
    K* dst = plane;
    for (int64_t d = 0; d < D; ++d)
      for (int64_t h = 0; h < H; ++h) {
        const S* line = src + d * g.in_s[0] + h * g.in_s[1];
        for (int64_t w = 0; w < W; ++w) *dst++ = Elem<S>::key(line[w * g.in_s[2]]);
      }
    for (int64_t r = 0; r < rows; ++r) row(static_cast<const K*>(plane), n, c, r / g.out[1], r % g.out[1]);
  });
}

// The padded-plane layout of the planar kernels' stride-1 path: `count`
// planes from plane `first` (planes numbered n * C + c), each padded by ph
// rows and pw columns on each side, interleaved so that the group's
// planes are the innermost dim: pad[((d * Hp + h) * Wp + w) * group + j].
// A window offset is then one run over every output of a depth slice of
// all the group's planes (a group of one where a slice's run is long).
struct PlaneGroup {
  int64_t Hp, Wp, slice, group;  // slice: Hp * Wp
};

inline PlaneGroup plane_group(const Geometry& g, int64_t ph, int64_t pw, int64_t run) {
  const int64_t Hp = g.in[1] + 2 * ph, Wp = g.in[2] + 2 * pw;
  // Runs of at least 64 elements, from up to 16 planes.
  const int64_t group = std::min<int64_t>(std::clamp<int64_t>((64 + run - 1) / run, 1, 16), g.n * g.c);
  return {Hp, Wp, Hp * Wp, group};
}

// Fills pad (D * slice * group elements) with `border`, then copies planes
// first .. first + count - 1 (count <= group) into their lanes.
template <typename S>
void padded_planes(const S* x, const Geometry& g, const PlaneGroup& pg, int64_t first, int64_t count, int64_t ph,
                   int64_t pw, typename Elem<S>::Key border, typename Elem<S>::Key* pad) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2], P = pg.group;
  std::fill(pad, pad + D * pg.slice * P, border);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t n = (first + j) / g.c, c = (first + j) % g.c;
    const S* src = x + n * g.in_n + c * g.in_c;
    for (int64_t d = 0; d < D; ++d)
      for (int64_t h = 0; h < H; ++h) {
        const S* line = src + d * g.in_s[0] + h * g.in_s[1];
        typename Elem<S>::Key* dst = pad + ((d * pg.Hp + h + ph) * pg.Wp + pw) * P + j;
        for (int64_t w = 0; w < W; ++w) dst[w * P] = Elem<S>::key(line[w * g.in_s[2]]);
      }
  }
}

// The channel-vector walk: row(n, od, oh) for every output row.
template <typename Row>
void for_each_position_row(const Geometry& g, int64_t row_work, Row&& row) {
  const int64_t rows = g.out_rows(), tasks = g.n * rows;
  run_tasks(tasks * row_work >= kSplitWork, tasks,
            [&](int64_t t) { row(t / rows, (t % rows) / g.out[1], t % g.out[1]); });
}

// Stores a row of results held as channel vectors, row[ow * C + c], to
// y[ow * col_stride + c * c_stride] as f(ow, c, value): channel by channel
// where the result's channels are not unit-stride (a contiguous result of
// a channels-last input), so that the stores run along the result's rows.
template <typename T, typename K, typename F>
void store_vectors(T* y, int64_t OW, int64_t C, int64_t col_stride, int64_t c_stride, const K* row, F&& f) {
  if (c_stride == 1) {
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t c = 0; c < C; ++c) y[ow * col_stride + c] = f(ow, c, row[ow * C + c]);
    return;
  }
  for (int64_t c = 0; c < C; ++c)
    for (int64_t ow = 0; ow < OW; ++ow) y[c * c_stride + ow * col_stride] = f(ow, c, row[ow * C + c]);
}

// The output columns ow whose position ow * stride + offset lies in
// [0, width): [lo, hi), empty when hi <= lo.
struct Columns {
  int64_t lo, hi;
};
inline Columns columns(int64_t offset, int64_t stride, int64_t width, int64_t out_width) {
  auto ceil_div = [](int64_t a, int64_t b) { return a <= 0 ? int64_t{0} : (a + b - 1) / b; };
  const int64_t lo = ceil_div(-offset, stride);
  const int64_t hi = std::min(ceil_div(width - offset, stride), out_width);
  return {std::min(lo, out_width), hi};
}

// The kernel columns kw (positions kw * dil - pad from each window's
// start) that some output column reads inside [0, width): kernels far wider
// than the input are not walked in full.
inline Columns kernel_columns(int64_t k, int64_t dil, int64_t pad, int64_t stride, int64_t width, int64_t out_width) {
  const int64_t reach = pad - (out_width - 1) * stride;  // kw * dil must be at least this
  const int64_t lo = reach <= 0 ? 0 : (reach + dil - 1) / dil;
  const int64_t hi = std::min(k, (width - 1 + pad) / dil + 1);
  return {lo, hi};
}

// The smallest value of K: max pooling's starting point (-inf for floating
// types, so that a window of -inf keeps its first index, as libtorch's).
template <typename K>
K lowest() {
  if constexpr (std::is_floating_point_v<K>) {
    return -std::numeric_limits<K>::infinity();
  } else {
    return std::numeric_limits<K>::lowest();
  }
}

// libtorch's max step: v replaces the running maximum when greater or NaN
// (so the last NaN of a window wins, and the first of equal maxima).
template <typename K>
inline bool takes_over(K v, K best) {
  if constexpr (std::is_floating_point_v<K>) {
    return v > best || v != v;
  } else {
    return v > best;
  }
}

// acc[i] += x[i] for i < n (vectorised: the runs do not overlap).
template <typename K>
inline void add_run(K* __restrict acc, const K* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

// libtorch's max step along a run: where x[i] takes over m[i], m[i] = x[i]
// and ix[i] = at + i.
template <typename K>
inline void max_run_seq(K* __restrict m, int32_t* __restrict ix, const K* __restrict x, int64_t n, int32_t at) {
  for (int64_t i = 0; i < n; ++i) {
    const K v = x[i];
    const bool take = takes_over(v, m[i]);
    m[i] = take ? v : m[i];
    ix[i] = take ? at + static_cast<int32_t>(i) : ix[i];
  }
}

// float32: the runs compiled for the CPU's ISA (pooling_runs.hpp).
template <>
inline void add_run<float>(float* __restrict acc, const float* __restrict x, int64_t n) {
  runs_f32().add(acc, x, n);
}
template <>
inline void max_run_seq<float>(float* __restrict m, int32_t* __restrict ix, const float* __restrict x, int64_t n,
                               int32_t at) {
  runs_f32().max_seq(m, ix, x, n, at);
}

// The same where every element of the run is at one position (a channel
// vector): ix[i] = at.
template <typename K>
inline void max_run_at(K* __restrict m, int64_t* __restrict ix, const K* __restrict x, int64_t n, int64_t at) {
  for (int64_t i = 0; i < n; ++i) {
    const K v = x[i];
    const bool take = takes_over(v, m[i]);
    m[i] = take ? v : m[i];
    ix[i] = take ? at : ix[i];
  }
}

template <>
inline void max_run_at<float>(float* __restrict m, int64_t* __restrict ix, const float* __restrict x, int64_t n,
                              int64_t at) {
  runs_f32().max_at(m, ix, x, n, at);
}

// acc[i] += x[i] and max_run_at over channel vectors of storage type S.
template <typename S>
inline void add_vector(typename Elem<S>::Key* __restrict acc, const S* __restrict x, int64_t n) {
  if constexpr (std::is_same_v<S, typename Elem<S>::Key>) {
    add_run(acc, x, n);
  } else {
    for (int64_t i = 0; i < n; ++i) acc[i] += Elem<S>::key(x[i]);
  }
}
template <typename S>
inline void max_vector(typename Elem<S>::Key* __restrict m, int64_t* __restrict ix, const S* __restrict x, int64_t n,
                       int64_t at) {
  if constexpr (std::is_same_v<S, typename Elem<S>::Key>) {
    max_run_at(m, ix, x, n, at);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const auto v = Elem<S>::key(x[i]);
      const bool take = takes_over(v, m[i]);
      m[i] = take ? v : m[i];
      ix[i] = take ? at : ix[i];
    }
  }
}

// The channel-vector walk (channel_vectors(g)): for every output row
// (n, od, oh), begin(n, od, oh, acc, idx); then for each output column ow
// and each of its window's positions in libtorch's order (depth, height,
// width), visit(acc + ow * C, idx + ow * C, p, at), p the C channels at
// that position and `at` its index in the input's plane; then
// end(n, od, oh, acc, idx). acc: the row's OW * C accumulators of type
// A; idx: as many int64 (a max pool's indices) when with_indices, else
// null. Both are the calling thread's scratch.
template <typename A, typename S, typename Begin, typename Visit, typename End>
void walk_channel_vectors(const S* x, const Geometry& g, const Spans& sp, int64_t row_work, bool with_indices,
                          Begin&& begin, Visit&& visit, End&& end) {
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], C = g.c;
  const int64_t s0 = sp.step[0], s1 = sp.step[1], s2 = sp.step[2];
  for_each_position_row(g, row_work, [&](int64_t n, int64_t od, int64_t oh) {
    thread_local Scratch acc_buf, idx_buf;
    A* acc = acc_buf.room<A>(OW * C);
    int64_t* idx = with_indices ? idx_buf.room<int64_t>(OW * C) : nullptr;
    const Span &a = sp.dim[0][od], &b = sp.dim[1][oh];
    const S* xn = x + n * g.in_n;
    begin(n, od, oh, acc, idx);
    for (int64_t ow = 0; ow < OW; ++ow) {
      const Span& cw = sp.dim[2][ow];
      A* ao = acc + ow * C;
      int64_t* io = with_indices ? idx + ow * C : nullptr;
      for (int64_t id = a.lo; id < a.hi; id += s0)
        for (int64_t ih = b.lo; ih < b.hi; ih += s1)
          for (int64_t iw = cw.lo; iw < cw.hi; iw += s2) {
            visit(ao, io, xn + id * g.in_s[0] + ih * g.in_s[1] + iw * g.in_s[2], (id * H + ih) * W + iw);
          }
    }
    end(n, od, oh, acc, idx);
  });
}

// A max pool over channel vectors (fixed and adaptive alike): values in
// y, int64 indices into the input's plane in yi, a window none of whose
// elements takes over giving the lowest value and its first position's
// index, as libtorch's.
template <typename S>
void max_channel_vectors(const S* x, const Geometry& g, const Spans& sp, int64_t row_work, S* y, int64_t* yi) {
  using K = typename Elem<S>::Key;
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], C = g.c;
  const K low = lowest<K>();
  walk_channel_vectors<K>(
      x, g, sp, row_work, true,
      [&](int64_t, int64_t od, int64_t oh, K* m, int64_t* ix) {
        const int64_t first = (sp.dim[0][od].lo * H + sp.dim[1][oh].lo) * W;
        std::fill(m, m + OW * C, low);
        for (int64_t ow = 0; ow < OW; ++ow) std::fill(ix + ow * C, ix + (ow + 1) * C, first + sp.dim[2][ow].lo);
      },
      [&](K* m, int64_t* ix, const S* p, int64_t at) { max_vector(m, ix, p, C, at); },
      [&](int64_t n, int64_t od, int64_t oh, const K* m, const int64_t* ix) {
        const int64_t yoff = n * g.out_n + od * g.out_s[0] + oh * g.out_s[1];
        store_vectors(y + yoff, OW, C, g.out_s[2], g.out_c, m, [](int64_t, int64_t, K v) { return Elem<S>::from(v); });
        store_vectors(yi + yoff, OW, C, g.out_s[2], g.out_c, ix, [](int64_t, int64_t, int64_t v) { return v; });
      });
}

}  // namespace aotrun::shim::kernels::pooling
