#include "direct_package.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "inline_host.hpp"

namespace aotrun_bench {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

DLDataType safetensors_dtype(const std::string& file, const std::string& name, const std::string& dt) {
  static const std::map<std::string, DLDataType> kTypes = {
      {"F64", {kDLFloat, 64, 1}}, {"F32", {kDLFloat, 32, 1}}, {"F16", {kDLFloat, 16, 1}}, {"BF16", {kDLBfloat, 16, 1}},
      {"I64", {kDLInt, 64, 1}},   {"I32", {kDLInt, 32, 1}},   {"I16", {kDLInt, 16, 1}},   {"I8", {kDLInt, 8, 1}},
      {"U64", {kDLUInt, 64, 1}},  {"U32", {kDLUInt, 32, 1}},  {"U16", {kDLUInt, 16, 1}},  {"U8", {kDLUInt, 8, 1}}};
  auto it = kTypes.find(dt);
  if (it == kTypes.end()) {
    throw std::runtime_error(file + ": tensor '" + name + "' has unsupported dtype '" + dt + "'");
  }
  return it->second;
}

}  // namespace

DirectPackage::DirectPackage(const std::string& path, int32_t num_models) {
  try {
    init(path, num_models);
  } catch (...) {
    release();  // a throwing constructor gets no destructor call
    throw;
  }
}

DirectPackage::~DirectPackage() { release(); }

void DirectPackage::init(const std::string& path, int32_t num_models) {
  std::string dir;
  std::vector<std::string> weights;
  if (::access(path.c_str(), F_OK) != 0) {
    throw std::runtime_error(path + ": package does not exist (is target aotrun_packages built?)");
  }
  if (is_directory(path)) {
    dir = path;
    const std::string manifest_path = path + "/manifest.json";
    std::ifstream in(manifest_path);
    if (!in) throw std::runtime_error(manifest_path + ": cannot open");
    nlohmann::json manifest;
    try {
      in >> manifest;
      library_path_ = path + "/" + manifest.at("library").get<std::string>();
      if (manifest.contains("weights")) {
        for (const auto& w : manifest.at("weights")) weights.push_back(path + "/" + w.get<std::string>());
      }
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(manifest_path + ": " + e.what());
    }
  } else {
    library_path_ = path;
  }

  handle_ = ::dlopen(library_path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) throw std::runtime_error(library_path_ + ": dlopen failed: " + ::dlerror());
  auto create = reinterpret_cast<aotrun_pkg_container_create_fn>(resolve(AOTRUN_PKG_SYM_CONTAINER_CREATE, true));
  destroy_ = reinterpret_cast<aotrun_pkg_container_destroy_fn>(resolve(AOTRUN_PKG_SYM_CONTAINER_DESTROY, true));
  run_ = reinterpret_cast<aotrun_pkg_container_run_fn>(resolve(AOTRUN_PKG_SYM_RUN, true));
  run_st_ =
      reinterpret_cast<aotrun_pkg_container_run_single_threaded_fn>(resolve(AOTRUN_PKG_SYM_RUN_SINGLE_THREADED, false));
  last_error_ = reinterpret_cast<aotrun_pkg_get_last_error_fn>(resolve(AOTRUN_PKG_SYM_GET_LAST_ERROR, true));

  for (const auto& w : weights) map_weights(w);
  // Pointers into storage_ are taken only now that it no longer grows.
  for (size_t i = 0; i < constants_.size(); ++i) {
    constants_[i].name = storage_[i].name.c_str();
    constants_[i].tensor.shape = storage_[i].shape.data();
  }

  aotrun_pkg_create_args args{};
  args.struct_size = sizeof(args);
  args.num_models = num_models;
  args.device = DLDevice{kDLCPU, 0};
  args.host = inline_host();
  args.constants = constants_.data();
  args.num_constants = constants_.size();
  args.package_dir = dir.empty() ? nullptr : dir.c_str();
  const int32_t rc = create(&container_, &args);
  if (rc != AOTRUN_PKG_OK || container_ == nullptr) {
    container_ = nullptr;
    throw std::runtime_error(library_path_ + ": container_create failed (" + std::to_string(rc) + "): " + last_error());
  }
}

void DirectPackage::release() {
  if (container_ != nullptr) destroy_(container_);
  container_ = nullptr;
  for (const Mapping& m : mappings_) ::munmap(m.addr, m.size);
  mappings_.clear();
  if (handle_ != nullptr) ::dlclose(handle_);
  handle_ = nullptr;
}

std::string DirectPackage::last_error() const {
  const char* msg = last_error_ != nullptr ? last_error_() : nullptr;
  return msg != nullptr ? msg : "";
}

void* DirectPackage::resolve(const char* symbol, bool required) {
  void* p = ::dlsym(handle_, symbol);
  if (p == nullptr && required) {
    throw std::runtime_error(library_path_ + ": missing entry point " + symbol);
  }
  return p;
}

// safetensors: u64 little-endian header length, JSON header, data section.
// Every tensor becomes a constant pointing into the read-only mapping.
void DirectPackage::map_weights(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(file + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 8) {
    ::close(fd);
    throw std::runtime_error(file + ": not a safetensors file (too short)");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (addr == MAP_FAILED) throw std::runtime_error(file + ": mmap failed: " + std::strerror(errno));
  mappings_.push_back({addr, size});

  const auto* bytes = static_cast<const unsigned char*>(addr);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > size - 8) throw std::runtime_error(file + ": header length exceeds the file");
  const unsigned char* data = bytes + 8 + header_len;
  const size_t data_size = size - 8 - header_len;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes + 8, bytes + 8 + header_len);
    for (const auto& [name, t] : header.items()) {
      if (name == "__metadata__") continue;
      const auto offsets = t.at("data_offsets").get<std::vector<size_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size) {
        throw std::runtime_error(file + ": tensor '" + name + "' has bad data_offsets");
      }
      storage_.push_back({name, t.at("shape").get<std::vector<int64_t>>()});
      aotrun_pkg_constant c{};
      c.tensor.data = const_cast<unsigned char*>(data + offsets[0]);  // read-only by contract
      c.tensor.device = DLDevice{kDLCPU, 0};
      c.tensor.ndim = static_cast<int32_t>(storage_.back().shape.size());
      c.tensor.dtype = safetensors_dtype(file, name, t.at("dtype").get<std::string>());
      constants_.push_back(c);
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file + ": bad header: " + e.what());
  }
}

}  // namespace aotrun_bench
