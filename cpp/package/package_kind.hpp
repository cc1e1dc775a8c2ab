// The seam between Package::open and the formats a package can come in.
// Each kind (kinds/*.cpp) recognises its files and turns them into the same
// LoadedPackage: code with the package ABI's entry points, constants, device,
// name. Specs are then read through the entry points, the same way for every
// kind (spec_reader.hpp). A new kind is one new file in kinds/ and one line
// in package_kinds().
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "package/constant_table.hpp"
#include "package/package_code.hpp"
#include "base/unique_fd.hpp"

namespace aotrun {

struct PackageOptions;

// The path given to aotrun_package_open, looked at once.
struct PackageCandidate {
  std::string path;
  struct stat st {};
  UniqueFd fd;  // open read-only for a regular file; -1 for a directory

  bool is_directory() const { return S_ISDIR(st.st_mode); }
};

// "libmlp.so" -> "mlp", "dir/model.so.1" -> "model": a package's default name.
std::string file_stem(const std::string& path);

// What a kind yields; Package adopts it.
struct LoadedPackage {
  std::string name;
  std::string dir;  // a package directory; "" for other kinds
  DLDevice device{kDLCPU, 0};
  std::unique_ptr<PackageCode> code;
  ConstantTable constants;
  bool hashes_verified = false;
  uint64_t verify_ns = 0, dlopen_ns = 0, weights_ns = 0;
};

class PackageKind {
 public:
  virtual ~PackageKind() = default;
  // "aotrun-dir", "aotrun-so", "pt2": aotrun_package_info.format.
  virtual const char* format() const = 0;
  // Whether this kind reads the candidate (it may still refuse it in load).
  virtual bool claims(const PackageCandidate& c) const = 0;
  // Checks and loads. Throws Error naming the file and what is wrong with it.
  virtual LoadedPackage load(const PackageCandidate& c, const PackageOptions& options) const = 0;
  // Which C shim provider load would choose, loading nothing (see
  // ProviderPreview). Kinds whose code calls no C shim keep this: all "".
  virtual ProviderPreview preview_provider(const PackageCandidate& c, const PackageOptions& options) const;
};

// The kinds, in the order they are asked; the last one claims any regular file.
const std::vector<const PackageKind*>& package_kinds();

// Each kind's single instance (kinds/*.cpp).
const PackageKind& directory_kind();
const PackageKind& pt2_archive_kind();
const PackageKind& shared_object_kind();

}  // namespace aotrun
