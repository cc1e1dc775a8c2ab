#include "pt2/model_constants.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "util/checked_math.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace aotrun::pt2 {

// The extracted blob, mapped read-only once per opened archive; the model
// copies it into each container's own buffers.
class MappedBlob {
 public:
  explicit MappedBlob(const std::string& path) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0) {
      fail(Code::LoadFailed, "cannot open the weights blob '" + path + "': " + std::strerror(errno));
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) fail(Code::LoadFailed, "cannot map the weights blob '" + path + "': " + std::strerror(errno));
    data_ = static_cast<const uint8_t*>(p);
  }
  ~MappedBlob() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedBlob(const MappedBlob&) = delete;
  MappedBlob& operator=(const MappedBlob&) = delete;
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

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

ModelConstants::ModelConstants(const Pt2Model& model, const std::string& extracted_dir, const AotiLibrary& lib) {
  // A linked blob that is only a size stub: the weights are appended to the
  // library file, which the model maps from its own path (USE_MMAP_SELF).
  struct stat st {};
  self_mapped_ = lib.in_library_constant_bytes() == 8 && lib.in_library_size_stub() > 0 &&
                 ::stat(lib.path().c_str(), &st) == 0 &&
                 static_cast<uint64_t>(st.st_size) >= lib.in_library_size_stub();
  for (const auto& e : model.files) {
    const std::string file = e.name.substr(e.name.find_last_of('/') + 1);
    if (ends_with(file, "_weights.blob")) blob_path_ = extracted_dir + "/" + file;
    if (file == "weights_config.json") pickled_ = true;
  }
  if (!blob_path_.empty()) blob_ = std::make_unique<MappedBlob>(blob_path_);
}

ModelConstants::~ModelConstants() = default;

std::string ModelConstants::describe() const {
  if (blob_) return "binary blob '" + blob_path_ + "' (" + std::to_string(blob_->size()) + " bytes)";
  if (pickled_) return "pickled weights (data/weights, weights_config.json)";
  return "in the library";
}

void ModelConstants::provide(const AotiLibrary& lib, AotiContainerHandle h, const std::string& name) const {
  const int64_t need = needed_bytes(lib, h);
  if (need <= 0) return;  // no constants, or a release that cannot say: as before
  const int64_t linked = lib.in_library_constant_bytes();
  if (linked >= need) return;  // linked into the library (the default)
  (void)name;
  const std::string lacks = "the model's constants (" + std::to_string(need) + " bytes) are not in its library";
  if (blob_) {
    // The model reads need bytes from the pointer it is given: never less.
    if (blob_->size() < static_cast<uint64_t>(need)) {
      fail(Code::BadPackage, lacks + ", and its weights blob '" + blob_path_ + "' holds only " +
                                 std::to_string(blob_->size()) + " bytes");
    }
    if (lib.fn().update_constants_from_blob == nullptr) {
      fail(Code::Unsupported, lacks + " but in '" + blob_path_ +
                                  "', and the model exports no AOTInductorModelUpdateConstantsFromBlob to load it");
    }
    if (lib.fn().update_constants_from_blob(h, blob_->data()) != 0) {
      fail(Code::Package, lacks + "; loading them from '" + blob_path_ +
                              "' failed: " + lib.failure("AOTInductorModelUpdateConstantsFromBlob"));
    }
    return;
  }
  // A library whose linked blob is only a size stub maps its weights from
  // the end of its own file (USE_MMAP_SELF): present when the file is long
  // enough to hold them.
  if (self_mapped_ && lib.in_library_size_stub() >= static_cast<uint64_t>(need)) return;
  if (pickled_) {
    fail(Code::Unsupported, lacks +
                                " but pickled beside it (package_constants_on_disk_format=\"pickle_weights\"), "
                                "which only PyTorch's Python loader reads: export it again with "
                                "package_constants_on_disk_format=\"binary_blob\", or with the constants in "
                                "the library (the default)");
  }
  fail(Code::BadPackage, lacks +
                             " and the archive carries none (exported with package_constants_in_so=False "
                             "and no on-disk format): export it again with the constants in the library, or "
                             "with package_constants_on_disk_format=\"binary_blob\"");
}

}  // namespace aotrun::pt2
