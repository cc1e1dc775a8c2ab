// A .pt2 model's pickled weights: what torch writes with
// package_constants_in_so=False and package_constants_on_disk=True (2.8,
// 2.9) or package_constants_on_disk_format="pickle_weights" (2.10+), and
// only PyTorch's Python loader reads (torch/export/pt2_archive/_package.py):
//
//   data/aotinductor/<model>/weights_config.json
//       {"<constant FQN>": ["weight_<n>", shape, stride, storage_offset], ...}
//   data/weights/weight_<n>
//       torch.save(tensor) of the storage those constants view: a zip
//       archive (stored) of <p>/data.pkl (the tensor record, tensor_pickle)
//       and <p>/data/<key> (the storage's raw bytes)
//
// Every weight file is located where it lies in the .pt2 (stored, as torch
// writes it) or else extracted, and checked before a constant points into
// it: each storage's bytes exist and each constant's layout fits in them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/constants/tensor_pickle.hpp"
#include "package/pt2/archive/zip_archive.hpp"

namespace aotrun::pt2 {

struct PickledWeight {
  std::string name;          // weights_config.json's key: the constant's FQN
  std::string file;          // the archive entry holding it, for messages
  std::string storage_type;  // "FloatStorage", ...
  int32_t torch_dtype = -1;
  uint64_t data_at = 0;  // the storage's first byte, from the span's start
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;  // elements
};

// One torch.save archive (`size` bytes at `data`, named `label` in
// messages): its tensor record and where its storage's bytes start, checked
// to be all there. Throws Error BAD_PACKAGE / UNSUPPORTED as PickledWeights.
struct SavedTensor {
  PickledTensor tensor;
  uint64_t data_at = 0;  // from `data`
};
SavedTensor read_torch_save(const uint8_t* data, uint64_t size, const std::string& label);

class PickledWeights {
 public:
  // Reads `config` (the model's weights_config.json entry) and every weight
  // file it names from `zip`, the archive at `archive`. Throws Error:
  // BAD_PACKAGE naming the file and what is wrong (a missing or truncated
  // weight file, a layout past its storage, a malformed config),
  // UNSUPPORTED for a record outside what torch writes.
  PickledWeights(const std::string& archive, const ZipArchive& zip, const Pt2Model& model, const ZipEntry& config,
                 const std::string& extracted_dir);

  const std::vector<PickledWeight>& weights() const { return weights_; }
  // The file range holding every weight file: the archive itself when all
  // are stored in it, else a file of their extracted copies.
  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }

 private:
  std::vector<PickledWeight> weights_;
  std::string path_;
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
};

}  // namespace aotrun::pt2
