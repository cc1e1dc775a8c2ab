#include "package/pt2/constants/pickle_weights.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/constants/tensor_pickle.hpp"
#include "package/pt2/archive/zip_stored.hpp"
#include "base/error.hpp"
#include "base/json.hpp"
#include "base/unique_fd.hpp"

namespace aotrun::pt2 {
namespace {

constexpr size_t kMaxConfig = 64u << 20;
constexpr size_t kMaxSaveEntries = 64;  // torch.save of one tensor writes 7
constexpr uint64_t kAlign = 64;         // where extracted copies start, as torch.save aligns storages

// A read-only view of part of a file, for checking the weight files at open.
class ReadView {
 public:
  ReadView(const std::string& path, uint64_t offset, uint64_t size) {
    if (size == 0) return;
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset / page * page;
    length_ = static_cast<size_t>(offset - start + size);
    base_ = fd ? ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd.get(), static_cast<off_t>(start)) : MAP_FAILED;
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      fail(Code::LoadFailed, "cannot map the pickled weights in '" + path + "': " + std::strerror(errno));
    }
    data_ = static_cast<const uint8_t*>(base_) + (offset - start);
  }
  ~ReadView() {
    if (base_ != nullptr) ::munmap(base_, length_);
  }
  ReadView(const ReadView&) = delete;
  ReadView& operator=(const ReadView&) = delete;
  const uint8_t* data() const { return data_; }

 private:
  void* base_ = nullptr;
  size_t length_ = 0;
  const uint8_t* data_ = nullptr;
};

struct ConfigEntry {
  std::string name, file;
  std::vector<int64_t> shape, stride;
  int64_t offset = 0;
};

std::vector<int64_t> dims(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() > 64) fail(Code::BadPackage, where + " is not a list of at most 64 integers");
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      fail(Code::BadPackage, where + " holds something other than non-negative integers");
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// {"<fqn>": ["weight_<n>", shape, stride, storage_offset], ...}
std::vector<ConfigEntry> read_config(const ZipArchive& zip, const ZipEntry& config) {
  const std::string text = zip.read(config, kMaxConfig);
  const PackageJson doc =
      parse_package_json(text.data(), text.data() + text.size(), config.name, "weights config", Code::BadPackage);
  const nlohmann::json& j = doc.get();
  if (!j.is_object()) fail(Code::BadPackage, config.name + " is not a JSON object");
  std::vector<ConfigEntry> out;
  for (const auto& [name, v] : j.items()) {
    const std::string where = config.name + ": constant '" + name + "'";
    if (!v.is_array() || v.size() != 4 || !v[0].is_string() || !v[3].is_number_integer() || v[3].get<int64_t>() < 0) {
      fail(Code::BadPackage, where + " is not [file, shape, stride, storage_offset]");
    }
    ConfigEntry e;
    e.name = name;
    e.file = v[0].get<std::string>();
    if (e.file.empty() || e.file.find('/') != std::string::npos || e.file == "." || e.file == "..") {
      fail(Code::BadPackage, where + " names the weight file '" + e.file + "', which is not a plain file name");
    }
    e.shape = dims(v[1], where + " shape");
    e.stride = dims(v[2], where + " stride");
    if (e.shape.size() != e.stride.size()) fail(Code::BadPackage, where + " has a shape and stride of different ranks");
    e.offset = v[3].get<int64_t>();
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

SavedTensor read_torch_save(const uint8_t* data, uint64_t size, const std::string& label) {
  std::vector<StoredEntry> entries;
  std::string why;
  if (!stored_entries(data, size, kMaxSaveEntries, &entries, &why)) {
    fail(Code::BadPackage, label + " is not a torch.save archive aotrun can read in place: " + why);
  }
  // <p>/data.pkl names the record prefix; torch.save writes exactly one.
  const StoredEntry* pkl = nullptr;
  for (const auto& e : entries) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && slash > 0 && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      if (pkl != nullptr) fail(Code::BadPackage, label + " holds more than one data.pkl");
      pkl = &e;
    }
  }
  if (pkl == nullptr) fail(Code::BadPackage, label + " holds no <name>/data.pkl (not a torch.save archive)");
  const std::string prefix = pkl->name.substr(0, pkl->name.size() - 8);  // keeps the '/'
  for (const auto& e : entries) {
    if (e.name == prefix + "byteorder" && !(e.size == 6 && std::memcmp(data + e.offset, "little", 6) == 0)) {
      fail(Code::Unsupported, label + " was saved on a big-endian machine");
    }
  }
  SavedTensor s;
  s.tensor = read_tensor_pickle(data + pkl->offset, static_cast<size_t>(pkl->size), label + " (" + pkl->name + ")");
  if (s.tensor.location != "cpu") {
    fail(Code::Unsupported, label + " holds a storage saved from '" + s.tensor.location + "'; only CPU weights load");
  }
  const std::string record = prefix + "data/" + s.tensor.key;
  const uint64_t bytes = s.tensor.numel * s.tensor.item_bytes;  // bounded by the reader
  for (const auto& e : entries) {
    if (e.name != record) continue;
    if (e.size != bytes) {
      fail(Code::BadPackage, label + ": storage '" + record + "' holds " + std::to_string(e.size) +
                                 " bytes, but its record says " + std::to_string(s.tensor.numel) + " " +
                                 s.tensor.storage_type + " elements (" + std::to_string(bytes) + " bytes)");
    }
    s.data_at = e.offset;
    return s;
  }
  fail(Code::BadPackage, label + " lacks the storage record '" + record + "' its tensor points at");
}

