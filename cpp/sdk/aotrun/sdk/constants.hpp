// Read-only view of the constants (weights) the host passes at container
// creation. The host owns them; they stay valid until the container is
// destroyed. Lookups are linear: they happen at creation, not per run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/dtype.hpp"
#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/tensor.hpp"

namespace aotrun {
namespace sdk {

class Constants {
 public:
  Constants() = default;
  Constants(const aotrun_pkg_constant* items, size_t count) : items_(items), count_(count) {}

  size_t size() const { return count_; }
  const aotrun_pkg_constant& at(size_t i) const { return items_[i]; }

  // NULL when absent.
  const DLTensor* find(const char* name) const {
    for (size_t i = 0; i < count_; ++i) {
      if (items_[i].name != nullptr && std::strcmp(items_[i].name, name) == 0) {
        return &items_[i].tensor;
      }
    }
    return nullptr;
  }

  // The constant or INVALID_ARGUMENT naming it.
  const DLTensor& get(const char* name) const {
    const DLTensor* t = find(name);
    if (t == nullptr) {
      fail_invalid("constant '" + std::string(name) + "' is missing (the package was given " + std::to_string(count_) +
                   " constants" + names_hint() + ")");
    }
    return *t;
  }

  // The constant, checked: dtype, exact shape, compact, data present.
  // Messages name the constant and give both shapes.
  const DLTensor& require(const char* name, DLDataType dtype, std::initializer_list<int64_t> shape) const {
    return require(name, dtype, std::vector<int64_t>(shape));
  }

  const DLTensor& require(const char* name, DLDataType dtype, const std::vector<int64_t>& shape) const {
    const DLTensor& t = get(name);
    const std::string prefix = "constant '" + std::string(name) + "'";
    if (!same_dtype(t.dtype, dtype)) {
      fail_invalid(prefix + " has dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(dtype));
    }
    const int32_t ndim = static_cast<int32_t>(shape.size());
    bool same = t.ndim == ndim && (ndim == 0 || t.shape != nullptr);
    for (int32_t d = 0; same && d < ndim; ++d) same = t.shape[d] == shape[d];
    if (!same) {
      fail_invalid(prefix + " has shape " +
                   (t.shape || t.ndim == 0 ? format_shape(t.shape, t.ndim) : std::string("(NULL)")) + ", expected " +
                   format_shape(shape.data(), ndim));
    }
    int64_t bytes = 0;
    if (!checked_nbytes(t, &bytes)) fail_invalid(prefix + " has a shape too large to address");
    if (!is_compact(t)) fail_invalid(prefix + " is not compact row-major");
    if (t.data == nullptr && bytes != 0) fail_invalid(prefix + " has no data");
    return t;
  }

  // Typed pointer to a constant's data (after require()).
  template <class T>
  const T* data(const char* name) const {
    return data_ptr<const T>(get(name));
  }

 private:
  std::string names_hint() const {
    if (count_ == 0) return "";
    std::string s = ": ";
    const size_t shown = count_ < 8 ? count_ : 8;
    for (size_t i = 0; i < shown; ++i) {
      if (i) s += ", ";
      s += items_[i].name ? items_[i].name : "(unnamed)";
    }
    if (shown < count_) s += ", ...";
    return s;
  }

  const aotrun_pkg_constant* items_ = nullptr;
  size_t count_ = 0;
};

}  // namespace sdk
}  // namespace aotrun
