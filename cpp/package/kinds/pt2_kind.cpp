// A PyTorch AOTInductor archive (.pt2): a zip file whose model is bridged to
// the package ABI inside libaotrun (package/pt2/bridge/aoti_bridge.hpp).
#include "package/package.hpp"
#include "package/package_kind.hpp"
#include "package/trust.hpp"
#include "package/pt2/bridge/aoti_bridge.hpp"
#include "package/pt2/archive/pt2_archive.hpp"
#include "base/clock.hpp"
#include "base/error.hpp"
#include "base/strings.hpp"

namespace aotrun {
namespace {

// "dir/resnet.pt2" -> "resnet"; a model other than the default one is named
// after a colon ("resnet:encoder").
std::string package_name(const std::string& path, const PackageOptions& options) {
  std::string name = file_stem(path);
  if (ends_with(name, ".pt2")) name.resize(name.size() - 4);
  if (!options.pt2.model.empty() && options.pt2.model != pt2::kDefaultModel) name += ":" + options.pt2.model;
  return name;
}

class Pt2ArchiveKind final : public PackageKind {
 public:
  const char* format() const override { return "pt2"; }
  // By content, or by name (so that a damaged archive is called one).
  bool claims(const PackageCandidate& c) const override {
    return !c.is_directory() && pt2::read_as_pt2(c.path, c.fd.get());
  }

  LoadedPackage load(const PackageCandidate& c, const PackageOptions& options) const override {
    // The pin and trust checks cover the archive; what it extracts lives in
    // a private directory.
    check_trusted(c.path, options, c.fd.get());
    check_pin(c.path, options, c.fd.get());
    if (!pt2::looks_like_zip(c.fd.get())) {
      fail(Code::BadPackage, "archive '" + c.path + "' is not a zip archive (a .pt2 is a zip file)");
    }
    LoadedPackage p;
    p.name = package_name(c.path, options);
    const uint64_t t = now_ns();
    p.code = pt2::open_pt2(c.path, p.name, options.pt2, &p.device);
    p.dlopen_ns = now_ns() - t;
    return p;
  }

  ProviderPreview preview_provider(const PackageCandidate& c, const PackageOptions& options) const override {
    if (!pt2::looks_like_zip(c.fd.get())) {
      fail(Code::BadPackage, "archive '" + c.path + "' is not a zip archive (a .pt2 is a zip file)");
    }
    return pt2::preview_pt2(c.path, package_name(c.path, options), options.pt2);
  }
};

}  // namespace

const PackageKind& pt2_archive_kind() {
  static const Pt2ArchiveKind kind;
  return kind;
}

}  // namespace aotrun
