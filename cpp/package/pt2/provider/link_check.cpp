#include "package/pt2/provider/link_check.hpp"

#include <dlfcn.h>

#include "linkinfo/link_findings.hpp"
#include "linkinfo/version_check.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {

void check_model_requirements(const std::string& so, const std::string& name, const TorchShim& shim,
                              const std::string& cpu_isa) {
  // The libtorch the shim calls would bind to: the one the shim came from.
  Dl_info info{};
  std::string torch;
  if (shim.delete_tensor_object != nullptr &&
      ::dladdr(reinterpret_cast<void*>(shim.delete_tensor_object), &info) != 0 && info.dli_fname != nullptr) {
    torch = info.dli_fname;
  }
  // Private to this open (not cached): the package's files are many and replaceable.
  const LinkFindings f = examine_library(so, torch, cpu_isa);
  if (!f.cpu_missing.empty()) {
    fail(Code::Unsupported,
         "package '" + name + "' was compiled for " + cpu_isa + " and this CPU lacks " + list_names(f.cpu_missing) +
             "; running it would die of SIGILL (export it again on, or for, " + "this machine's instruction set)");
  }
  // A diagnosis, not a gate: a library whose section headers cannot be read
  // is left to dlopen (and a damaged image to the loader's own check).
  if (!f.tables_error.empty()) return;
  if (!f.shim_missing.empty()) {
    std::vector<std::string> names, firsts;
    for (const auto& m : f.shim_missing) {
      names.push_back(m.name);
      firsts.push_back(m.name + " (" + m.first_release + ")");
    }
    fail(Code::LoadFailed, "package '" + name + "' calls " + std::to_string(names.size()) +
                               " function(s) of libtorch's C shim that " + f.torch_library +
                               " does not export: " + list_names(names) +
                               " (the package was exported by a newer torch than this libtorch: run it with "
                               "the libtorch of the release that exported it, or a newer one; first in: " +
                               list_names(firsts) + ")");
  }
  check_symbol_versions(f.versions, "package '" + name + "' (" + so + ")");
}

}  // namespace aotrun::pt2
