// The package entry points the loader looks for, with the ABI version that
// introduced each and whether a package can load without it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aotrun {

struct SymbolSpec {
  const char* name;
  bool required;
  uint32_t since;  // (major << 16) | minor
};

enum SymbolIndex : size_t {
  kSymAbiVersion,
  kSymGetLastError,
  kSymCreate,
  kSymDestroy,
  kSymNumInputs,
  kSymNumOutputs,
  kSymInputSpec,
  kSymOutputSpec,
  kSymOutputShapes,
  kSymRun,
  kSymRunSingleThreaded,
  kSymCount
};

extern const SymbolSpec kPackageSymbols[kSymCount];

}  // namespace aotrun
