#include "package/package.hpp"

#include <cerrno>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "device/cpu/host_services.hpp"
#include "package/manifest.hpp"
#include "pt2/aoti_bridge.hpp"
#include "pt2/pt2_archive.hpp"
#include "runner/package_call.hpp"
#include "runner/validate.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace aotrun {
namespace {

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "libmlp.so" -> "mlp", "model.so.1" -> "model".
std::string stem(const std::string& file) {
  std::string s = file;
  if (auto so = s.find(".so"); so != std::string::npos) s = s.substr(0, so);
  if (s.rfind("lib", 0) == 0 && s.size() > 3) s = s.substr(3);
  return s.empty() ? file : s;
}

// `fd` >= 0: hash that open descriptor instead of opening the path again.
void verify_hash(const std::string& dir, const std::string& file, const std::string& expected, int fd = -1) {
  const std::string path = dir + "/" + file;
  std::string actual;
  try {
    actual = fd >= 0 ? sha256_fd_hex(fd, path) : sha256_file_hex(path);
  } catch (const Error& e) {
    if (e.code() == Code::NotFound) fail(Code::BadPackage, "manifest lists '" + file + "' but " + path + " is missing");
    throw;
  }
  if (actual != expected) {
    fail(Code::Integrity, "sha256 of '" + path + "' is " + actual + " but the manifest says " + expected +
                              " (file modified or corrupted)");
  }
}

// Loading a package runs its code: a file that someone else could have
// replaced is refused unless the caller opted in.
void check_trusted(const std::string& path, const PackageOptions& options, int fd = -1) {
  if (options.allow_untrusted_files) return;
  struct stat st {};
  if ((fd >= 0 ? ::fstat(fd, &st) : ::stat(path.c_str(), &st)) != 0) return;  // absence is reported where needed
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    fail(Code::Integrity, "'" + path + "' is writable by group or others; refusing to load it "
                              "(fix its permissions, or allow untrusted files in the package options)");
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    fail(Code::Integrity, "'" + path + "' is owned by uid " + std::to_string(st.st_uid) +
                              ", neither this process's user nor root; refusing to load it "
                              "(or allow untrusted files in the package options)");
  }
}

void check_pin(const std::string& path, const PackageOptions& options, int fd = -1) {
  if (options.expected_sha256.empty()) return;
  const std::string actual = fd >= 0 ? sha256_fd_hex(fd, path) : sha256_file_hex(path);
  if (actual != options.expected_sha256) {
    fail(Code::Integrity, "sha256 of '" + path + "' is " + actual + " but the caller pinned " + options.expected_sha256);
  }
}

// One descriptor of the library serves the trust check, the hash and the ELF
// check. dlopen itself opens the path again: the window in between is closed
// by refusing package files others can write (check_trusted).
struct LibraryFd {
  int fd = -1;
  ~LibraryFd() {
    if (fd >= 0) ::close(fd);
  }
  void open(const std::string& path, bool in_directory) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return;
    int err = errno;
    if (err == ENOENT && in_directory) fail(Code::BadPackage, "the package library " + path + " is missing");
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed, "cannot open '" + path + "': " + std::strerror(err));
  }
};

// Host table for the metadata-only container that reads specs at open:
// it never runs anything, but packages may log or create events.
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

}  // namespace

const char* mode_name(RunMode mode) {
  switch (mode) {
    case RunMode::Threaded: return "threaded";
    case RunMode::SingleThreaded: return "single_threaded";
    case RunMode::Graph: return "graph";
  }
  return "unknown";
}

std::string Package::package_error(const char* what, int32_t rc) const {
  return "package '" + name_ + "': " + what + " failed (status " + std::to_string(rc) + "): " + lib_->last_error();
}

