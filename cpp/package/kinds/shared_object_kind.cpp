// A bare aotrun package library: one .so, no manifest, no weights.
#include "package/native/native_library.hpp"
#include "package/package.hpp"
#include "package/package_kind.hpp"
#include "package/trust.hpp"
#include "base/clock.hpp"

namespace aotrun {
namespace {

class SharedObjectKind final : public PackageKind {
 public:
  const char* format() const override { return "aotrun-so"; }
  bool claims(const PackageCandidate& c) const override { return !c.is_directory(); }

  LoadedPackage load(const PackageCandidate& c, const PackageOptions& options) const override {
    check_trusted(c.path, options, c.fd.get());
    check_pin(c.path, options, c.fd.get());
    LoadedPackage p;
    p.name = file_stem(c.path);
    const uint64_t t = now_ns();
    p.code = std::make_unique<NativeLibrary>(c.path, 0, c.fd.get());
    p.dlopen_ns = now_ns() - t;
    return p;
  }
};

}  // namespace

const PackageKind& shared_object_kind() {
  static const SharedObjectKind kind;
  return kind;
}

}  // namespace aotrun
