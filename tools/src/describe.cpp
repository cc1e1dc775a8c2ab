#include "describe.hpp"

#include <cstdio>

namespace aotrun::cli {

std::string dtype_name(DLDataType dtype) {
  std::string base;
  switch (dtype.code) {
    case kDLInt: base = "int" + std::to_string(dtype.bits); break;
    case kDLUInt:
      // DLPack (before it had kDLBool) spells bool as a 1-bit unsigned int.
      base = dtype.bits == 1 ? "bool" : "uint" + std::to_string(dtype.bits);
      break;
    case kDLFloat: base = "float" + std::to_string(dtype.bits); break;
    case kDLBfloat: base = "bfloat" + std::to_string(dtype.bits); break;
    case kDLComplex: base = "complex" + std::to_string(dtype.bits); break;
    case kDtypeCodeBool: base = "bool"; break;
    default:
      return "dtype(code=" + std::to_string(dtype.code) + ",bits=" + std::to_string(dtype.bits) +
             ",lanes=" + std::to_string(dtype.lanes) + ")";
  }
  if (dtype.lanes != 1) base += "x" + std::to_string(dtype.lanes);
  return base;
}

size_t dtype_size(DLDataType dtype) {
  const size_t bits = static_cast<size_t>(dtype.bits) * dtype.lanes;
  return bits % 8 == 0 ? bits / 8 : 0;
}

std::string device_type_name(DLDeviceType type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "device(" + std::to_string(static_cast<int>(type)) + ")";
  }
}

std::string device_name(DLDevice device) {
  return device_type_name(device.device_type) + ":" + std::to_string(device.device_id);
}

std::string abi_version_string(uint32_t version) {
  return std::to_string(version >> 16) + "." + std::to_string(version & 0xFFFFu);
}

std::optional<aotrun_mode> parse_mode(const std::string& text) {
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    if (text == aotrun_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

std::string spec_shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ", ";
    if (shape[i] < 0) {
      text += i == 0 ? "batch" : "?";
    } else {
      text += std::to_string(shape[i]);
    }
  }
  return text + "]";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string duration_text(double ns) {
  char buf[64];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.2f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f s", ns / 1e9);
  }
  return buf;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[unit]);
  return buf;
}

}  // namespace aotrun::cli
