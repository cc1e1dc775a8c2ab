// An opened package, whatever its kind (package_kind.hpp): its code (the
// package ABI's entry points), its constants (mapped weights), its device and
// name, and the specs read through its entry points. Immutable once open;
// shared by the C handle and every runner created from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "package/constant_info.hpp"
#include "package/constant_table.hpp"
#include "package/package_code.hpp"
#include "package/package_options.hpp"
#include "package/tensor_spec.hpp"

namespace aotrun {

struct LoadTimings {
  uint64_t open_ns = 0, verify_ns = 0, dlopen_ns = 0, weights_ns = 0, metadata_ns = 0;
};

enum class RunMode { Threaded = 0, SingleThreaded = 1, Graph = 2 };
const char* mode_name(RunMode mode);

class Package {
 public:
  static std::shared_ptr<Package> open(const std::string& path, const PackageOptions& options);
  // Which C shim provider open(path, options) would choose now, loading
  // nothing (ProviderPreview; the package kinds' preview_provider). Throws
  // what open throws for a path it cannot read as a package.
  static ProviderPreview preview_provider(const std::string& path, const PackageOptions& options);

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  // The kind's name: "aotrun-so", "aotrun-dir" or "pt2".
  const char* format() const { return format_; }
  const std::string& dir() const { return dir_; }
  DLDevice device() const { return device_; }
  const PackageCode& code() const { return *code_; }
  uint32_t abi_version() const { return code_->abi_version(); }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  // False for a .pt2 whose specs are unknown: output shapes exist only after a run.
  bool outputs_known() const { return outputs_.empty() || outputs_[0].known; }
  const std::vector<aotrun_pkg_constant>& constants() const { return constants_.entries(); }
  // Every constant of the package, whoever holds it: its ConstantTable, or
  // (a .pt2) the model library (PackageCode::model_constants). What
  // aotrun_package_get_constant lists and updates are checked against.
  const std::vector<ConstantInfo>& constant_list() const { return constant_list_; }
  uint64_t constant_bytes() const { return constant_bytes_; }
  // Whether the model holds its own constants: containers are created with
  // replacements only (package_code.hpp), not with the whole table.
  bool model_holds_constants() const { return code_->model_constants() != nullptr; }
  bool hashes_verified() const { return hashes_verified_; }
  const LoadTimings& timings() const { return timings_; }

  // Whether `mode` runs natively; if not, *reason says why (one sentence).
  bool mode_available(RunMode mode, std::string* reason) const;
  // Cached reasons, for the C API's borrowed strings.
  const std::string& mode_reason(RunMode mode) const { return mode_reasons_[static_cast<int>(mode)]; }

  // True the first time any runner of this opened package falls back: the
  // fallback warning is emitted once per opened package, whichever modes fall
  // back (later fallbacks are logged at info level; each runner's reason is
  // in its stats).
  bool first_fallback() const { return !warned_.exchange(true); }

  // Message for a failed package call, read from the package on this thread.
  std::string package_error(const char* what, int32_t rc) const;

 private:
  Package() = default;
  void list_constants();

  std::string path_, dir_, name_;
  const char* format_ = "";
  DLDevice device_{kDLCPU, 0};
  std::unique_ptr<PackageCode> code_;
  ConstantTable constants_;
  std::vector<ConstantInfo> constant_list_;
  uint64_t constant_bytes_ = 0;
  bool hashes_verified_ = false;
  std::vector<TensorSpec> inputs_, outputs_;
  std::string mode_reasons_[3];
  LoadTimings timings_;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace aotrun
