#include "package/pt2/constants/model_constants.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <unistd.h>

#include "package/pt2/archive/zip_stored.hpp"
#include "base/checked_math.hpp"
#include "base/error.hpp"
#include "base/strings.hpp"
#include "base/unique_fd.hpp"

namespace aotrun::pt2 {

// A weights blob: a file (the archive itself, or the extracted copy) and
// where the blob lies in it. The descriptor stays open, so the file may be
// unlinked; every container maps its own view.
class BlobFile {
 public:
  BlobFile(const std::string& path, uint64_t offset, uint64_t size, bool whole_file)
      : path_(path), offset_(offset), size_(size) {
    fd_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd_ || ::fstat(fd_.get(), &st) != 0) {
      fail(Code::LoadFailed, "cannot open the weights blob '" + path + "': " + std::strerror(errno));
    }
    if (whole_file) size_ = static_cast<uint64_t>(st.st_size);
  }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  std::unique_ptr<BlobMapping> map() const {
    if (size_ == 0) return std::make_unique<BlobMapping>(nullptr, 0, nullptr);
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset_ / page * page;
    const size_t length = static_cast<size_t>(offset_ - start + size_);
    // Writable but private: a model writing a constant changes its own copy
    // of that page, never the file or another container's view.
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_.get(), static_cast<off_t>(start));
    if (p == MAP_FAILED) {
      fail(Code::LoadFailed, "cannot map the weights blob '" + path_ + "': " + std::strerror(errno));
    }
    return std::make_unique<BlobMapping>(p, length, static_cast<const uint8_t*>(p) + (offset_ - start));
  }

 private:
  std::string path_;
  uint64_t offset_;
  uint64_t size_;
  UniqueFd fd_;
};

BlobMapping::~BlobMapping() {
  if (base_ != nullptr) ::munmap(base_, length_);
}

namespace {

// Bytes of the constants a blob must hold (folded ones are computed, not
// stored); -1 when the release cannot say.
int64_t needed_bytes(const AotiLibrary& lib, AotiContainerHandle h) {
  const AotiFunctions& f = lib.fn();
  if (f.num_constants == nullptr || f.constant_data_size == nullptr) return -1;
  size_t n = 0;
  if (f.num_constants(h, &n) != 0) return -1;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    bool folded = false;
    if (f.constant_from_folded != nullptr && f.constant_from_folded(h, i, &folded) != 0) return -1;
    size_t bytes = 0;
    if (f.constant_data_size(h, i, &bytes) != 0) return -1;
    if (!folded) total = saturating_add(total, static_cast<uint64_t>(bytes));
  }
  return total > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(total);
}

}  // namespace

const ZipEntry* blob_entry(const Pt2Model& model) {
  for (const auto& e : model.files) {
    if (ends_with(e.name.substr(e.name.find_last_of('/') + 1), "_weights.blob")) return &e;
  }
  return nullptr;
}

std::string ModelConstants::blob_in_place(const std::string& archive, const Pt2Model& model) {
  const ZipEntry* e = blob_entry(model);
  if (e == nullptr) return "";
  const UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  uint64_t offset = 0;
  return fd && stored_entry_offset(fd.get(), e->name, e->size, &offset) ? e->name : "";
}

ModelConstants::ModelConstants(const std::string& archive, const ZipArchive& zip, const Pt2Model& model,
                               const std::string& extracted_dir, const AotiLibrary& lib) {
  // A linked blob that is only a size stub: the weights are appended to the
  // library file, which the model maps from its own path (USE_MMAP_SELF).
  struct stat st {};
  self_mapped_ = lib.in_library_constant_bytes() == 8 && lib.in_library_size_stub() > 0 &&
                 ::stat(lib.path().c_str(), &st) == 0 &&
                 static_cast<uint64_t>(st.st_size) >= lib.in_library_size_stub();
  for (const auto& e : model.files) {
    if (e.name.substr(e.name.find_last_of('/') + 1) != "weights_config.json") continue;
    // Read only when the model lacks its constants (provide): a model built
    // with them in its library as well never needs these.
    if (lib.in_library_constant_bytes() > 8 || self_mapped_) break;
    pickled_ = std::make_unique<PickledWeights>(archive, zip, model, e, extracted_dir);
    blob_ = std::make_unique<BlobFile>(pickled_->path(), pickled_->offset(), pickled_->size(), false);
    return;
  }
  const ZipEntry* e = blob_entry(model);
  if (e == nullptr) return;
  uint64_t offset = 0;
  const UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd && stored_entry_offset(fd.get(), e->name, e->size, &offset)) {
    blob_ = std::make_unique<BlobFile>(archive, offset, e->size, false);
  } else {
    const std::string file = extracted_dir + "/" + e->name.substr(e->name.find_last_of('/') + 1);
    blob_ = std::make_unique<BlobFile>(file, 0, 0, true);
  }
}

