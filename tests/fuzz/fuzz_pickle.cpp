// libFuzzer target: the pickled weights of a .pt2 (pickle_weights.hpp). An
// input starting "PK" is a whole torch.save archive (the in-memory zip index,
// the tensor record, its storage), anything else the tensor record alone
// (tensor_pickle.hpp). Refusals must be aotrun::Error BAD_PACKAGE or
// UNSUPPORTED; an accepted record must satisfy the invariants below.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/constants/pickle_weights.hpp"
#include "package/pt2/constants/tensor_pickle.hpp"
#include "base/error.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void check(const aotrun::pt2::PickledTensor& t) {
  if (t.item_bytes == 0 || t.torch_dtype < 0) finding("tensor without a dtype");
  if (t.sizes.size() != t.strides.size()) finding("sizes and strides of different ranks");
  uint64_t extent = 0;
  if (!aotrun::pt2::storage_extent(t.sizes, t.strides, t.storage_offset, t.item_bytes, &extent) ||
      extent > t.numel * t.item_bytes) {
    finding("accepted a tensor past its storage");
  }
  if (t.key.empty() || t.key.find('/') != std::string::npos) finding("storage key '" + t.key + "'");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotrun::pt2;
  try {
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
      const SavedTensor s = read_torch_save(data, size, "fuzz weight");
      check(s.tensor);
      if (s.data_at > size || s.tensor.numel * s.tensor.item_bytes > size - s.data_at) {
        finding("storage outside the archive");
      }
    } else {
      check(read_tensor_pickle(data, size, "fuzz data.pkl"));
    }
  } catch (const aotrun::Error& e) {
    if (e.code() != aotrun::Code::BadPackage && e.code() != aotrun::Code::Unsupported) {
      finding("refused with code " + std::to_string(static_cast<int>(e.code())) + ": " + e.what());
    }
  }
  return 0;
}