std::shared_ptr<Package> Package::open(const std::string& path, const PackageOptions& options) {
  const uint64_t t0 = now_ns();
  if (path.empty()) fail(Code::InvalidArgument, "package path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed,
         "package path '" + path + "' " + (err == ENOENT ? "does not exist" : std::string("cannot be read: ") + std::strerror(err)));
  }
  std::shared_ptr<Package> p(new Package());
  p->path_ = path;
  std::string lib_path;
  LibraryFd lib_fd;
  uint32_t expected_abi = 0;
  Manifest manifest;
  if (S_ISDIR(st.st_mode)) {
    p->dir_ = path;
    check_trusted(path, options);
    check_trusted(path + "/manifest.json", options);
    check_pin(path + "/manifest.json", options);
    manifest = read_manifest(path);
    p->name_ = manifest.name;
    p->device_ = DLDevice{manifest.device == "cuda" ? kDLCUDA : kDLCPU, 0};
    expected_abi = manifest.abi_version;
    lib_path = path + "/" + manifest.library;
    lib_fd.open(lib_path, true);
    check_trusted(lib_path, options, lib_fd.fd);
    for (const auto& w : manifest.weights) check_trusted(path + "/" + w, options);
    // A pinned manifest is only worth something if the files match it.
    if (options.verify_hashes || !options.expected_sha256.empty()) {
      const uint64_t tv = now_ns();
      for (const auto& [file, hex] : manifest.sha256) {
        verify_hash(path, file, hex, file == manifest.library ? lib_fd.fd : -1);
      }
      p->hashes_verified_ = true;
      p->timings_.verify_ns = now_ns() - tv;
    }
  } else if (S_ISREG(st.st_mode)) {
    p->name_ = stem(base_name(path));
    lib_path = path;
    lib_fd.open(path, false);
    check_trusted(path, options, lib_fd.fd);
    check_pin(path, options, lib_fd.fd);
    const bool pt2_name = path.size() > 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;
    if (pt2_name && !pt2::looks_like_zip(lib_fd.fd)) {
      fail(Code::BadPackage, "archive '" + path + "' is not a zip archive (a .pt2 is a zip file)");
    }
    if (pt2::looks_like_zip(lib_fd.fd)) {
      // A PyTorch AOTInductor archive: the pin and trust checks above cover
      // the archive; what it extracts lives in a private directory.
      if (auto dot = p->name_.rfind(".pt2"); dot != std::string::npos && dot + 4 == p->name_.size()) {
        p->name_.resize(dot);
      }
      if (!options.pt2_model.empty() && options.pt2_model != pt2::kDefaultModel) {
        p->name_ += ":" + options.pt2_model;
      }
      const uint64_t t = now_ns();
      p->lib_ = std::make_unique<PackageLibrary>(pt2::open_pt2(path, p->name_, {options.pt2_model, options.libtorch}));
      p->timings_.dlopen_ns = now_ns() - t;
    }
  } else {
    fail(Code::LoadFailed, "package path '" + path + "' is neither a regular file nor a directory");
  }

  uint64_t t = now_ns();
  if (!p->lib_) {
    p->lib_ = std::make_unique<PackageLibrary>(lib_path, expected_abi, lib_fd.fd);
    p->timings_.dlopen_ns = now_ns() - t;
  }

  t = now_ns();
  std::set<std::string> seen;  // a .pt2 has no manifest, hence no weights here
  for (const auto& w : manifest.weights) {
    p->weights_.push_back(SafetensorsFile::open(p->dir_ + "/" + w));
  }
  for (const auto& file : p->weights_) {
    for (const auto& m : file->tensors()) {
      if (!seen.insert(m.name).second) {
        fail(Code::BadPackage, "constant '" + m.name + "' appears in more than one weights file of package '" + p->name_ + "'");
      }
    }
  }
  p->constant_names_.reserve(seen.size());
  for (const auto& file : p->weights_) {
    for (const auto& m : file->tensors()) {
      p->constant_names_.push_back(m.name);
      aotrun_pkg_constant c{};
      c.tensor.data = const_cast<void*>(m.data);  // read-only mapping; packages must not write
      c.tensor.device = DLDevice{kDLCPU, 0};
      c.tensor.ndim = static_cast<int>(m.shape.size());
      c.tensor.dtype = m.dtype;
      c.tensor.shape = const_cast<int64_t*>(m.shape.data());
      p->constants_.push_back(c);
      p->constant_bytes_ += m.bytes;
    }
  }
  for (size_t i = 0; i < p->constants_.size(); ++i) p->constants_[i].name = p->constant_names_[i].c_str();
  p->timings_.weights_ns = now_ns() - t;

  t = now_ns();
  p->read_specs();
  p->timings_.metadata_ns = now_ns() - t;

  for (RunMode m : {RunMode::Threaded, RunMode::SingleThreaded, RunMode::Graph}) {
    p->mode_available(m, &p->mode_reasons_[static_cast<int>(m)]);
  }
  p->timings_.open_ns = now_ns() - t0;
  return p;
}

