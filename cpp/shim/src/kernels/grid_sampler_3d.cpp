// aoti_torch_cpu_grid_sampler_3d (since aotrun-shim 1.8): F.grid_sample on a
// 5-d input [N, C, D, H, W] at the points of grid [N, D', H', W', 3] (x, y, z
// in [-1, 1] along W, H, D), a contiguous [N, C, D', H', W'] result in the
// input's dtype. libtorch 2.15's CPU kernel, step by step and in its types:
//  - a coordinate is unnormalized (align_corners: -1 and 1 are the corner
//    voxels' centres, else their outer edges), then padding 1 (border)
//    clamps it to [0, size - 1], padding 2 (reflection) reflects it about
//    the centres (align_corners) or the edges and then clamps it; padding 0
//    (zeros) leaves it, and voxels outside the input count as 0;
//  - interpolation 0 (bilinear, trilinear here): the eight voxels around
//    the point weighted by the opposite sub-volumes, added in libtorch's
//    order (tnw, tne, tsw, tse, bnw, bne, bsw, bse); 1 (nearest): the voxel
//    at the coordinates rounded half to even;
//  - float32 and float64 compute in their type; bfloat16 and float16 in
//    theirs, every operation rounded as c10's BFloat16 / Half arithmetic
//    rounds it; a NaN or out-of-range coordinate converts to an index far
//    outside the input (x86's conversion of such values), so it samples 0
//    under zeros padding, but for a bfloat16 NaN, which libtorch converts
//    to index 0 (the voxel there, or NaN weights).
// Checks as libtorch's: input and grid defined, the same dtype, both 5-d,
// the same batch size, grid's last dim 3, input's spatial dims non-empty.
// Refused where libtorch's result is not defined or not meant: interpolation
// 2 (bicubic, which the 3-d kernel has no branch for: libtorch returns
// uninitialized memory) and above, and padding modes outside 0-2 (libtorch
// pads those with zeros) (docs/SHIM.md).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

// A bfloat16 / float16 value with c10's arithmetic: each operation in float,
// its result rounded to S.
template <typename S>
struct Low {
  float v;
  static Low make(float f) { return Low{Elem<S>::key(Elem<S>::from(f))}; }
  static Low of_int(int64_t i) { return make(static_cast<float>(i)); }
  friend Low operator+(Low a, Low b) { return make(a.v + b.v); }
  friend Low operator-(Low a, Low b) { return make(a.v - b.v); }
  friend Low operator*(Low a, Low b) { return make(a.v * b.v); }
  friend Low operator/(Low a, Low b) { return make(a.v / b.v); }
};

template <typename V>
struct Ops {  // float, double
  static V of_int(int64_t i) { return static_cast<V>(i); }
  static V make(V f) { return f; }
  static V val(V x) { return x; }
};
template <typename S>
struct Ops<Low<S>> {
  static Low<S> of_int(int64_t i) { return Low<S>::of_int(i); }
  static Low<S> make(float f) { return Low<S>::make(f); }
  static float val(Low<S> x) { return x.v; }
};

// static_cast<int64_t> of a floating value as x86 does it: NaN and values
// out of range give INT64_MIN.
// bfloat16's NaN converts to 0 in libtorch 2.15's kernel (measured: a NaN
// coordinate samples the voxel at index 0 there), float16's as float's.
template <typename V, typename F>
int64_t to_index(F f) {
  if constexpr (std::is_same_v<V, Low<BF16>>) {
    if (std::isnan(f)) return 0;
  }
  if (!(f >= F(-9.2e18) && f <= F(9.2e18))) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(f);
}

// c++'s std::min / std::max argument order, as libtorch calls them.
template <typename V>
V vmin(V a, V b) {
  return Ops<V>::val(b) < Ops<V>::val(a) ? b : a;
}
template <typename V>
V vmax(V a, V b) {
  return Ops<V>::val(a) < Ops<V>::val(b) ? b : a;
}

template <typename V>
V clip(V in, int64_t limit) {
  return vmin(Ops<V>::of_int(limit - 1), vmax(in, Ops<V>::of_int(0)));
}