PickledWeights::PickledWeights(const std::string& archive, const ZipArchive& zip, const Pt2Model& model,
                               const ZipEntry& config, const std::string& extracted_dir) {
  const std::vector<ConfigEntry> configs = read_config(zip, config);
  // The archive's root: what precedes data/aotinductor/<model>/.
  const std::string& lib = model.library.name;
  const size_t at = lib.rfind("data/aotinductor/");
  const std::string root = at == std::string::npos ? "" : lib.substr(0, at);

  // The weight files named, each with where it lies in path_.
  std::map<std::string, const ZipEntry*> files;
  for (const auto& c : configs) {
    if (files.count(c.file) != 0) continue;
    const std::string name = root + "data/weights/" + c.file;
    const auto it = std::find_if(zip.entries().begin(), zip.entries().end(),
                                 [&](const ZipEntry& e) { return e.name == name && !e.is_dir && !e.is_symlink; });
    if (it == zip.entries().end()) {
      fail(Code::BadPackage, config.name + " names the weight file '" + name + "', which the archive lacks");
    }
    files[c.file] = &*it;
  }
  std::map<std::string, uint64_t> where;
  bool in_place = true;
  {
    const UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
    for (const auto& [file, e] : files) {
      uint64_t off = 0;
      // Mapped in place only where a storage would be aligned for its dtype:
      // torch aligns both the .pt2's entries and torch.save's to 64 bytes.
      in_place = in_place && fd && stored_entry_offset(fd.get(), e->name, e->size, &off) && off % kAlign == 0;
      where[file] = off;
    }
  }
  if (in_place) {
    path_ = archive;
  } else {
    // Compressed (not as torch writes them): copied, each 64-byte aligned,
    // into one file of the private directory.
    path_ = extracted_dir + "/pickled_weights.bin";
    const UniqueFd out(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!out) fail(Code::LoadFailed, "cannot create '" + path_ + "': " + std::strerror(errno));
    uint64_t end = 0;
    for (const auto& [file, e] : files) {
      end = (end + kAlign - 1) / kAlign * kAlign;
      where[file] = end;
      const std::string bytes = zip.read(*e, static_cast<size_t>(e->size));
      for (size_t done = 0; done < bytes.size();) {
        const ssize_t w = ::pwrite(out.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(end + done));
        if (w <= 0) fail(Code::LoadFailed, "cannot write '" + path_ + "': " + std::strerror(errno));
        done += static_cast<size_t>(w);
      }
      end += bytes.size();
    }
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& [file, e] : files) {
    lo = std::min(lo, where[file]);
    hi = std::max(hi, where[file] + e->size);
  }
  if (files.empty()) lo = hi = 0;
  offset_ = lo;
  size_ = hi - lo;

  const ReadView view(path_, offset_, size_);
  std::map<std::string, SavedTensor> saved;
  for (const auto& [file, e] : files) {
    SavedTensor s = read_torch_save(view.data() + (where[file] - lo), e->size, e->name);
    s.data_at += where[file] - lo;
    if ((offset_ + s.data_at) % s.tensor.item_bytes != 0) {
      fail(Code::BadPackage, e->name + ": its storage is not aligned for " + s.tensor.storage_type);
    }
    saved[file] = std::move(s);
  }
  for (const auto& c : configs) {
    const SavedTensor& s = saved[c.file];
    uint64_t extent = 0;
    const uint64_t bytes = s.tensor.numel * s.tensor.item_bytes;
    if (!storage_extent(c.shape, c.stride, c.offset, s.tensor.item_bytes, &extent) || extent > bytes) {
      fail(Code::BadPackage, config.name + ": constant '" + c.name + "' reaches past its storage in '" +
                                 files[c.file]->name + "' (" + std::to_string(bytes) + " bytes)");
    }
    PickledWeight w;
    w.name = c.name;
    w.file = files[c.file]->name;
    w.storage_type = s.tensor.storage_type;
    w.torch_dtype = s.tensor.torch_dtype;
    w.data_at = s.data_at;
    w.shape = c.shape;
    w.stride = c.stride;
    w.storage_offset = c.offset;
    weights_.push_back(std::move(w));
  }
}

}  // namespace aotrun::pt2
