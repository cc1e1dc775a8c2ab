// The pickle torch.save writes for one tensor (the data.pkl of each
// data/weights/weight_<n> of a .pt2 exported with pickled weights), read by a
// strict, bounded reader of exactly that subset: protocol 2, the opcodes a
// single tensor or parameter record uses, and four kinds of GLOBAL
// (torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter,
// collections.OrderedDict for the empty hook dicts, torch.<T>Storage for the
// dtype). Nothing is imported or called: the record is only decoded.
// Anything else is refused, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct PickledTensor {
  std::string storage_type;  // "FloatStorage", ...
  int32_t torch_dtype = -1;  // c10::ScalarType code, as the AOTI shim numbers dtypes
  uint64_t item_bytes = 0;
  std::string key;       // the storage's record: <prefix>/data/<key>
  std::string location;  // "cpu", ...
  uint64_t numel = 0;    // elements of the whole storage
  int64_t storage_offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// Decodes `size` bytes at `data`. Throws Error: BAD_PACKAGE for a truncated
// or inconsistent record (bad lengths, stack or memo misuse, trailing bytes,
// values of the wrong kind), UNSUPPORTED for a well-formed pickle outside the
// subset (another protocol, opcode, GLOBAL or storage type); `label` (the
// archive entry) starts every message, which also says what was unexpected
// and at which byte.
PickledTensor read_tensor_pickle(const uint8_t* data, size_t size, const std::string& label);

}  // namespace aotrun::pt2
