// The constants (weights) a .pt2 model holds, as its library reports them
// (AOTInductorModelContainerGetNumConstants, GetConstantName,
// GetConstantOriginalFQN, GetConstantDtype, GetConstantFromFolded,
// GetConstantType: every release since 2.6; GetConstantDataSize: 2.8+), completed with shapes,
// strides and storage offsets from the model's generated source
// (source_constants.hpp) where that agrees with the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "package/constant_info.hpp"
#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

struct Pt2Constant {
  ConstantInfo info;  // info.name: the model's internal name (what updates use)
  int32_t torch_dtype = -1;
  // Where the tensor lies in its storage, from the source; valid when
  // info.shape_known.
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;
  bool size_known = false;  // info.nbytes came from the library (2.8+) or the agreeing source
  bool packed = false;      // oneDNN's blocked layout (a frozen export): not replaceable as an array
  // ConstantType Parameter (GetConstantType), as opposed to a buffer the
  // model may write, a tensor constant or a folded constant.
  bool parameter = false;
};

// Reads every constant of container `h`. `sources` is the model's C++ source
// ("" when the archive has none: shapes unknown). Throws Error BAD_PACKAGE
// when the library reports something no model could hold (a count past
// 1,000,000, a nameless or duplicate constant, a dtype aotrun cannot
// represent); an optional entry point missing only leaves that fact unknown.
std::vector<Pt2Constant> read_constants(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim,
                                        const std::string& sources);

// Bytes a tensor of `shape`/`stride`/`offset` with `item` bytes per element
// reaches from its storage's start; false when that overflows.
bool storage_extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride, int64_t offset,
                    uint64_t item, uint64_t* out);

}  // namespace aotrun::pt2