void Package::read_specs() {
  const auto& f = lib_->fn();
  aotrun_pkg_create_args args{};
  args.struct_size = sizeof(args);
  args.num_models = 0;
  args.device = device_;
  args.host = metadata_host();
  args.constants = constants_.data();
  args.num_constants = constants_.size();
  args.package_dir = dir_.empty() ? nullptr : dir_.c_str();
  aotrun_pkg_container* c = nullptr;
  // Every call into the package is guarded: a throw is a PACKAGE error.
  int32_t rc = package_call(name_, "container_create", [&] { return lib_->create(&c, &args); });
  if (rc != AOTRUN_PKG_OK || c == nullptr) {
    fail(rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::BadPackage : Code::Package,
         package_error("creating the metadata container (checks constants)", rc));
  }
  // Destroy the container on every path out of here; on a failure path a
  // throw from destroy can only be logged, the first error is the one told.
  struct Guard {
    const std::string& name;
    const PackageFunctions& f;
    aotrun_pkg_container* c;
    ~Guard() {
      if (c == nullptr) return;
      int32_t ignored = 0;
      const Status st = guard_package_call(name, "container_destroy", [this] { return f.destroy(c); }, &ignored);
      if (!st.ok()) log_unreported(st, "while destroying the metadata container");
    }
  } guard{name_, f, c};

  auto read = [&](bool input, std::vector<TensorSpec>* out) {
    size_t n = 0;
    const char* count_entry = input ? "get_num_inputs" : "get_num_outputs";
    rc = package_call(name_, count_entry, [&] { return input ? f.num_inputs(c, &n) : f.num_outputs(c, &n); });
    if (rc != AOTRUN_PKG_OK) fail(Code::Package, package_error(count_entry, rc));
    if (n > 4096) fail(Code::BadPackage, "package '" + name_ + "' reports " + std::to_string(n) + " tensors");
    const char* spec_entry = input ? "get_input_spec" : "get_output_spec";
    for (size_t i = 0; i < n; ++i) {
      aotrun_pkg_tensor_spec s{};
      s.struct_size = sizeof(s);
      rc = package_call(name_, spec_entry, [&] { return input ? f.input_spec(c, i, &s) : f.output_spec(c, i, &s); });
      if (rc != AOTRUN_PKG_OK) fail(Code::Package, package_error(spec_entry, rc));
      // Only the bytes the package says it filled are read.
      const size_t filled = std::min(s.struct_size, sizeof(s));
      if (filled < AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0) {
        fail(Code::BadPackage, "package '" + name_ + "' filled " + std::to_string(filled) + " bytes of a tensor spec; ABI 1.0 needs " +
                                   std::to_string(AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0));
      }
      // Only the .pt2 bridge may say "unknown" (-1).
      const bool unknown = s.ndim == -1 && lib_->bridged();
      if (!unknown && (s.ndim < 0 || s.ndim > 32 || (s.ndim > 0 && s.shape == nullptr))) {
        fail(Code::BadPackage, "package '" + name_ + "' reports an invalid rank for " + (input ? "input " : "output ") + std::to_string(i));
      }
      check_spec_values(s, unknown, input, i);
      TensorSpec t;
      t.name = s.name != nullptr ? s.name : (input ? "input" : "output") + std::to_string(i);
      t.dtype = s.dtype;
      t.known = !unknown;
      if (!unknown) t.shape.assign(s.shape, s.shape + s.ndim);
      out->push_back(std::move(t));
    }
  };
  read(true, &inputs_);
  read(false, &outputs_);
  // On success a throw from destroy is an error like any other.
  aotrun_pkg_container* done = guard.c;
  guard.c = nullptr;
  package_call(name_, "container_destroy", [&] { return f.destroy(done); });
}

void Package::check_spec_values(const aotrun_pkg_tensor_spec& s, bool unknown, bool input, size_t index) const {
  const std::string what = std::string(input ? "input " : "output ") + std::to_string(index) +
                           (s.name != nullptr ? " ('" + std::string(s.name) + "')" : std::string());
  if (unknown) return;  // the .pt2 bridge's "not stated": checked per run
  // Bits 0 or lanes 0 would make every tensor of this spec zero bytes.
  if (s.dtype.bits == 0 || s.dtype.lanes == 0) {
    fail(Code::BadPackage, "package '" + name_ + "' declares " + what + " with dtype code " +
                               std::to_string(s.dtype.code) + ", " + std::to_string(s.dtype.bits) + " bits, " +
                               std::to_string(s.dtype.lanes) + " lanes: no such dtype");
  }
  for (int d = 0; d < s.ndim; ++d) {
    if (s.shape[d] < -1) {
      fail(Code::BadPackage, "package '" + name_ + "' declares " + what + " with shape " +
                                 shape_string(s.shape, s.ndim) + ": dim " + std::to_string(d) +
                                 " is negative (only -1, any size, is allowed)");
    }
  }
}

bool Package::mode_available(RunMode mode, std::string* reason) const {
  const bool st = lib_->found(kSymRunSingleThreaded);
  // "ABI 1.0" for aotrun packages, "AOTInductor .pt2" for bridged ones.
  const std::string label = lib_->label();
  const std::string run = lib_->run_symbol(), run_st = lib_->run_single_threaded_symbol();
  // Exported but newer than the declared ABI: say so, not "lacks".
  const std::string ignored = lib_->bridged() ? "" : lib_->ignored_reason(kSymRunSingleThreaded);
  const std::string unused = "package '" + name_ + "' (" + label + "): " + run_st + " is " + ignored;
  std::string why;
  switch (mode) {
    case RunMode::Threaded: break;
    case RunMode::SingleThreaded:
      if (!st && !ignored.empty()) {
        why = unused + "; single_threaded runs fall back to " + run;
      } else if (!st) {
        why = "package '" + name_ + "' (" + label + ") lacks " + run_st + "; single_threaded runs fall back to " + run;
      }
      break;
    case RunMode::Graph:
      if (st && !outputs_known()) {
        why = "graph mode unavailable: package '" + name_ + "' (" + label +
              ") does not state its input shapes, so its output buffers cannot be sized ahead; runs are eager through " + run;
      } else if (!st && !ignored.empty()) {
        why = "graph mode unavailable: " + unused + "; runs are eager through " + run;
      } else if (!st) {
        why = "graph mode unavailable: " + (lib_->bridged() ? label : "package " + label) + " lacks " + run_st +
              " (package '" + name_ + "'); runs are eager through " + run;
      }
      break;
  }
  if (reason != nullptr) *reason = why;
  return why.empty();
}

}  // namespace aotrun
