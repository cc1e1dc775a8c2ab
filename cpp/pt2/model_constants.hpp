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

#include "pt2/aoti_library.hpp"
#include "pt2/pt2_archive.hpp"

namespace aotrun::pt2 {

class MappedBlob;

class ModelConstants {
 public:
  // Reads the archive's layout at open: a "<model>_weights.blob" beside the
  // library (package_constants_on_disk_format="binary_blob", extracted into
  // `extracted_dir`), a weights_config.json (format "pickle_weights", whose
  // pickled tensors only PyTorch's Python loader reads), or neither.
  // `lib` is the model's library, loaded from `extracted_dir`.
  ModelConstants(const Pt2Model& model, const std::string& extracted_dir, const AotiLibrary& lib);
  ~ModelConstants();
  ModelConstants(const ModelConstants&) = delete;
  ModelConstants& operator=(const ModelConstants&) = delete;

  // For a container just created, before anything runs it: nothing when the
  // constants are in the library (or the model maps them itself), the blob
  // loaded when the archive has one, else an Error naming the layout
  // (the caller prefixes the package's name): UNSUPPORTED (pickled weights), BAD_PACKAGE (constants nowhere,
  // or a blob shorter than the model needs). Constants the release cannot
  // report (no GetConstantDataSize) are trusted to be in the library.
  void provide(const AotiLibrary& lib, AotiContainerHandle h, const std::string& name) const;

  // Whether the model opens its own library file again for each container
  // (weights appended to the .so, which it maps by its path): the extracted
  // files must then stay until the package is closed.
  bool library_reads_itself() const { return self_mapped_; }

  // "in the library", "binary blob <file> (N bytes)", ...: for messages.
  std::string describe() const;

 private:
  std::string blob_path_;  // "" when the archive has no binary blob
  bool pickled_ = false;   // weights_config.json present
  bool self_mapped_ = false;
  std::unique_ptr<MappedBlob> blob_;
};

}  // namespace aotrun::pt2
