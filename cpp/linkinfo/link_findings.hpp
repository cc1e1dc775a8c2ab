// Everything checked about a model library before dlopen, gathered without
// refusing anything: whether the dynamic loader could map it, the aoti_*
// shim functions it calls that a libtorch lacks (with the torch release that
// first has each), the symbol versions it needs against this process's
// libraries, and the vector extensions it was compiled for against this CPU.
// The package loader refuses on these (package/pt2/provider/link_check.hpp); `aotrun inspect`
// shows them, for packages that open and for ones that are refused.
#pragma once

#include <string>
#include <vector>

#include "linkinfo/version_check.hpp"

namespace aotrun {

struct MissingShim {
  std::string name;           // "aoti_torch_new_tensor_handle"
  std::string first_release;  // shim_first_release(name): "torch 2.8"
};

struct LinkFindings {
  std::string library;
  std::string elf_error;                // why dlopen could not map it (check_elf_shared_object); "" when it could
  std::string tables_error;             // why its symbol tables could not be read; "" when they were
  std::vector<std::string> shim_calls;  // the aoti_* functions it needs, sorted
  std::string torch_library;            // the libtorch checked against; "" when none was
  std::vector<MissingShim> shim_missing;
  std::vector<VersionFinding> versions;
  std::string cpu_isa;                   // what it was compiled for; "" when unknown
  std::vector<std::string> cpu_missing;  // what of it this CPU lacks
};

// Examines `so`. `torch_library` is the libtorch_cpu.so its shim calls would
// bind to ("" skips that check); `cpu_isa` the model's AOTI_CPU_ISA ("" =
// unknown). Never throws for what it finds (it is recorded); only for
// running out of memory.
LinkFindings examine_library(const std::string& so, const std::string& torch_library, const std::string& cpu_isa);

}  // namespace aotrun
