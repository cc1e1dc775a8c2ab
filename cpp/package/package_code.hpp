// The code of a loaded package, whatever its kind: the package ABI's entry
// points as plain function pointers (the hot path calls them directly, with
// no virtual dispatch), what the loader found while probing them, and the
// names to use in messages. Two implementations: an aotrun package library
// (package/native/native_library.hpp) and a format bridged inside libaotrun
// (package/pt2/bridge/aoti_bridge.hpp). Immutable once constructed; shared by the Package
// and every runner created from it, from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "package/symbols.hpp"
#include "package/constant_info.hpp"

namespace aotrun {

struct PackageFunctions {
  aotrun_pkg_abi_version_fn abi_version = nullptr;
  aotrun_pkg_get_last_error_fn get_last_error = nullptr;
  aotrun_pkg_container_destroy_fn destroy = nullptr;
  aotrun_pkg_container_get_num_inputs_fn num_inputs = nullptr;
  aotrun_pkg_container_get_num_outputs_fn num_outputs = nullptr;
  aotrun_pkg_container_get_input_spec_fn input_spec = nullptr;
  aotrun_pkg_container_get_output_spec_fn output_spec = nullptr;
  aotrun_pkg_container_get_output_shapes_fn output_shapes = nullptr;
  aotrun_pkg_container_run_fn run = nullptr;
  aotrun_pkg_container_run_single_threaded_fn run_single_threaded = nullptr;  // NULL: not usable
};

// Memory for the outputs of a run whose output sizes the model learns while
// it runs (PackageCode::run_sizing_outputs): asked once per output, on the
// thread that runs the model, as soon as that output's shape is known. The
// sink owns what it hands out; the package writes the output into it before
// its work completes.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Fills `out` (data, device, dtype, ndim, a shape the sink owns; compact
  // row-major) for output `index` of `shape`. AOTRUN_PKG_OK, or a package
  // status (OUT_OF_MEMORY, INVALID_ARGUMENT) with *why set. Never throws.
  virtual int32_t allocate(size_t index, const int64_t* shape, int32_t ndim, DLTensor* out,
                           std::string* why) noexcept = 0;
};

// One entry point of a package as the loader probed it: what `aotrun
// inspect` and aotrun_package_get_symbol report.
struct SymbolReport {
  std::string name;
  bool required = false;
  uint32_t since = 0;  // (major << 16) | minor of the ABI (or torch release) that added it
  bool found = false;  // the library exports it
  // Exported, but newer than the ABI the package declares, so never called.
  bool ignored = false;
};

// Which provider of libtorch's C shim opening a package would choose, asked
// before open and loading nothing (aotrun_package_options_preview_provider).
// All "" for kinds whose code calls no C shim.
struct ProviderPreview {
  std::string provider;  // "shim" or "libtorch"; "" when open would refuse
  std::string library;   // the file whose exports the model would bind to; "" when none
  std::string reason;    // one sentence: why, or the refusal open would give
};

// Names and capabilities of a package's code: plain data, settled when it
// is loaded.
struct PackageCodeInfo {
  // Names for messages: "ABI 1.1" or "AOTInductor .pt2"; the subject of "X
  // lacks Y" ("package ABI 1.0", "AOTInductor .pt2"); and the two run entry
  // points in this code's own vocabulary.
  std::string label;
  std::string subject;
  std::string run_symbol;
  std::string run_single_threaded_symbol;
  // Why run_single_threaded is exported but not used; "" when it is not.
  std::string single_threaded_ignored_reason;
  // Whether specs may report rank -1 ("not stated"): only a bridge whose
  // format does not always declare shapes (.pt2 archives) may.
  bool may_leave_specs_unknown = false;
  // Who implements the C shim its model calls ("shim": aotrun's own,
  // "libtorch") and why that one; both "" for packages that call none.
  std::string provider;
  std::string provider_reason;
};

