#include "model_library.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include <aotrun/aotrun.h>
#include <nlohmann/json.hpp>

#include "pt2_facts.hpp"

namespace aotrun::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_zip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string(magic, 4) == std::string("PK\x03\x04", 4);
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
  } else if (is_zip(path)) {
    from_pt2(path);
  } else {
    file_ = shown_ = path;
  }
}

void ModelLibrary::from_pt2(const std::string& path) {
  const Pt2Facts facts = read_pt2_facts(path);
  for (const auto& [k, v] : facts.model_metadata) {
    if (k == "AOTI_CPU_ISA") cpu_isa_ = v;
  }
  int err = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> z(zip_open(path.c_str(), ZIP_RDONLY, &err), zip_discard);
  if (!z) {
    error_ = "'" + path + "' cannot be read as a ZIP archive";
    return;
  }
  // torch 2.15 puts everything under one top-level folder; 2.6 does not.
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  zip_int64_t index = -1;
  for (zip_int64_t i = 0; i < n && index < 0; ++i) {
    const char* raw = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), 0);
    const std::string name = raw != nullptr ? raw : "";
    const auto at = name.find("data/aotinductor/model/");
    if (at != std::string::npos && (at == 0 || name[at - 1] == '/') && ends_with(name, ".so")) {
      index = i;
      shown_ = name;
    }
  }
  if (index < 0) {
    error_ = "'" + path + "' has no model library (data/aotinductor/model/*.so)";
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/aotrun-inspect-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    error_ = "cannot make a temporary directory to examine '" + shown_ + "'";
    return;
  }
  temp_dir_ = dir;
  const std::string out_path = dir + "/model.so";
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z.get(), static_cast<zip_uint64_t>(index), 0),
                                                       zip_fclose);
  std::ofstream out(out_path, std::ios::binary);
  std::vector<char> buf(1 << 16);
  zip_int64_t got = 0;
  while (f && (got = zip_fread(f.get(), buf.data(), buf.size())) > 0) out.write(buf.data(), got);
  out.close();
  if (!f || got < 0 || !out) {
    error_ = "cannot copy '" + shown_ + "' out of '" + path + "'";
    return;
  }
  file_ = out_path;
}

ModelLibrary::~ModelLibrary() {
  if (temp_dir_.empty()) return;
  std::remove((temp_dir_ + "/model.so").c_str());
  ::rmdir(temp_dir_.c_str());
}

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
  // (package/pt2/binding/provider_choice.hpp): a libtorch named by
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
