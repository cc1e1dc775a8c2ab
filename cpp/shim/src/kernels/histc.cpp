// aoti_torch_cpu_histc (since aotrun-shim 1.8): the histogram of every
// element of self in `bins` equal bins over [min, max], as libtorch 2.15's
// CPU kernel (histogram_histc_cpu) makes it:
//  - min == max takes the range from the data (its smallest and largest
//    element; none for an empty self); a range still empty widens to
//    [min - 1, max + 1]. A range that is not finite (NaN in the data
//    included) or whose min exceeds its max is refused, and so are bounds
//    the dtype cannot hold (libtorch's linspace refuses them).
//  - The edges are min and max in self's dtype; an element x in [min, max]
//    goes to bin (x - min) * bins / (max - min) truncated, computed in
//    self's dtype (float16 and bfloat16 rounded after each step, as c10's
//    Half and BFloat16 arithmetic rounds), x == max to the last bin;
//    elements outside, and NaN, are not counted. Where the width overflows
//    the dtype (float16 over [-65504, 65504]) the quotient is NaN or
//    infinite and the element lands in the first bin, as it does in
//    libtorch's x86 builds.
//  - float32, float64, float16 and bfloat16; integers, bool and complex are
//    refused, as libtorch's dispatch refuses them. The result is [bins],
//    contiguous, of self's dtype.
// Counts are exact and rounded once to the dtype. libtorch adds 1 in the
// dtype per thread's share of the elements, then sums the shares: the same
// unless one thread's count in a bin passes what the dtype holds exactly
// (256 for bfloat16, 2048 for float16, 2^24 for float32).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

// v rounded to S (a no-op for float and double).
template <typename S>
typename Elem<S>::Key round_to(typename Elem<S>::Key v) {
  return Elem<S>::key(Elem<S>::from(v));
}

// A double as c10 converts it to S (float16 and bfloat16 through float).
template <typename S>
typename Elem<S>::Key to_key(double v) {
  if constexpr (std::is_same_v<S, double>) {
    return v;
  } else {
    return round_to<S>(static_cast<float>(v));
  }
}

// The largest finite value of S.
template <typename S>
double finite_max() {
  if constexpr (std::is_same_v<S, F16>) {
    return 65504.0;
  } else if constexpr (std::is_same_v<S, BF16>) {
    return 3.3895313892515355e38;
  } else {
    return static_cast<double>(std::numeric_limits<S>::max());
  }
}

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return std::to_string(v);
}

template <typename S>
Tensor histc_of(const Tensor& self, int64_t bins, double lo, double hi, const char* op) {
  using K = typename Elem<S>::Key;
  const int64_t nd = self.dim();
  const bool from_data = lo == hi;
  if (from_data && self.numel() > 0) {
    // The data's extremes (NaN wins, as aminmax propagates it).
    bool first = true, nan = false;
    K mn{}, mx{};
    for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
      const K v = load_key<S>(self.data(), nd > 0 ? offset_of(pos, self.strides) : 0);
      if (is_nan(v)) nan = true;
      if (first || v < mn) mn = v;
      if (first || v > mx) mx = v;
      first = false;
    });
    lo = nan ? std::nan("") : static_cast<double>(mn);
    hi = nan ? std::nan("") : static_cast<double>(mx);
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  const char* range_arg = from_data ? "self" : (std::isfinite(lo) ? "max" : "min");
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    fail_arg(op, range_arg, "the range [" + num(lo) + ", " + num(hi) + "] is not finite");
  }
  if (!(lo < hi)) fail_arg(op, "max", "must be larger than min (" + num(lo) + " >= " + num(hi) + ")");
  const double top = finite_max<S>();
  if (lo < -top || lo > top) fail_arg(op, "min", num(lo) + " cannot be converted to " + dtype_name(self.dtype));
  if (hi < -top || hi > top) fail_arg(op, "max", num(hi) + " cannot be converted to " + dtype_name(self.dtype));
  // The outer edges as libtorch's linspace makes them in S: min and max.
  const K left = to_key<S>(lo);
  const K right = to_key<S>(hi);
  const K nbins = to_key<S>(static_cast<double>(bins));
  const K width = round_to<S>(right - left);
  std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
  for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
    const K x = load_key<S>(self.data(), nd > 0 ? offset_of(pos, self.strides) : 0);
    if (!(x >= left && x <= right)) return;  // outside, or NaN
    const K scaled = round_to<S>(round_to<S>(x - left) * nbins);
    const K q = round_to<S>(scaled / width);
    // A quotient that is NaN or infinite (the range's width overflowed the
    // dtype: float16's [-65504, 65504]) goes to the first bin, as on
    // libtorch's x86 builds: its cast gives the lowest int64, whose offset
    // times the element size wraps to 0.
    int64_t b = std::isfinite(static_cast<double>(q)) ? static_cast<int64_t>(q) : 0;
    if (b < 0 || b > bins) return;
    if (b == bins) b = bins - 1;
    ++counts[static_cast<size_t>(b)];
  });
  Tensor out = empty_contiguous({bins}, self.dtype);
  for (int64_t b = 0; b < bins; ++b) store<S>(out.data(), b, Elem<S>::from(static_cast<K>(counts[b])));
  return out;
}

}  // namespace

Tensor histc(const Tensor& self, int64_t bins, double min, double max, const char* op) {
  expect_cpu_defined(self, op, "self");
  if (bins <= 0) fail_arg(op, "bins", "must be > 0, got " + std::to_string(bins));
  Tensor out;
  switch (self.dtype) {
    case kFloat32: out = histc_of<float>(self, bins, min, max, op); break;
    case kFloat64: out = histc_of<double>(self, bins, min, max, op); break;
    case kFloat16: out = histc_of<F16>(self, bins, min, max, op); break;
    case kBFloat16: out = histc_of<BF16>(self, bins, min, max, op); break;
    default: fail_arg(op, "self", std::string("has unsupported dtype ") + dtype_name(self.dtype));
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                               AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::histc(s, bins, min, max, "aoti_torch_cpu_histc"));
  });
}
