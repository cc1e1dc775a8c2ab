#include "package/package.hpp"

#include <sys/stat.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "package/package_kind.hpp"
#include "package/spec_reader.hpp"
#include "base/clock.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

PackageCandidate look_at(const std::string& path) {
  if (path.empty()) fail(Code::InvalidArgument, "package path is empty");
  PackageCandidate c;
  c.path = path;
  if (::stat(path.c_str(), &c.st) != 0) {
    const int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed,
         "package path '" + path + "' " +
             (err == ENOENT ? "does not exist" : std::string("cannot be read: ") + std::strerror(err)));
  }
  if (c.is_directory()) return c;
  if (!S_ISREG(c.st.st_mode)) {
    fail(Code::LoadFailed, "package path '" + path + "' is neither a regular file nor a directory");
  }
  // One descriptor serves every check of the file (trust, pin, format, ELF).
  c.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!c.fd) {
    const int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed, "cannot open '" + path + "': " + std::strerror(err));
  }
  return c;
}

// The kind that reads the candidate: the last one claims every regular file.
const PackageKind& kind_of(const PackageCandidate& candidate) {
  for (const PackageKind* k : package_kinds()) {
    if (k->claims(candidate)) return *k;
  }
  return *package_kinds().back();
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
  return "package '" + name_ + "': " + what + " failed (status " + std::to_string(rc) + "): " + code_->last_error();
}

ProviderPreview Package::preview_provider(const std::string& path, const PackageOptions& options) {
  const PackageCandidate candidate = look_at(path);
  return kind_of(candidate).preview_provider(candidate, options);
}

std::shared_ptr<Package> Package::open(const std::string& path, const PackageOptions& options) {
  const uint64_t t0 = now_ns();
  const PackageCandidate candidate = look_at(path);
  const PackageKind* kind = &kind_of(candidate);
  LoadedPackage loaded = kind->load(candidate, options);

  std::shared_ptr<Package> p(new Package());
  p->path_ = path;
  p->format_ = kind->format();
  p->name_ = std::move(loaded.name);
  p->dir_ = std::move(loaded.dir);
  p->device_ = loaded.device;
  p->code_ = std::move(loaded.code);
  p->constants_ = std::move(loaded.constants);
  p->hashes_verified_ = loaded.hashes_verified;
  p->timings_.verify_ns = loaded.verify_ns;
  p->timings_.dlopen_ns = loaded.dlopen_ns;
  p->timings_.weights_ns = loaded.weights_ns;

  const uint64_t t = now_ns();
  PackageSpecs specs = read_specs(*p->code_, p->name_, p->device_, p->constants_, p->dir_);
  p->inputs_ = std::move(specs.inputs);
  p->outputs_ = std::move(specs.outputs);
  // After the specs: a format whose model holds its constants reads them
  // from the metadata container read_specs created.
  p->list_constants();
  p->timings_.metadata_ns = now_ns() - t;

  for (RunMode m : {RunMode::Threaded, RunMode::SingleThreaded, RunMode::Graph}) {
    p->mode_available(m, &p->mode_reasons_[static_cast<int>(m)]);
  }
  p->timings_.open_ns = now_ns() - t0;
  return p;
}

void Package::list_constants() {
  if (const std::vector<ConstantInfo>* held = code_->model_constants()) {
    constant_list_ = *held;
  } else {
    for (const aotrun_pkg_constant& c : constants_.entries()) {
      ConstantInfo info;
      info.name = c.name;
      info.original_name = c.name;
      info.dtype = c.tensor.dtype;
      info.shape.assign(c.tensor.shape, c.tensor.shape + c.tensor.ndim);
      // The table's tensors were checked against their files: no overflow.
      uint64_t n = (static_cast<uint64_t>(c.tensor.dtype.bits) * c.tensor.dtype.lanes + 7) / 8;
      for (int d = 0; d < c.tensor.ndim; ++d) n *= static_cast<uint64_t>(c.tensor.shape[d]);
      info.nbytes = n;
      constant_list_.push_back(std::move(info));
    }
  }
  for (const ConstantInfo& c : constant_list_) constant_bytes_ += c.nbytes;
}

bool Package::mode_available(RunMode mode, std::string* reason) const {
  const bool st = code_->fn().run_single_threaded != nullptr;
  // "ABI 1.0" for aotrun packages, "AOTInductor .pt2" for bridged ones.
  const std::string& label = code_->info().label;
  const std::string &run = code_->info().run_symbol, &run_st = code_->info().run_single_threaded_symbol;
  // Exported but newer than the declared ABI: say so, not "lacks".
  const std::string& ignored = code_->info().single_threaded_ignored_reason;
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
        why =
            "graph mode unavailable: package '" + name_ + "' (" + label +
            ") does not state its input shapes, so its output buffers cannot be sized ahead; runs are eager through " +
            run;
      } else if (!st && !ignored.empty()) {
        why = "graph mode unavailable: " + unused + "; runs are eager through " + run;
      } else if (!st) {
        why = "graph mode unavailable: " + code_->info().subject + " lacks " + run_st + " (package '" + name_ +
              "'); runs are eager through " + run;
      }
      break;
  }
  if (reason != nullptr) *reason = why;
  return why.empty();
}

}  // namespace aotrun
