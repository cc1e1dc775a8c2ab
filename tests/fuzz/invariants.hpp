// What the parsers promise about anything they accept, checked by the fuzz
// targets (on every accepted input) and by tests/reliability/parser_test.cpp
// (on every corpus file). Each function returns "" when the promise holds,
// else a description of the violation.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "package/manifest.hpp"
#include "package/safetensors.hpp"

namespace aotrun_fuzz {

inline bool plain_file_name(const std::string& s) {
  return !s.empty() && s.size() < 256 && s.find('/') == std::string::npos && s != "." && s != ".." &&
         s.find('\0') == std::string::npos;
}

inline bool lower_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// An accepted manifest names only files inside its directory, and every file
// the loader will read has a well-formed hash.
inline std::string check_manifest(const aotrun::Manifest& m) {
  if (m.name.empty() || m.name.size() > 256) return "name length " + std::to_string(m.name.size());
  if (m.device != "cpu" && m.device != "cuda") return "device '" + m.device + "'";
  if (!plain_file_name(m.library)) return "library '" + m.library + "' is not a plain file name";
  if (!m.sha256.count(m.library)) return "library has no hash";
  for (const auto& w : m.weights) {
    if (!plain_file_name(w)) return "weights '" + w + "' is not a plain file name";
    if (!m.sha256.count(w)) return "weights '" + w + "' has no hash";
  }
  for (const auto& [file, hex] : m.sha256) {
    if (!plain_file_name(file)) return "files key '" + file + "' is not a plain file name";
    if (!lower_hex64(hex)) return "hash of '" + file + "' is '" + hex + "'";
  }
  return "";
}

// Every accepted tensor lies inside the data section and its byte count is
// exactly what its dtype and shape need (computed here without overflow).
inline std::string check_tensors(const std::vector<aotrun::MappedTensor>& tensors, const uint8_t* data,
                                 uint64_t data_size) {
  for (const auto& t : tensors) {
    const std::string what = "tensor '" + t.name + "': ";
    if (t.shape.size() > 32) return what + "rank " + std::to_string(t.shape.size());
    if (t.dtype.lanes != 1 || t.dtype.bits == 0 || t.dtype.bits % 8 != 0) return what + "odd dtype";
    bool empty = false;
    for (int64_t d : t.shape) {
      if (d < 0) return what + "negative dimension";
      empty = empty || d == 0;
    }
    unsigned __int128 need = empty ? 0 : t.dtype.bits / 8;
    for (int64_t d : t.shape) {
      if (empty) break;
      need *= static_cast<uint64_t>(d);
      if (need > (static_cast<unsigned __int128>(1) << 64))
        return what + "byte size does not fit in 64 bits but was accepted";
    }
    if (need != t.bytes) {
      return what + "accepted with " + std::to_string(t.bytes) + " bytes but its dtype and shape need more than that";
    }
    const uint8_t* p = static_cast<const uint8_t*>(t.data);
    if (t.bytes > 0 && (p < data || p > data + data_size || t.bytes > static_cast<uint64_t>(data + data_size - p))) {
      return what + "data lies outside the data section";
    }
  }
  return "";
}

}  // namespace aotrun_fuzz
