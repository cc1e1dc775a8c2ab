#include "linkinfo/link_findings.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "linkinfo/cpu_features.hpp"
#include "linkinfo/elf_check.hpp"
#include "linkinfo/elf_symbols.hpp"
#include "linkinfo/shim_releases.hpp"
#include "base/error.hpp"
#include "base/unique_fd.hpp"

namespace aotrun {
namespace {

// libaotrun_shim_cuda.so.1 in the directory of `shim` when `shim` is aotrun's
// libaotrun_shim.so.1 (any version suffix) and the layer is there; else "".
std::string cuda_layer_beside(const std::string& shim) {
  const size_t slash = shim.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : shim.substr(0, slash);
  if (shim.compare(slash == std::string::npos ? 0 : slash + 1, 17, "libaotrun_shim.so") != 0) return "";
  const std::string layer = dir + "/libaotrun_shim_cuda.so.1";
  return ::access(layer.c_str(), R_OK) == 0 ? layer : "";
}

}  // namespace

LinkFindings examine_library(const std::string& so, const std::string& torch_library, const std::string& cpu_isa) {
  LinkFindings f;
  f.library = so;
  f.cpu_isa = cpu_isa;
  f.cpu_missing = missing_cpu_features(cpu_isa, &cpu_has);

  const UniqueFd fd(::open(so.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    f.elf_error = "cannot open '" + so + "': " + std::strerror(errno);
  } else {
    try {
      check_elf_shared_object(fd.get(), so);
    } catch (const Error& e) {
      f.elf_error = e.what();
    }
  }

  ElfDynamicSymbols model;
  try {
    model = read_elf_dynamic_symbols(so, "aoti_");
  } catch (const Error& e) {
    f.tables_error = e.what();
    return f;
  }
  for (const auto& s : model.undefined) {
    if (s.rfind("aoti_", 0) == 0) f.shim_calls.push_back(s);
  }
  std::sort(f.shim_calls.begin(), f.shim_calls.end());
  f.shim_calls.erase(std::unique(f.shim_calls.begin(), f.shim_calls.end()), f.shim_calls.end());
  if (!torch_library.empty()) {
    if (const ElfDynamicSymbols* lib = cached_elf_symbols(torch_library)) {
      f.torch_library = torch_library;
      // aotrun's shim serves CUDA models with its CUDA layer beside it.
      const std::string layer_path = cuda_layer_beside(torch_library);
      const ElfDynamicSymbols* layer = layer_path.empty() ? nullptr : cached_elf_symbols(layer_path);
      for (const auto& s : f.shim_calls) {
        if (!std::binary_search(lib->defined.begin(), lib->defined.end(), s) &&
            (layer == nullptr || !std::binary_search(layer->defined.begin(), layer->defined.end(), s))) {
          f.shim_missing.push_back({s, shim_first_release(s)});
        }
      }
    }
  }
  f.versions = version_findings(model);
  return f;
}

}  // namespace aotrun
