// An aotrun package directory: manifest.json, the package library it names,
// and .safetensors weights, every file hashed against the manifest.
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "package/native/native_library.hpp"
#include "package/manifest.hpp"
#include "package/package.hpp"
#include "package/package_kind.hpp"
#include "package/trust.hpp"
#include "base/clock.hpp"
#include "base/error.hpp"
#include "device/device_table.hpp"

namespace aotrun {
namespace {

class DirectoryKind final : public PackageKind {
 public:
  const char* format() const override { return "aotrun-dir"; }
  bool claims(const PackageCandidate& c) const override { return c.is_directory(); }

  LoadedPackage load(const PackageCandidate& c, const PackageOptions& options) const override {
    const std::string& dir = c.path;
    check_trusted(dir, options);
    check_trusted(dir + "/manifest.json", options);
    check_pin(dir + "/manifest.json", options);
    const Manifest manifest = read_manifest(dir);
    LoadedPackage p;
    p.dir = dir;
    p.name = manifest.name;
    p.device = DLDevice{static_cast<DLDeviceType>(find_device(manifest.device)->type), 0};  // checked by read_manifest

    // One descriptor of the library serves the trust check, the hash and the
    // ELF check. dlopen opens the path again: the window in between is
    // closed by refusing package files others can write.
    const std::string lib_path = dir + "/" + manifest.library;
    const UniqueFd lib_fd(::open(lib_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!lib_fd) {
      const int err = errno;
      if (err == ENOENT) fail(Code::BadPackage, "the package library " + lib_path + " is missing");
      fail(Code::LoadFailed, "cannot open '" + lib_path + "': " + std::strerror(err));
    }
    check_trusted(lib_path, options, lib_fd.get());
    std::vector<std::string> weights;
    for (const auto& w : manifest.weights) {
      weights.push_back(dir + "/" + w);
      check_trusted(weights.back(), options);
    }
    // A pinned manifest is only worth something if the files match it.
    if (options.verify_hashes || !options.expected_sha256.empty()) {
      const uint64_t t = now_ns();
      for (const auto& [file, hex] : manifest.sha256) {
        verify_hash(dir, file, hex, file == manifest.library ? lib_fd.get() : -1);
      }
      p.hashes_verified = true;
      p.verify_ns = now_ns() - t;
    }
    uint64_t t = now_ns();
    p.code = std::make_unique<NativeLibrary>(lib_path, manifest.abi_version, lib_fd.get());
    p.dlopen_ns = now_ns() - t;
    t = now_ns();
    p.constants = ConstantTable::from_weights(weights, p.name);
    p.weights_ns = now_ns() - t;
    return p;
  }
};

}  // namespace

const PackageKind& directory_kind() {
  static const DirectoryKind kind;
  return kind;
}

}  // namespace aotrun
