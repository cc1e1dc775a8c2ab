#include "compare.hpp"

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>

#include "describe.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

// Little-endian host: the most significant byte is the last one.
std::string hex_bytes(const unsigned char* p, size_t n) {
  std::string text = "0x";
  char buf[3];
  for (size_t i = n; i-- > 0;) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    text += buf;
  }
  return text;
}

// The dtype of a complex dtype's parts (a modulus prints like them).
DLDataType real_part_type(DLDataType d) {
  if (d.code == kDLComplex) return DLDataType{kDLFloat, static_cast<uint8_t>(d.bits / 2), d.lanes};
  return d;
}

// Enough digits that two different float32 / float64 values print differently
// (a complex number's parts each like its part type's: "0.5-2j").
std::string value_text(double v, DLDataType dtype) {
  char buf[64];
  if (dtype.code == kDLInt || dtype.code == kDLUInt || is_bool(dtype)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.*g", real_part_type(dtype).bits <= 32 ? 9 : 17, v);
  }
  return buf;
}

std::string value_text(std::complex<double> v, DLDataType dtype) {
  if (dtype.code != kDLComplex) return value_text(v.real(), dtype);
  return complex_text(value_text(v.real(), dtype), value_text(v.imag(), dtype));
}

// torch.isclose's rule (torch.testing.assert_close with equal_nan): a NaN
// (either part of a complex number) matches only a NaN, an infinity only the
// same value, else |actual - expected| <= atol + rtol * |expected| with the
// complex modulus for complex numbers.
bool close_enough(std::complex<double> x, std::complex<double> y, const Tolerance& t) {
  const auto nan = [](std::complex<double> z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  const auto inf = [](std::complex<double> z) { return std::isinf(z.real()) || std::isinf(z.imag()); };
  if (nan(x) || nan(y)) return nan(x) && nan(y);
  if (inf(x) || inf(y)) return x == y;
  return std::abs(x - y) <= t.atol + t.rtol * std::abs(y);
}

}  // namespace

Tolerance default_tolerance(DLDataType dtype) {
  switch (dtype.code) {
    case kDLFloat:
      if (dtype.bits == 16) return {1e-3, 1e-5};
      if (dtype.bits == 32) return {1.3e-6, 1e-5};
      if (dtype.bits == 64) return {1e-7, 1e-7};
      return {};
    case kDLBfloat: return dtype.bits == 16 ? Tolerance{1.6e-2, 1e-5} : Tolerance{};
    case kDLComplex:
      if (dtype.bits == 64) return {1.3e-6, 1e-5};
      if (dtype.bits == 128) return {1e-7, 1e-7};
      return {};
    default: return {};
  }
}

Tolerance ToleranceOverride::for_dtype(DLDataType dtype) const {
  Tolerance t = default_tolerance(dtype);
  if (has_rtol) t.rtol = rtol;
  if (has_atol) t.atol = atol;
  return t;
}

std::string tolerance_text(const Tolerance& t) {
  if (t.exact()) return "bit for bit";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "rtol %g, atol %g", t.rtol, t.atol);
  return buf;
}