ModelConstants::~ModelConstants() = default;

std::string ModelConstants::describe() const {
  if (pickled_)
    return "pickled weights (" + std::to_string(pickled_->weights().size()) + " in '" + pickled_->path() + "')";
  if (blob_) return "binary blob '" + blob_->path() + "' (" + std::to_string(blob_->size()) + " bytes)";
  if (pickled_) return "pickled weights (data/weights, weights_config.json)";
  return "in the library";
}

bool ModelConstants::provide(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim, bool cuda,
                             const std::vector<Pt2Constant>& list, const UpdatePlan& plan,
                             const std::vector<AotiConstantEntry>& replacements, std::unique_ptr<BlobMapping>* mapping,
                             std::vector<AtenTensorHandle>* kept) const {
  const int64_t need = needed_bytes(lib, h);
  if (need <= 0) return false;  // no constants, or a release that cannot say: as before
  const int64_t linked = lib.in_library_constant_bytes();
  if (linked >= need) return false;  // linked into the library (the default)
  // No objcopy symbols at all and nothing else in the archive: the library
  // embeds its constants another way (torch 2.11's CUDA libraries keep them
  // in a .lrodata section of their own) and loads them itself. (A library
  // exported without its constants keeps a size stub under those symbols.)
  if (linked < 0 && !pickled_ && !blob_) return false;
  const std::string lacks = "the model's constants (" + std::to_string(need) + " bytes) are not in its library";
  if (pickled_) return provide_pickled(lib, h, shim, cuda, list, plan, replacements, mapping, kept, lacks);
  if (blob_) {
    // The model reads need bytes from the pointer it is given: never less.
    if (blob_->size() < static_cast<uint64_t>(need)) {
      fail(Code::BadPackage, lacks + ", and its weights blob '" + blob_->path() + "' holds only " +
                                 std::to_string(blob_->size()) + " bytes");
    }
    std::unique_ptr<BlobMapping> view = blob_->map();
    // The blob holds the unfolded constants back to back, in the model's
    // order (AOTInductor's load_constants reads it so). Where every one's
    // layout is known and the release takes user-managed constants, the
    // model gets tensors over this view: nothing is copied, and only the
    // pages a run touches are read.
    bool in_place = plan.keeps_tensors();
    for (const auto& c : list) in_place = in_place && (c.info.folded || (c.info.shape_known && c.size_known));
    if (in_place) {
      // One update with everything: a second user-managed update of the
      // same constants is not honoured by every release.
      std::vector<AotiConstantEntry> entries = replacements;
      std::set<std::string> replaced;
      for (const auto& r : replacements) replaced.insert(r.name);
      kept->reserve(kept->size() + list.size());
      uint64_t at = 0;
      for (const auto& c : list) {
        if (c.info.folded) continue;
        if (replaced.count(c.info.name) != 0) {
          at += c.info.nbytes;
          continue;
        }
        AtenTensorHandle t = nullptr;
        if (shim.create_tensor_from_blob(
                const_cast<uint8_t*>(view->data()) + at, static_cast<int64_t>(c.info.shape.size()), c.info.shape.data(),
                c.stride.data(), c.storage_offset, c.torch_dtype, shim.device_type_cpu, 0, &t) != 0) {
          fail(Code::Package, lacks + "; making a tensor over constant '" + c.info.name + "' in '" + blob_->path() +
                                  "' failed (aoti_torch_create_tensor_from_blob)");
        }
        kept->push_back(t);
        entries.push_back({c.info.name.c_str(), t});
        at += c.info.nbytes;
      }
      apply_constant_updates(lib, h, plan, entries, false, {&shim, cuda, kept});
      *mapping = std::move(view);
      return true;
    }
    if (lib.fn().update_constants_from_blob == nullptr) {
      fail(Code::Unsupported, lacks + " but in '" + blob_->path() +
                                  "', and the model exports no AOTInductorModelUpdateConstantsFromBlob to load it");
    }
    if (lib.fn().update_constants_from_blob(h, view->data()) != 0) {  // copies
      fail(Code::Package, lacks + "; loading them from '" + blob_->path() +
                              "' failed: " + lib.failure("AOTInductorModelUpdateConstantsFromBlob"));
    }
    return false;
  }
  // A library whose linked blob is only a size stub maps its weights from
  // the end of its own file (USE_MMAP_SELF): present when the file is long
  // enough to hold them.
  if (self_mapped_ && lib.in_library_size_stub() >= static_cast<uint64_t>(need)) return false;
  fail(Code::BadPackage, lacks +
                             " and the archive carries none (exported with package_constants_in_so=False "
                             "and no on-disk format): export it again with the constants in the library, or "
                             "with package_constants_on_disk_format=\"binary_blob\" (torch 2.10+) or "
                             "package_constants_on_disk=True (2.8, 2.9)");
}

