// Where a .pt2 model's constants (weights) are, and getting them into each
// container before the model runs. AOTInductor links them into the model
// library by default; with package_constants_in_so=False (torch 2.8+) they
// are elsewhere, and a model run without them dereferences missing tensors
// (SIGSEGV; PyTorch's own loaders crash the same way on the layouts it
// cannot read). So every container is checked before its first run, and a
// model whose constants cannot be provided is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/constants/model_constant_update.hpp"
#include "package/pt2/constants/pickle_weights.hpp"
#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::pt2 {

class BlobFile;

// One container's private view of a weights blob (MAP_PRIVATE, copy on
// write: pages are shared with every other view until written, and a model
// that writes a constant changes only its own). Unmapped when destroyed.
class BlobMapping {
 public:
  BlobMapping(void* base, size_t length, const uint8_t* data) : base_(base), length_(length), data_(data) {}
  ~BlobMapping();
  BlobMapping(const BlobMapping&) = delete;
  BlobMapping& operator=(const BlobMapping&) = delete;
  const uint8_t* data() const { return data_; }

 private:
  void* base_;
  size_t length_;
  const uint8_t* data_;
};

class ModelConstants {
 public:
  // The archive entry of a "<model>_weights.blob" that can be mapped where it
  // lies in the archive (stored uncompressed, as torch writes it), so it need
  // not be extracted; "" when there is none.
  static std::string blob_in_place(const std::string& archive, const Pt2Model& model);

  // Reads the archive's layout at open: a "<model>_weights.blob"
  // (package_constants_on_disk_format="binary_blob"; mapped from the archive
  // when blob_in_place names it, else from its extracted copy in
  // `extracted_dir`), a weights_config.json with data/weights/ (pickled
  // weights: package_constants_on_disk=True in 2.8-2.9, format
  // "pickle_weights" from 2.10; pickle_weights.hpp), or neither. `lib` is
  // the model's library, loaded from `extracted_dir`. The weights are opened
  // here: their files may be unlinked afterwards.
  ModelConstants(const std::string& archive, const ZipArchive& zip, const Pt2Model& model,
                 const std::string& extracted_dir, const AotiLibrary& lib);
  ~ModelConstants();
  ModelConstants(const ModelConstants&) = delete;
  ModelConstants& operator=(const ModelConstants&) = delete;

  // For a container just created, before anything runs it: nothing when the
  // constants are in the library (or the model maps them itself); with a
  // blob, its constants pointed into a private mapping of it (user-managed
  // constants: no copy; the mapping goes to *mapping and the handles to
  // *kept, both to outlive the container) where the release takes them and
  // `list` gives every layout, else the blob copied in
  // (AOTInductorModelUpdateConstantsFromBlob). Pickled weights are pointed
  // into the same way, each constant with the layout weights_config.json
  // gives it (no copy). Otherwise an Error naming the layout: BAD_PACKAGE
  // (constants nowhere, a blob shorter than the model needs, a pickled
  // weight missing or of another dtype or shape), UNSUPPORTED (a release
  // that takes no tensors for its constants). Constants the release cannot
  // report (no GetConstantDataSize) are trusted to be in the library.
  // `replacements` (the host's, already wrapped) are handed over in the same
  // update as the mapped constants, which they take the place of; returns
  // true when it did so (else the caller applies them itself). For a CUDA
  // model (`cuda`) what is handed over is copied to the device first
  // (apply_constant_updates); the device tensors go to *kept too.
  bool provide(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim, bool cuda,
               const std::vector<Pt2Constant>& list, const UpdatePlan& plan,
               const std::vector<AotiConstantEntry>& replacements, std::unique_ptr<BlobMapping>* mapping,
               std::vector<AtenTensorHandle>* kept) const;

  // Whether the model opens its own library file again for each container
  // (weights appended to the .so, which it maps by its path): the extracted
  // files must then stay until the package is closed.
  bool library_reads_itself() const { return self_mapped_; }

  // Whether the constants are the library's own (linked in, or appended to
  // it): no blob and no pickled weights to provide.
  bool inside_library() const { return blob_ == nullptr && pickled_ == nullptr; }

  // "in the library", "binary blob <file> (N bytes)", ...: for messages.
  std::string describe() const;

 private:
  bool provide_pickled(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim, bool cuda,
                       const std::vector<Pt2Constant>& list, const UpdatePlan& plan,
                       const std::vector<AotiConstantEntry>& replacements, std::unique_ptr<BlobMapping>* mapping,
                       std::vector<AtenTensorHandle>* kept, const std::string& lacks) const;

  bool self_mapped_ = false;
  std::unique_ptr<BlobFile> blob_;
  std::unique_ptr<PickledWeights> pickled_;  // with blob_ over the range holding them
};

}  // namespace aotrun::pt2
