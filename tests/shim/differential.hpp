// Shared by the differential suites: real libtorch (AOTRUN_LIBTORCH:
// libc10.so, libtorch_cpu.so, libtorch.so loaded by path, RTLD_LOCAL) and
// aotrun's shim (AOTRUN_SHIM_LIBRARY by path, RTLD_LOCAL) resolved into two
// ShimApi tables; a Side holds one provider's buffers and handles for a test.
// Without AOTRUN_LIBTORCH, NEED_LIBTORCH() skips saying why. shim_only()
// gives the shim alone, for reference checks that need no libtorch.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "shim_api.hpp"
#include "tensor_probe.hpp"

namespace aotrun_shim_test {

struct Providers {
  ShimApi torch, shim;
  std::string skip;
};

inline const Providers& providers() {
  static Providers* p = [] {
    auto* pr = new Providers;
    const char* dir = std::getenv("AOTRUN_LIBTORCH");
    if (dir == nullptr || *dir == '\0') {
      pr->skip = "AOTRUN_LIBTORCH is not set (the directory holding libtorch_cpu.so; scripts/fetch-libtorch.sh)";
      return pr;
    }
    void* cpu = nullptr;
    for (const char* name : {"libc10.so", "libtorch_cpu.so", "libtorch.so"}) {
      const std::string path = std::string(dir) + "/" + name;
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) {
        pr->skip = "cannot load " + path + ": " + ::dlerror();
        return pr;
      }
      if (std::string(name) == "libtorch_cpu.so") cpu = h;
    }
    std::string missing = pr->torch.resolve(cpu);
    if (!missing.empty()) {
      pr->skip = "libtorch lacks " + missing;
      return pr;
    }
    void* shim = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (shim == nullptr) {
      pr->skip = std::string("cannot load the shim: ") + ::dlerror();
      return pr;
    }
    missing = pr->shim.resolve(shim);
    if (!missing.empty()) pr->skip = "the shim lacks " + missing;
    return pr;
  }();
  return *p;
}

// The shim alone (no libtorch needed); fails the calling test when it cannot
// be loaded. last_error: aotrun_shim_last_error.
struct ShimOnly {
  ShimApi api;
  const char* (*last_error)() = nullptr;
  std::string problem;
};
inline const ShimOnly& shim_only() {
  static ShimOnly* s = [] {
    auto* so = new ShimOnly;
    void* h = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      so->problem = std::string("cannot load the shim: ") + ::dlerror();
      return so;
    }
    const std::string missing = so->api.resolve(h);
    if (!missing.empty()) so->problem = "the shim lacks " + missing;
    so->last_error = reinterpret_cast<const char* (*)()>(::dlsym(h, "aotrun_shim_last_error"));
    if (so->last_error == nullptr) so->problem = "the shim lacks aotrun_shim_last_error";
    return so;
  }();
  return *s;
}

#define NEED_LIBTORCH()                                     \
  do {                                                      \
    if (!::aotrun_shim_test::providers().skip.empty()) {    \
      GTEST_SKIP() << ::aotrun_shim_test::providers().skip; \
    }                                                       \
  } while (0)

// One provider's view of a test: its API, the buffers its blobs point into,
// and the handles to delete at the end.
struct Side {
  const ShimApi& a;
  const char* name;
  struct AlignedDelete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::vector<std::unique_ptr<char[], AlignedDelete>> bufs;
  std::vector<AtenTensorHandle> handles;
  explicit Side(const ShimApi& api, const char* n) : a(api), name(n) {}
  ~Side() {
    for (auto h : handles) a.aoti_torch_delete_tensor_object(h);
  }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
  AtenTensorHandle keep(AtenTensorHandle h) {
    if (h != nullptr) handles.push_back(h);
    return h;
  }
  // A copy of `bytes` kept until the end of the test, 64-byte aligned as
  // libtorch's CPU allocator aligns (and never null, even when empty): some
  // of libtorch's AVX-512 kernels (bfloat16 _weight_int8pack_mm) load their
  // inputs with aligned instructions and fault on less.
  char* hold(const std::vector<char>& bytes) {
    const size_t n = std::max<size_t>(bytes.size(), 64);
    bufs.emplace_back(static_cast<char*>(::operator new[](n, std::align_val_t{64})));
    if (!bytes.empty()) std::memcpy(bufs.back().get(), bytes.data(), bytes.size());
    return bufs.back().get();
  }
  // A blob-backed tensor over `bytes` (copied), as the model's inputs are.
  AtenTensorHandle blob(const std::vector<char>& bytes, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                        int32_t dtype, int64_t offset = 0) {
    char* data = hold(bytes);
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(
        a.aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                             offset, dtype, a.aoti_torch_device_type_cpu(), 0, &h),
        0);
    return keep(h);
  }
  AtenTensorHandle empty(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype) {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(a.aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype,
                                         a.aoti_torch_device_type_cpu(), 0, &h),
              0);
    return keep(h);
  }
};

template <typename T>
std::vector<char> bytes_of(const std::vector<T>& v) {
  std::vector<char> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace aotrun_shim_test
