// The model library inside a package, found from its path alone (so that
// `aotrun inspect` can examine it when the C API refuses the package): the
// .so of a .pt2 archive (found and extracted into a private directory by the
// library's archive reader, package/pt2/archive, so that a refusal names
// what open's does), the "library" of a package directory's manifest.json,
// or a bare .so itself.
#pragma once

#include <memory>
#include <string>

namespace aotrun::pt2 {
class PrivateDir;
}

namespace aotrun::cli {

class ModelLibrary {
 public:
  explicit ModelLibrary(const std::string& package_path);
  ~ModelLibrary();  // removes the copy taken out of an archive (with its directory)
  ModelLibrary(const ModelLibrary&) = delete;
  ModelLibrary& operator=(const ModelLibrary&) = delete;

  const std::string& file() const { return file_; }    // readable path; "" when none was found
  const std::string& shown() const { return shown_; }  // as the package names it
  // The ISA a .pt2's model needs, as open checks it (AOTI_CPU_ISA; none for
  // a CUDA model); "" otherwise.
  const std::string& cpu_isa() const { return cpu_isa_; }
  const std::string& error() const { return error_; }  // why none was found

 private:
  void from_pt2(const std::string& path);
  std::string file_, shown_, cpu_isa_, error_;
  std::unique_ptr<aotrun::pt2::PrivateDir> dir_;  // holds a .pt2's extracted library
};

// Which C shim provider opening a package would choose, asked of libaotrun
// (aotrun_package_preview_provider; the rule open applies, loading
// nothing): `library` is the file the model's shim calls would bind to, ""
// when none; `name` is "" when open would refuse for want of a provider
// (`reason` then gives open's refusal) and for packages that call no C shim.
// `error` says why the path could not be read as a package.
struct ProviderView {
  std::string name, library, reason, error;
};
ProviderView provider_preview(const std::string& package_path);

}  // namespace aotrun::cli