template <typename V>
V reflect(V in, int64_t twice_low, int64_t twice_high) {
  using O = Ops<V>;
  if (twice_low == twice_high) return O::of_int(0);
  const V two = O::of_int(2);
  const V mn = O::of_int(twice_low) / two;
  const V span = O::of_int(twice_high - twice_low) / two;
  in = O::make(std::fabs(O::val(in - mn)));
  const V extra = O::make(std::fmod(O::val(in), O::val(span)));
  const auto q = std::floor(O::val(in / span));
  const int flips = (q >= -2147483648.0 && q < 2147483648.0) ? static_cast<int>(q) : std::numeric_limits<int>::min();
  if (flips % 2 == 0) return extra + mn;
  return span - extra + mn;
}

template <typename V>
V source_index(V coord, int64_t size, int64_t padding, bool align) {
  using O = Ops<V>;
  const V one = O::of_int(1), two = O::of_int(2);
  if (align) {
    coord = ((coord + one) / two) * O::of_int(size - 1);
  } else {
    coord = ((coord + one) * O::of_int(size) - one) / two;
  }
  if (padding == 1) {
    coord = clip(coord, size);
  } else if (padding == 2) {
    coord = align ? reflect(coord, 0, 2 * (size - 1)) : reflect(coord, -1, 2 * size - 1);
    coord = clip(coord, size);
  }
  return coord;
}

template <typename S, typename V>
void sample(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding, bool align, Tensor& out) {
  using O = Ops<V>;
  const int64_t N = input.sizes[0], C = input.sizes[1], iD = input.sizes[2], iH = input.sizes[3], iW = input.sizes[4];
  const int64_t oD = grid.sizes[1], oH = grid.sizes[2], oW = grid.sizes[3];
  const int64_t* is = input.strides.data();
  const int64_t* gs = grid.strides.data();
  const int64_t* os = out.strides.data();
  const void* in = input.data();
  const void* g = grid.data();
  void* o = out.data();
  auto ld = [](const void* base, int64_t off) {
    if constexpr (std::is_same_v<S, V>) {
      return load<S>(base, off);
    } else {
      return V{Elem<S>::key(load<S>(base, off))};
    }
  };
  auto st = [&](int64_t off, V v) {
    if constexpr (std::is_same_v<S, V>) {
      store<S>(o, off, v);
    } else {
      store<S>(o, off, Elem<S>::from(v.v));
    }
  };
  auto inside = [&](int64_t z, int64_t y, int64_t x) {
    return z >= 0 && z < iD && y >= 0 && y < iH && x >= 0 && x < iW;
  };
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t d = 0; d < oD; ++d) {
      for (int64_t h = 0; h < oH; ++h) {
        for (int64_t w = 0; w < oW; ++w) {
          const int64_t gp = n * gs[0] + d * gs[1] + h * gs[2] + w * gs[3];
          const V ix = source_index(ld(g, gp), iW, padding, align);
          const V iy = source_index(ld(g, gp + gs[4]), iH, padding, align);
          const V iz = source_index(ld(g, gp + 2 * gs[4]), iD, padding, align);
          const int64_t obase = n * os[0] + d * os[2] + h * os[3] + w * os[4];
          const int64_t ibase = n * is[0];
          if (interp == 0) {
            const int64_t x0 = to_index<V>(std::floor(O::val(ix))), y0 = to_index<V>(std::floor(O::val(iy))),
                          z0 = to_index<V>(std::floor(O::val(iz)));
            const int64_t x1 = x0 + 1, y1 = y0 + 1, z1 = z0 + 1;
            auto I = [](int64_t i) { return O::of_int(i); };
            // The eight corners (z, y, x) and their weights, libtorch's order.
            const int64_t cz[8] = {z0, z0, z0, z0, z1, z1, z1, z1};
            const int64_t cy[8] = {y0, y0, y1, y1, y0, y0, y1, y1};
            const int64_t cx[8] = {x0, x1, x0, x1, x0, x1, x0, x1};
            const V wt[8] = {
                (I(x1) - ix) * (I(y1) - iy) * (I(z1) - iz), (ix - I(x0)) * (I(y1) - iy) * (I(z1) - iz),
                (I(x1) - ix) * (iy - I(y0)) * (I(z1) - iz), (ix - I(x0)) * (iy - I(y0)) * (I(z1) - iz),
                (I(x1) - ix) * (I(y1) - iy) * (iz - I(z0)), (ix - I(x0)) * (I(y1) - iy) * (iz - I(z0)),
                (I(x1) - ix) * (iy - I(y0)) * (iz - I(z0)), (ix - I(x0)) * (iy - I(y0)) * (iz - I(z0)),
            };
            bool in8[8];
            for (int q = 0; q < 8; ++q) in8[q] = inside(cz[q], cy[q], cx[q]);
            for (int64_t c = 0; c < C; ++c) {
              V acc = O::of_int(0);
              const int64_t cb = ibase + c * is[1];
              for (int q = 0; q < 8; ++q) {
                if (in8[q]) acc = acc + ld(in, cb + cz[q] * is[2] + cy[q] * is[3] + cx[q] * is[4]) * wt[q];
              }
              st(obase + c * os[1], acc);
            }
          } else {
            const int64_t x = to_index<V>(std::nearbyint(O::val(ix))), y = to_index<V>(std::nearbyint(O::val(iy))),
                          z = to_index<V>(std::nearbyint(O::val(iz)));
            const bool ok = inside(z, y, x);
            for (int64_t c = 0; c < C; ++c) {
              const int64_t cb = ibase + c * is[1];
              st(obase + c * os[1], ok ? ld(in, cb + z * is[2] + y * is[3] + x * is[4]) : O::of_int(0));
            }
          }
        }
      }
    }
  }
}

