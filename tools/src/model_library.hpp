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

// The library a .pt2's shim calls bind to: the provider this process has
// loaded, else the one the environment would pick first (AOTRUN_LIBTORCH,
// AOTRUN_PROVIDER; aotrun's shim library when nothing is set); "" when none.
std::string libtorch_in_use();

}  // namespace aotrun::cli
