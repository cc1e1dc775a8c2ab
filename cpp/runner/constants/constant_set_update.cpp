#include "runner/constants/constant_set_update.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "package/safetensors.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"
#include "base/host_alloc.hpp"

namespace aotrun {
namespace {

constexpr size_t kCopyAlign = 64;

bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

bool host_readable(const DLTensor& t) {
  const int32_t type = device_type_of(t.device);
  return type == kDLCPU || type == kDLCUDAHost || type == kDLCUDAManaged || type == kDLROCMHost;
}

// Checks one replacement against what the package says of the constant;
// returns its byte size.
uint64_t check_replacement(const Package& pkg, const ConstantInfo& info, const DLTensor& t) {
  const std::string what = "constant '" + info.name + "' of package '" + pkg.name() + "'";
  if (info.folded) {
    fail(Code::InvalidArgument, what +
                                    " is folded (computed from other constants when the model is loaded); "
                                    "update the constants it is folded from instead");
  }
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) {
    fail(Code::InvalidArgument, "the new value of " + what + " has no valid shape");
  }
  if (!same_dtype(t.dtype, info.dtype)) {
    fail(Code::InvalidArgument,
         "the new value of " + what + " is " + dtype_name(t.dtype) + "; the constant is " + dtype_name(info.dtype));
  }
  if (info.shape_known && (static_cast<size_t>(t.ndim) != info.shape.size() ||
                           !std::equal(info.shape.begin(), info.shape.end(), t.shape))) {
    fail(Code::InvalidArgument, "the new value of " + what + " has shape " + shape_string(t.shape, t.ndim) +
                                    "; the constant's is " +
                                    shape_string(info.shape.data(), static_cast<int>(info.shape.size())));
  }
  uint64_t bytes = 0;
  if (!checked_bytes(t, &bytes)) {
    fail(Code::InvalidArgument,
         "the new value of " + what + " has shape " + shape_string(t.shape, t.ndim) + ", too large to address");
  }
  // With its shape known, the shape fixes the size; the bytes the model keeps
  // for it may be more (a .pt2 rounds each constant up to 64 bytes: a
  // [1000] float bias holds 4,032), never less.
  if (info.nbytes != 0 && (info.shape_known ? bytes > info.nbytes : bytes != info.nbytes)) {
    fail(Code::InvalidArgument, "the new value of " + what + " holds " + std::to_string(bytes) +
                                    " bytes; the constant holds " + std::to_string(info.nbytes));
  }
  if (!host_readable(t)) {
    fail(Code::InvalidArgument, "the new value of " + what + " is on device type " +
                                    std::to_string(device_type_of(t.device)) +
                                    "; updates are read from host memory (kDLCPU, kDLCUDAHost, kDLCUDAManaged)");
  }
  if (!is_compact(t)) {
    fail(Code::InvalidArgument,
         "the new value of " + what + " is not contiguous (strides " + shape_string(t.strides, t.ndim) + ")");
  }
  if (bytes > 0 && t.data == nullptr) fail(Code::InvalidArgument, "the new value of " + what + " has NULL data");
  return bytes;
}

// A constant's tensor as the set keeps it: the shape points into `shapes`
// storage owned with the copy.
struct OwnedConstant {
  std::string name;
  std::vector<int64_t> shape;
};

}  // namespace