std::string sizes_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

Tensor grid_sampler_3d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners, const char* op) {
  expect_cpu_defined(input, op, "input");
  expect_cpu_defined(grid, op, "grid");
  if (grid.dtype != input.dtype) {
    fail_arg(op, "grid",
             std::string("has dtype ") + dtype_name(grid.dtype) + ", 'input' has " + dtype_name(input.dtype));
  }
  if (input.dim() != 5) fail_arg(op, "input", "must be 5-d, got sizes " + sizes_str(input.sizes));
  if (grid.dim() != 5) fail_arg(op, "grid", "must be 5-d as the input, got sizes " + sizes_str(grid.sizes));
  if (grid.sizes[0] != input.sizes[0]) {
    fail_arg(op, "grid",
             "has batch size " + std::to_string(grid.sizes[0]) + ", 'input' has " + std::to_string(input.sizes[0]));
  }
  if (grid.sizes[4] != 3) fail_arg(op, "grid", "must have size 3 in its last dim, got sizes " + sizes_str(grid.sizes));
  for (int64_t i = 2; i < 5; ++i) {
    if (input.sizes[i] <= 0) {
      fail_arg(op, "input", "has an empty spatial dim " + std::to_string(i) + ": sizes " + sizes_str(input.sizes));
    }
  }
  if (interpolation_mode != 0 && interpolation_mode != 1) {
    fail_arg(op, "interpolation_mode",
             "is " + std::to_string(interpolation_mode) + "; 3-d sampling takes 0 (bilinear) or 1 (nearest)");
  }
  if (padding_mode < 0 || padding_mode > 2) {
    fail_arg(op, "padding_mode",
             "is " + std::to_string(padding_mode) + "; expected 0 (zeros), 1 (border) or 2 (reflection)");
  }
  const int32_t dt = input.dtype;
  if (dt != kFloat32 && dt != kFloat64 && dt != kBFloat16 && dt != kFloat16) {
    fail_arg(op, "input", std::string("has dtype ") + dtype_name(dt) + "; expected a floating dtype");
  }
  Tensor out = empty_contiguous({input.sizes[0], input.sizes[1], grid.sizes[1], grid.sizes[2], grid.sizes[3]}, dt);
  if (out.numel() == 0) return out;
  switch (dt) {
    case kFloat32: sample<float, float>(input, grid, interpolation_mode, padding_mode, align_corners, out); break;
    case kFloat64: sample<double, double>(input, grid, interpolation_mode, padding_mode, align_corners, out); break;
    case kBFloat16: sample<BF16, Low<BF16>>(input, grid, interpolation_mode, padding_mode, align_corners, out); break;
    default: sample<F16, Low<F16>>(input, grid, interpolation_mode, padding_mode, align_corners, out); break;
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_grid_sampler_3d(AtenTensorHandle input, AtenTensorHandle grid,
                                                         int64_t interpolation_mode, int64_t padding_mode,
                                                         int32_t align_corners, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& in = as_tensor(input, "input");
    const Tensor& g = as_tensor(grid, "grid");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::grid_sampler_3d(in, g, interpolation_mode, padding_mode, align_corners != 0,
                                               "aoti_torch_cpu_grid_sampler_3d"));
  });
}
