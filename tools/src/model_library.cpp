#include "model_library.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <exception>
#include <fstream>

#include <aotrun/aotrun.h>
#include <nlohmann/json.hpp>

#include "package/pt2/archive/model_metadata.hpp"
#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Read as a .pt2 by the package kind's own rule (by content or by name).
bool is_pt2(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ends_with(path, ".pt2");
  const bool pt2 = aotrun::pt2::read_as_pt2(path, fd);
  ::close(fd);
  return pt2;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

ModelLibrary::ModelLibrary(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error_ = "'" + path + "' does not exist";
  } else if (S_ISDIR(st.st_mode)) {
    // A package directory: its manifest names the library.
    try {
      std::ifstream in(path + "/manifest.json");
      const nlohmann::json j = nlohmann::json::parse(in);
      shown_ = j.at("library").get<std::string>();
      file_ = path + "/" + shown_;
      if (shown_.find('/') != std::string::npos || !is_file(file_)) {
        error_ = "the manifest's library '" + shown_ + "' is not a file of the package";
        file_.clear();
      }
    } catch (const std::exception& e) {
      error_ = std::string("no readable manifest.json naming the library: ") + e.what();
    }
  } else if (is_pt2(path)) {
    from_pt2(path);
  } else {
    file_ = shown_ = path;
  }
}

// The model open would load, found by open's rules (find_model: the layout,
// safe names, one .so) and extracted as open extracts it.
void ModelLibrary::from_pt2(const std::string& path) {
  namespace pt2 = aotrun::pt2;
  try {
    const std::unique_ptr<pt2::ZipArchive> zip = pt2::ZipArchive::open(path);
    const pt2::Pt2Model model = pt2::find_model(*zip, pt2::kDefaultModel);
    shown_ = model.library.name;
    cpu_isa_ = pt2::parse_model_metadata(model.metadata_json).required_cpu_isa();
    dir_ = std::make_unique<pt2::PrivateDir>();
    const std::string name = shown_.substr(shown_.find_last_of('/') + 1);
    zip->extract(model.library, dir_->fd(), name, 0500);
    file_ = dir_->path() + "/" + name;
  } catch (const std::exception& e) {  // the library's Error: the message open gives
    error_ = e.what();
    file_.clear();
  }
}

ModelLibrary::~ModelLibrary() = default;

namespace {

// aotrun's own shim (cpp/shim): its stand-in libtorch_cpu.so defines no shim
// function (they live in libaotrun_shim.so.1, two directories up, which the
// stand-in NEEDs), so the link check reads the shim library itself.
std::string through_standin(const std::string& torch_cpu) {
  const size_t slash = torch_cpu.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : torch_cpu.substr(0, slash);
  char real[PATH_MAX];
  const std::string shim = dir + "/../../libaotrun_shim.so.1";
  return is_file(shim) && ::realpath(shim.c_str(), real) != nullptr ? std::string(real) : torch_cpu;
}

// AOTRUN_LIBTORCH=shim: the stand-ins beside the libaotrun this CLI uses.
std::string bundled_shim() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&aotrun_get_api), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string lib = info.dli_fname;
  const size_t slash = lib.rfind('/');
  const std::string standin =
      (slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) + "/aotrun/torch-standins/libtorch_cpu.so";
  return is_file(standin) ? through_standin(standin) : "";
}

}  // namespace

std::string libtorch_in_use() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (ends_with(name, "/libtorch_cpu.so")) {
          *static_cast<std::string*>(data) = name;
          return 1;
        }
        return 0;
      },
      &found);
  if (!found.empty()) return through_standin(found);
  // Nothing loaded yet: what the package loader would pick first
  // (package/pt2/provider/provider_choice.hpp): a libtorch named by
  // AOTRUN_LIBTORCH unless AOTRUN_PROVIDER says otherwise, else the shim.
  const char* env = std::getenv("AOTRUN_LIBTORCH");
  const char* provider_env = std::getenv("AOTRUN_PROVIDER");
  const std::string where = env != nullptr ? env : "";
  const std::string provider = provider_env != nullptr ? provider_env : "";
  if (provider == "shim" || provider == "auto" || where.empty() || where == "shim") {
    return provider == "libtorch" ? "" : bundled_shim();
  }
  if (is_file(where)) return through_standin(where);
  return is_file(where + "/libtorch_cpu.so") ? through_standin(where + "/libtorch_cpu.so") : "";
}

}  // namespace aotrun::cli