ConstantSet build_update(const Package& pkg, const ConstantSet& active, const NamedTensor* tensors, size_t count,
                         uint32_t flags, ConstantStorage shared) {
  if ((flags & ~kUpdateFull) != 0) {
    fail(
        Code::InvalidArgument, "unknown constant-update flags 0x" + [&] {
          char b[16];
          std::snprintf(b, sizeof b, "%x", flags & ~kUpdateFull);
          return std::string(b);
        }());
  }
  if (count > 0 && tensors == nullptr) fail(Code::InvalidArgument, "tensors is NULL");
  const std::vector<ConstantInfo>& list = pkg.constant_list();
  std::unordered_map<std::string, const ConstantInfo*> by_name;
  for (const ConstantInfo& c : list) by_name.emplace(c.name, &c);

  // Check everything before copying anything.
  std::unordered_set<std::string> named;
  std::vector<uint64_t> sizes(count);
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i].name == nullptr) fail(Code::InvalidArgument, "tensors[" + std::to_string(i) + "].name is NULL");
    if (tensors[i].tensor == nullptr) {
      fail(Code::InvalidArgument, "tensors[" + std::to_string(i) + "] ('" + tensors[i].name + "') has no tensor");
    }
    const std::string name = tensors[i].name;
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      fail(Code::InvalidArgument, "package '" + pkg.name() + "' has no constant '" + name + "'");
    }
    if (!named.insert(name).second) {
      fail(Code::InvalidArgument, "constant '" + name + "' is given twice in one update");
    }
    sizes[i] = check_replacement(pkg, *it->second, *tensors[i].tensor);
  }
  if (flags & kUpdateFull) {
    std::string missing;
    size_t n_missing = 0;
    for (const ConstantInfo& c : list) {
      if (c.folded || named.count(c.name)) continue;
      if (n_missing++ < 8) missing += (missing.empty() ? "'" : ", '") + c.name + "'";
    }
    if (n_missing > 0) {
      fail(Code::InvalidArgument, "a full update of package '" + pkg.name() + "' leaves out " +
                                      std::to_string(n_missing) + " constant(s): " + missing +
                                      (n_missing > 8 ? ", ..." : ""));
    }
  }

  ConstantSet next;
  // Names and shapes of the new entries live in one block kept with the set.
  auto owned = std::make_shared<std::vector<OwnedConstant>>();
  owned->reserve(count);
  next.storage = active.storage;
  if (shared) next.storage.push_back(shared);
  next.storage.push_back(owned);
  std::unordered_map<std::string, size_t> index;
  // Start from the active set: its entries (the whole table, or the
  // replacements so far) keep pointing into its storage, now shared.
  for (const aotrun_pkg_constant& c : active.entries) {
    index.emplace(c.name, next.entries.size());
    next.entries.push_back(c);
  }
  for (size_t i = 0; i < count; ++i) {
    const DLTensor& src = *tensors[i].tensor;
    owned->push_back(OwnedConstant{tensors[i].name, std::vector<int64_t>(src.shape, src.shape + src.ndim)});
    OwnedConstant& o = owned->back();
    aotrun_pkg_constant c{};
    c.name = o.name.c_str();
    c.tensor = src;
    c.tensor.device = DLDevice{kDLCPU, 0};
    c.tensor.shape = o.shape.data();
    c.tensor.strides = nullptr;
    c.tensor.byte_offset = 0;
    if (shared) {
      c.tensor.data = static_cast<char*>(src.data) + src.byte_offset;  // points into `shared`
    } else {
      void* copy = aligned_alloc_bytes(sizes[i], kCopyAlign);
      if (copy == nullptr) {
        fail(Code::OutOfMemory,
             "cannot allocate " + std::to_string(sizes[i]) + " bytes for the new value of constant '" + o.name + "'");
      }
      next.storage.push_back(
          ConstantStorage(copy, [](const void* p) { aligned_free(const_cast<void*>(p), kCopyAlign); }));
      if (sizes[i] > 0) std::memcpy(copy, static_cast<const char*>(src.data) + src.byte_offset, sizes[i]);
      c.tensor.data = copy;
    }
    auto it = index.find(o.name);
    if (it != index.end()) {
      next.entries[it->second] = c;
    } else {
      index.emplace(o.name, next.entries.size());
      next.entries.push_back(c);
    }
  }
  return next;
}

ConstantSet build_update_from_file(const Package& pkg, const ConstantSet& active, const std::string& path,
                                   uint32_t flags) {
  // The file is the caller's, not the package's: a missing one is
  // NOT_FOUND and a malformed one INVALID_ARGUMENT (for a package's own
  // weights both are BAD_PACKAGE).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    fail(Code::NotFound, "constants file '" + path + "' does not exist");
  }
  std::shared_ptr<SafetensorsFile> file;
  try {
    file = SafetensorsFile::open(path);
  } catch (const Error& e) {
    throw Error(e.code() == Code::BadPackage ? Code::InvalidArgument : e.code(), e.what());
  }
  const std::vector<MappedTensor>& mapped = file->tensors();
  std::vector<DLTensor> views(mapped.size());
  std::vector<NamedTensor> named(mapped.size());
  for (size_t i = 0; i < mapped.size(); ++i) {
    DLTensor& t = views[i];
    t.data = const_cast<void*>(mapped[i].data);
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(mapped[i].shape.size());
    t.dtype = mapped[i].dtype;
    t.shape = const_cast<int64_t*>(mapped[i].shape.data());
    named[i] = NamedTensor{mapped[i].name.c_str(), &t};
  }
  try {
    return build_update(pkg, active, named.data(), named.size(), flags, file);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (in " + path + ")");
  }
}

}  // namespace aotrun