class PackageCode {
 public:
  virtual ~PackageCode() = default;
  PackageCode(const PackageCode&) = delete;
  PackageCode& operator=(const PackageCode&) = delete;

  // Every entry point but container_create (create() below), all non-NULL
  // except run_single_threaded.
  const PackageFunctions& fn() const { return fn_; }
  // The package ABI the code implements ((major << 16) | minor).
  uint32_t abi_version() const { return abi_version_; }
  // The library that was loaded (for a bridged format, the archive).
  const std::string& path() const { return path_; }
  // The entry points as the loader probed them (a bridge's: the foreign ones).
  const std::vector<SymbolReport>& symbols() const { return symbols_; }
  // Names and capabilities.
  const PackageCodeInfo& info() const { return info_; }

  // Creates a container (aotrun_pkg_container_create's contract).
  virtual int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const = 0;

  // The constants the package's model holds itself, when its format keeps
  // them inside the model (a .pt2), as read at open; nullptr when the
  // package's constants are its ConstantTable (host-mapped, passed at
  // container_create). For such a format, the `constants` of
  // aotrun_pkg_create_args are replacements for some of these (already
  // checked against this list by the host), applied to the new container
  // before create returns.
  virtual const std::vector<ConstantInfo>* model_constants() const { return nullptr; }
  // The strides input `index` must have when not row-major (a .pt2 model
  // compiled for channels_last), read once the first container exists;
  // empty: row-major only, the package ABI's rule.
  virtual std::vector<int64_t> input_layout(size_t index) const {
    (void)index;
    return {};
  }
  // The model's own name for input / output `index` where it has one
  // besides the spec's name (a .pt2's keyword argument or output key,
  // call_spec.hpp), read once the first container exists; empty: none.
  virtual std::string model_name(bool input, size_t index) const {
    (void)input;
    (void)index;
    return {};
  }
  // Checks input values the package can check only from the host (a CUDA
  // .pt2's token ids against the tables it indexes), for a run that does
  // not pass through the package: a graph replay, or its capture. The
  // inputs are read on `stream` (the runner's own: a cudaStream_t), after
  // its earlier work. OK, or INVALID_ARGUMENT (PACKAGE when reading fails)
  // with *why set. Default: nothing to check.
  virtual int32_t check_input_values(const DLTensor* inputs, size_t num_inputs, void* stream, std::string* why) const {
    (void)inputs;
    (void)num_inputs;
    (void)stream;
    (void)why;
    return AOTRUN_PKG_OK;
  }

  // Whether some output's size is known only once the model has run (read
  // from the values of the inputs, issue #40): output_shapes cannot answer
  // for it, and run_sizing_outputs is how it runs. Settled at open.
  virtual bool sizes_outputs_during_run() const { return false; }
  // A run whose outputs `sink` allocates once the model has sized them,
  // enqueued on `stream` like run (single-threaded: run_single_threaded's
  // rules); the outputs are written when that work completes, and `sink`
  // must live until then. Not legal under stream capture. A package status,
  // with the message in get_last_error. Default: UNSUPPORTED.
  virtual int32_t run_sizing_outputs(aotrun_pkg_container* c, bool single_threaded, const DLTensor* inputs,
                                     size_t num_inputs, void* stream, OutputSink* sink) const {
    (void)c;
    (void)single_threaded;
    (void)inputs;
    (void)num_inputs;
    (void)stream;
    (void)sink;
    return AOTRUN_PKG_ERR_UNSUPPORTED;
  }

  // The package's message for its last failure on this thread, never empty.
  std::string last_error() const;

 protected:
  PackageCode() = default;
  PackageFunctions fn_;
  uint32_t abi_version_ = 0;
  std::string path_;
  std::vector<SymbolReport> symbols_;
  PackageCodeInfo info_;
};

// "1.1" for (1 << 16) | 1.
std::string abi_version_string(uint32_t v);

}  // namespace aotrun