bool ModelConstants::provide_pickled(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim, bool cuda,
                                     const std::vector<Pt2Constant>& list, const UpdatePlan& plan,
                                     const std::vector<AotiConstantEntry>& replacements,
                                     std::unique_ptr<BlobMapping>* mapping, std::vector<AtenTensorHandle>* kept,
                                     const std::string& lacks) const {
  const std::string where = "pickled beside it (" + pickled_->path() + ")";
  if (plan.form == UpdateForm::None) {
    fail(Code::Unsupported,
         lacks + " but " + where + ", and the model takes no constants from outside: " + plan.why_none);
  }
  // weights_config.json names constants by FQN, as PyTorch's loader hands
  // them to load_constants.
  std::map<std::string, const PickledWeight*> by_name;
  for (const auto& w : pickled_->weights()) by_name[w.name] = &w;
  std::set<std::string> replaced;
  for (const auto& r : replacements) replaced.insert(r.name);
  std::unique_ptr<BlobMapping> view = blob_->map();
  std::vector<AotiConstantEntry> entries = replacements;
  kept->reserve(kept->size() + list.size());
  for (const auto& c : list) {
    if (c.info.folded || replaced.count(c.info.name) != 0) continue;
    auto it = by_name.find(c.info.original_name);
    if (it == by_name.end()) it = by_name.find(c.info.name);
    if (it == by_name.end()) {
      fail(Code::BadPackage, lacks + " but " + where + ", and its weights_config.json has no entry for constant '" +
                                 c.info.original_name + "'");
    }
    const PickledWeight& w = *it->second;
    if (w.torch_dtype != c.torch_dtype) {
      fail(Code::BadPackage, w.file + " holds constant '" + w.name + "' as " + w.storage_type +
                                 ", not the dtype the model declares for it");
    }
    // The model's kernels were compiled for its own shape and strides (the
    // storage offset may differ: constants sharing a storage share a file).
    if (c.info.shape_known && (w.shape != c.info.shape || w.stride != c.stride)) {
      fail(Code::BadPackage, "weights_config.json gives constant '" + w.name +
                                 "' another shape or stride than the model declares for it");
    }
    AtenTensorHandle t = nullptr;
    if (shim.create_tensor_from_blob(const_cast<uint8_t*>(view->data()) + w.data_at,
                                     static_cast<int64_t>(w.shape.size()), w.shape.data(), w.stride.data(),
                                     w.storage_offset, w.torch_dtype, shim.device_type_cpu, 0, &t) != 0) {
      fail(Code::Package, lacks + "; making a tensor over constant '" + w.name + "' in '" + w.file +
                              "' failed (aoti_torch_create_tensor_from_blob)");
    }
    kept->push_back(t);
    entries.push_back({c.info.name.c_str(), t});
  }
  apply_constant_updates(lib, h, plan, entries, false, {&shim, cuda, kept});
  // A copying release has taken the values; the view is kept either way.
  *mapping = std::move(view);
  return true;
}

}  // namespace aotrun::pt2
