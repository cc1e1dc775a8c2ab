// libFuzzer target: .pt2 bytes -> the zip index (aotrun::pt2::ZipArchive),
// the AOTInductor layout (find_model) and reading every file of the model.
// Refusals must be aotrun::Error BAD_PACKAGE or NOT_FOUND; an accepted model
// must satisfy the invariants below. Anything else is a finding.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/archive/zip_archive.hpp"
#include "base/error.hpp"
#include "base/strings.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotrun::pt2;
  try {
    const auto zip = ZipArchive::open_memory(data, size, "fuzz.pt2");
    for (const auto& name : list_models(*zip)) {
      if (name.empty() || name.find('/') != std::string::npos) finding("model name '" + name + "'");
    }
    const Pt2Model m = find_model(*zip, "model");
    const std::string& lib = m.library.name;
    if (!aotrun::ends_with(lib, ".so")) finding("library '" + lib + "' is not a .so");
    for (const auto& e : m.files) {
      if (!safe_entry_name(e.name) || e.is_symlink || e.is_dir) finding("unsafe entry accepted: " + e.name);
      if (e.size <= (1u << 20) && zip->read(e, 1u << 20).size() != e.size) finding("short read of " + e.name);
    }
  } catch (const aotrun::Error& e) {
    if (e.code() != aotrun::Code::BadPackage && e.code() != aotrun::Code::NotFound) {
      finding("refused with code " + std::to_string(static_cast<int>(e.code())) + ": " + e.what());
    }
  }
  return 0;
}
