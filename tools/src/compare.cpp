#include "compare.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "describe.h"

namespace aotrun_cli {

namespace {

bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

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

// Enough digits that two different float32 / float64 values print differently.
std::string value_text(double v, DLDataType dtype) {
  char buf[64];
  if (dtype.code == kDLInt || dtype.code == kDLUInt) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.*g", dtype.bits <= 32 ? 9 : 17, v);
  }
  return buf;
}

}  // namespace

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
  Comparison c;
  if (!same_dtype(actual.dtype(), expected.dtype())) {
    c.identical = false;
    c.layout = "dtype " + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
    return c;
  }
  if (actual.shape() != expected.shape()) {
    c.identical = false;
    c.layout = "shape " + shape_text(actual.shape()) + ", expected " + shape_text(expected.shape());
    return c;
  }
  c.dtype = actual.dtype();
  if (std::memcmp(actual.data(), expected.data(), actual.nbytes()) == 0) return c;

  c.identical = false;
  c.numeric = dtype_supported(actual.dtype());
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
        c.actual = actual.element(i);
        c.expected = expected.element(i);
      }
    }
    if (c.numeric) {
      const double x = actual.element(i), y = expected.element(i);
      if (!std::isnan(x) && !std::isnan(y)) c.max_abs_diff = std::fmax(c.max_abs_diff, std::fabs(x - y));
    }
  }
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
  if (c.numeric) text += ", max abs diff " + value_text(c.max_abs_diff, c.dtype);
  return text;
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
  if (c.numeric) {
    j["value"] = c.actual;
    j["expected"] = c.expected;
  }
  j["bits"] = c.actual_bits;
  j["expected_bits"] = c.expected_bits;
  j["differing_elements"] = c.differing;
  if (c.numeric) j["max_abs_diff"] = c.max_abs_diff;
  return j;
}

}  // namespace aotrun_cli
