// JSON from package files (manifests, safetensors headers): parsed with
// nlohmann::json, refusing duplicate keys, which nlohmann would silently
// resolve to the last one (two "fc1.weight" entries must not be ambiguous),
// and documents nested deeper than any package file needs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace aotrun {

// Deepest nesting a package file may use (a safetensors header needs 3).
constexpr int kMaxPackageJsonDepth = 16;

// A parsed document that is released without allocating. nlohmann's
// destructor flattens a non-empty object or array into a heap-allocated
// stack; out of memory there, inside a noexcept destructor, ends the process.
// Emptying the tree bottom-up first (depth is bounded at parse) leaves the
// destructor nothing to flatten.
class PackageJson {
 public:
  explicit PackageJson(nlohmann::json&& j) noexcept : j_(std::move(j)) {}
  PackageJson(PackageJson&& other) noexcept : j_(std::move(other.j_)) {}
  PackageJson(const PackageJson&) = delete;
  PackageJson& operator=(const PackageJson&) = delete;
  PackageJson& operator=(PackageJson&&) = delete;
  ~PackageJson() { drain(j_); }

  const nlohmann::json& get() const { return j_; }

 private:
  static void drain(nlohmann::json& j) noexcept;
  nlohmann::json j_;
};

// Throws Error(code, "<where>: invalid <what>: ...") on invalid JSON,
// Error(code, "<where>: duplicate key '<k>' in <what>") on a duplicate key and
// Error(code, "<where>: <what> is nested deeper than 16 levels").
PackageJson parse_package_json(const char* begin, const char* end, const std::string& where, const std::string& what,
                               Code code);

}  // namespace aotrun