std::vector<int64_t> unravel_index(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    const auto extent = static_cast<size_t>(shape[d]);
    if (extent == 0) continue;
    index[d] = static_cast<int64_t>(flat % extent);
    flat /= extent;
  }
  return index;
}

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected) {
  return compare_tensors(actual, expected, Tolerance{});
}

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, const Tolerance& tolerance) {
  Comparison c;
  c.tolerance = tolerance;
  if (!same_dtype(actual.dtype(), expected.dtype())) {
    c.identical = false;
    c.within_tolerance = false;
    c.layout = "dtype " + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
    return c;
  }
  if (actual.shape() != expected.shape()) {
    c.identical = false;
    c.within_tolerance = false;
    c.layout = "shape " + shape_text(actual.shape()) + ", expected " + shape_text(expected.shape());
    return c;
  }
  c.dtype = actual.dtype();
  if (std::memcmp(actual.data(), expected.data(), actual.nbytes()) == 0) return c;

  c.identical = false;
  c.numeric = dtype_supported(actual.dtype()) || is_complex_dtype(actual.dtype());
  // Tolerances apply to numbers the CLI can read; anything else is bitwise.
  const bool tolerant = c.numeric && !tolerance.exact();
  const size_t elem = dtype_size(actual.dtype());
  const auto* a = static_cast<const unsigned char*>(actual.data());
  const auto* e = static_cast<const unsigned char*>(expected.data());
  for (size_t i = 0; i < actual.numel(); ++i) {
    if (std::memcmp(a + i * elem, e + i * elem, elem) == 0) continue;
    if (c.differing++ == 0) {
      c.first_index = i;
      c.first_multi_index = unravel_index(i, actual.shape());
      c.actual_bits = hex_bytes(a + i * elem, elem);
      c.expected_bits = hex_bytes(e + i * elem, elem);
      if (c.numeric) {
        c.actual = actual.complex_element(i);
        c.expected = expected.complex_element(i);
      }
    }
    if (c.numeric) {
      const std::complex<double> x = actual.complex_element(i), y = expected.complex_element(i);
      const double diff = std::abs(x - y);
      if (!std::isnan(diff)) c.max_abs_diff = std::fmax(c.max_abs_diff, diff);
      if (!tolerant || !close_enough(x, y, tolerance)) ++c.beyond_tolerance;
    } else {
      ++c.beyond_tolerance;
    }
  }
  c.within_tolerance = c.beyond_tolerance == 0;
  return c;
}

std::string comparison_text(const Comparison& c) {
  if (c.identical) return "identical";
  if (!c.layout.empty()) return c.layout;
  std::string text = "index " + std::to_string(c.first_index) + " " + shape_text(c.first_multi_index) + ": ";
  if (c.numeric) {
    text += "got " + value_text(c.actual, c.dtype) + " (" + c.actual_bits + "), expected " +
            value_text(c.expected, c.dtype) + " (" + c.expected_bits + ")";
  } else {
    text += "got " + c.actual_bits + ", expected " + c.expected_bits;
  }
  text += ", " + std::to_string(c.differing) + (c.differing == 1 ? " element differs" : " elements differ");
  if (c.numeric) text += ", max abs diff " + value_text(c.max_abs_diff, real_part_type(c.dtype));
  return text;
}

std::string tolerance_verdict_text(const Comparison& c) {
  if (c.identical) return "identical";
  if (!c.layout.empty() || c.tolerance.exact()) return comparison_text(c);
  if (c.within_tolerance) {
    return "within " + tolerance_text(c.tolerance) + " (" + std::to_string(c.differing) +
           (c.differing == 1 ? " element differs" : " elements differ") + ", max abs diff " +
           value_text(c.max_abs_diff, real_part_type(c.dtype)) + ")";
  }
  return comparison_text(c) + "; " + std::to_string(c.beyond_tolerance) + " beyond " + tolerance_text(c.tolerance);
}

nlohmann::ordered_json comparison_json(const Comparison& c) {
  nlohmann::ordered_json j = {{"identical", c.identical}};
  if (c.identical) return j;
  if (!c.layout.empty()) {
    j["layout"] = c.layout;
    return j;
  }
  j["index"] = c.first_index;
  j["multi_index"] = c.first_multi_index;
  if (c.numeric && c.dtype.code == kDLComplex) {  // [real, imaginary]
    j["value"] = {c.actual.real(), c.actual.imag()};
    j["expected"] = {c.expected.real(), c.expected.imag()};
  } else if (c.numeric) {
    j["value"] = c.actual.real();
    j["expected"] = c.expected.real();
  }
  j["bits"] = c.actual_bits;
  j["expected_bits"] = c.expected_bits;
  j["differing_elements"] = c.differing;
  if (c.numeric) j["max_abs_diff"] = c.max_abs_diff;
  if (!c.tolerance.exact()) {
    j["within_tolerance"] = c.within_tolerance;
    j["beyond_tolerance"] = c.beyond_tolerance;
  }
  return j;
}

}  // namespace aotrun::cli
