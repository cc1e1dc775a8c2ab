#include "package/spec_reader.hpp"

#include <algorithm>

#include "device/cpu/host_services.hpp"
#include "base/log.hpp"
#include "base/guard.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

// Host table for the metadata-only container: it never runs anything, but
// packages may log or create events.
aotrun_pkg_host* metadata_host() {
  static cpu::Stream stream(cpu::Stream::Kind::Inline);
  static cpu::HostContext ctx = [] {
    cpu::HostContext c;
    c.default_stream = &stream;
    c.package_name = "(metadata)";
    return c;
  }();
  static aotrun_pkg_host host = cpu::make_host_services(&ctx);
  return &host;
}

std::string failed(const std::string& name, const PackageCode& code, const char* what, int32_t rc) {
  return "package '" + name + "': " + what + " failed (status " + std::to_string(rc) + "): " + code.last_error();
}

// Refuses spec values no tensor could match (BAD_PACKAGE).
void check_spec_values(const std::string& name, const aotrun_pkg_tensor_spec& s, bool input, size_t index) {
  const std::string what = std::string(input ? "input " : "output ") + std::to_string(index) +
                           (s.name != nullptr ? " ('" + std::string(s.name) + "')" : std::string());
  // Bits 0 or lanes 0 would make every tensor of this spec zero bytes.
  if (s.dtype.bits == 0 || s.dtype.lanes == 0) {
    fail(Code::BadPackage, "package '" + name + "' declares " + what + " with dtype code " +
                               std::to_string(s.dtype.code) + ", " + std::to_string(s.dtype.bits) + " bits, " +
                               std::to_string(s.dtype.lanes) + " lanes: no such dtype");
  }
  for (int d = 0; d < s.ndim; ++d) {
    if (s.shape[d] < -1) {
      fail(Code::BadPackage, "package '" + name + "' declares " + what + " with shape " +
                                 shape_string(s.shape, s.ndim) + ": dim " + std::to_string(d) +
                                 " is negative (only -1, any size, is allowed)");
    }
  }
}

// Destroys the metadata container on every path out of read_specs; on a
// failure path a throw from destroy can only be logged, the first error is
// the one told.
struct ContainerGuard {
  const std::string& name;
  const PackageCode& code;
  aotrun_pkg_container* c;
  ~ContainerGuard() {
    if (c == nullptr) return;
    int32_t ignored = 0;
    const Status st = guard_package_call(
        name, "container_destroy", [this] { return code.fn().destroy(c); }, &ignored);
    if (!st.ok()) log_unreported(st, "while destroying the metadata container");
  }
};

}  // namespace

PackageSpecs read_specs(const PackageCode& code, const std::string& name, DLDevice device,
                        const ConstantTable& constants, const std::string& dir) {
  const PackageFunctions& f = code.fn();
  aotrun_pkg_create_args args{};
  args.struct_size = sizeof(args);
  args.num_models = 0;
  args.device = device;
  args.host = metadata_host();
  args.constants = constants.entries().data();
  args.num_constants = constants.entries().size();
  args.package_dir = dir.empty() ? nullptr : dir.c_str();
  aotrun_pkg_container* c = nullptr;
  // Every call into the package is guarded: a throw is a PACKAGE error.
  int32_t rc = package_call(name, "container_create", [&] { return code.create(&c, &args); });
  if (rc != AOTRUN_PKG_OK || c == nullptr) {
    // The package refuses its own files (BAD_PACKAGE) or something aotrun
    // would have to provide (UNSUPPORTED); anything else is its failure.
    fail(rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::BadPackage
         : rc == AOTRUN_PKG_ERR_UNSUPPORTED    ? Code::Unsupported
         : rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY  ? Code::OutOfMemory
                                               : Code::Package,
         failed(name, code, "creating the metadata container (checks constants)", rc));
  }
  ContainerGuard guard{name, code, c};

  auto read = [&](bool input, std::vector<TensorSpec>* out) {
    size_t n = 0;
    const char* count_entry = input ? "get_num_inputs" : "get_num_outputs";
    rc = package_call(name, count_entry, [&] { return input ? f.num_inputs(c, &n) : f.num_outputs(c, &n); });
    if (rc != AOTRUN_PKG_OK) fail(Code::Package, failed(name, code, count_entry, rc));
    if (n > 4096) fail(Code::BadPackage, "package '" + name + "' reports " + std::to_string(n) + " tensors");
    const char* spec_entry = input ? "get_input_spec" : "get_output_spec";
    for (size_t i = 0; i < n; ++i) {
      aotrun_pkg_tensor_spec s{};
      s.struct_size = sizeof(s);
      rc = package_call(name, spec_entry, [&] { return input ? f.input_spec(c, i, &s) : f.output_spec(c, i, &s); });
      if (rc != AOTRUN_PKG_OK) fail(Code::Package, failed(name, code, spec_entry, rc));
      // Only the bytes the package says it filled are read.
      const size_t filled = std::min(s.struct_size, sizeof(s));
      if (filled < AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0) {
        fail(Code::BadPackage, "package '" + name + "' filled " + std::to_string(filled) +
                                   " bytes of a tensor spec; ABI 1.0 needs " +
                                   std::to_string(AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0));
      }
      const bool unknown = s.ndim == -1 && code.info().may_leave_specs_unknown;
      if (!unknown && (s.ndim < 0 || s.ndim > 32 || (s.ndim > 0 && s.shape == nullptr))) {
        fail(Code::BadPackage, "package '" + name + "' reports an invalid rank for " + (input ? "input " : "output ") +
                                   std::to_string(i));
      }
      if (!unknown) check_spec_values(name, s, input, i);  // unknown ones are checked per run
      TensorSpec t;
      t.name = s.name != nullptr ? s.name : (input ? "input" : "output") + std::to_string(i);
      t.dtype = s.dtype;
      t.known = !unknown;
      t.model_name = code.model_name(input, i);
      if (!unknown) t.shape.assign(s.shape, s.shape + s.ndim);
      if (input && !unknown) {
        t.strides = code.input_layout(i);
        if (!t.strides.empty() && t.strides.size() != t.shape.size()) {
          fail(Code::BadPackage, "package '" + name + "' states " + std::to_string(t.strides.size()) +
                                     " strides for input " + std::to_string(i) + " of rank " +
                                     std::to_string(t.shape.size()));
        }
      }
      out->push_back(std::move(t));
    }
  };
  PackageSpecs specs;
  read(true, &specs.inputs);
  read(false, &specs.outputs);
  // On success a throw from destroy is an error like any other.
  aotrun_pkg_container* done = guard.c;
  guard.c = nullptr;
  package_call(name, "container_destroy", [&] { return f.destroy(done); });
  return specs;
}

}  // namespace aotrun
