// libFuzzer target: manifest.json text -> aotrun::parse_manifest.
// Accepted manifests must satisfy invariants.hpp; refusals must be
// aotrun::Error(BAD_PACKAGE). Anything else (another exception, a crash, a
// sanitizer report) is a finding.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "invariants.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const aotrun::Manifest m = aotrun::parse_manifest(text, "manifest.json");
    const std::string broken = aotrun_fuzz::check_manifest(m);
    if (!broken.empty()) {
      std::fprintf(stderr, "FINDING: accepted manifest breaks an invariant: %s\n", broken.c_str());
      std::abort();
    }
  } catch (const aotrun::Error& e) {
    if (e.code() != aotrun::Code::BadPackage) {
      std::fprintf(stderr, "FINDING: manifest refused with code %d, not BAD_PACKAGE: %s\n", static_cast<int>(e.code()),
                   e.what());
      std::abort();
    }
  }
  // Any other exception propagates: libFuzzer reports it as a crash.
  return 0;
}
