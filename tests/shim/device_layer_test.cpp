// The shim's device layers (include/aotrun_shim/device_layer.h) driven by a
// layer over host memory that counts what it is asked, registered for device
// type CUDA (this program does not load the real CUDA layer): storage is
// allocated and released through the layer exactly once, copies between the
// CPU and the device (dense, strided, broadcast) go through copy_bytes and
// copy_strided, item getters read through a host copy, borrowed device
// memory is never released, and misuse is refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "aotrun_shim/device_layer.h"
#include "aotrun_shim/shim.h"

namespace {

constexpr int32_t kCuda = 1, kCpu = 0, kF32 = 6, kF64 = 7;

struct Counts {
  std::mutex mu;
  std::map<void*, size_t> live;  // allocated, not yet released
  int allocs = 0, releases = 0, byte_copies = 0, strided_copies = 0;
  int32_t last_index = -2;
} g;

const char* fake_allocate(int32_t device_index, size_t nbytes, void** data, void** record) {
  std::lock_guard<std::mutex> lock(g.mu);
  *data = nbytes == 0 ? nullptr : std::malloc(nbytes);
  *record = reinterpret_cast<void*>(0x1234);  // handed back to release unchanged
  g.last_index = device_index;
  ++g.allocs;
  if (*data != nullptr) g.live[*data] = nbytes;
  return nullptr;
}

void fake_release(int32_t, void* data, void* record) {
  std::lock_guard<std::mutex> lock(g.mu);
  EXPECT_EQ(record, reinterpret_cast<void*>(0x1234));
  ++g.releases;
  if (data != nullptr) {
    EXPECT_EQ(g.live.erase(data), 1u) << "released twice or never allocated";
    std::free(data);
  }
}

const char* fake_copy_bytes(int32_t, void* dst, int32_t, const void* src, int32_t, size_t nbytes) {
  ++g.byte_copies;
  std::memmove(dst, src, nbytes);
  return nullptr;
}

const char* fake_copy_strided(int32_t, void* dst, const void* src, size_t elem, int64_t ndim, const int64_t* sizes,
                              const int64_t* dst_strides, const int64_t* src_strides) {
  ++g.strided_copies;
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, doff = 0, soff = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      doff += (rest % sizes[d]) * dst_strides[d];
      soff += (rest % sizes[d]) * src_strides[d];
      rest /= sizes[d];
    }
    std::memcpy(static_cast<char*>(dst) + doff * elem, static_cast<const char*>(src) + soff * elem, elem);
  }
  return nullptr;
}

const aotrun_shim_device_layer kFake = {sizeof(aotrun_shim_device_layer),
                                        kCuda,
                                        "fake-cuda",
                                        &fake_allocate,
                                        &fake_release,
                                        &fake_copy_bytes,
                                        &fake_copy_strided};

// ctest runs each test in its own process: those that need the layer
// register it (the same table again is a no-op).
void ensure_registered() { ASSERT_EQ(aotrun_shim_register_device_layer(&kFake), AOTI_TORCH_SUCCESS); }

AtenTensorHandle device_tensor(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t index = 0) {
  ensure_registered();
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), kF32, kCuda,
                                     index, &h),
            AOTI_TORCH_SUCCESS)
      << aotrun_shim_last_error();
  return h;
}

AtenTensorHandle host_view(float* p, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(aoti_torch_create_tensor_from_blob(p, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), 0,
                                               kF32, kCpu, -1, &h),
            AOTI_TORCH_SUCCESS);
  return h;
}

// Before any layer: a CUDA tensor is refused naming the missing library.
// (First in this program: gtest runs tests in declaration order, and ctest
// runs it in a process of its own.)
TEST(DeviceLayer, CudaTensorWithoutLayerNamesTheLibrary) {
  const int64_t n = 4, one = 1;
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, &one, kF32, kCuda, 0, &h), AOTI_TORCH_FAILURE);
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("libaotrun_shim_cuda.so.1"), std::string::npos)
      << aotrun_shim_last_error();
}

TEST(DeviceLayer, RegistrationIsCheckedAndOnce) {
  ASSERT_EQ(aotrun_shim_register_device_layer(nullptr), AOTI_TORCH_FAILURE);
  aotrun_shim_device_layer cpu = kFake;
  cpu.device_type = kCpu;
  EXPECT_EQ(aotrun_shim_register_device_layer(&cpu), AOTI_TORCH_FAILURE);
  aotrun_shim_device_layer short_table = kFake;
  short_table.struct_size = 8;
  EXPECT_EQ(aotrun_shim_register_device_layer(&short_table), AOTI_TORCH_FAILURE);
  ASSERT_EQ(aotrun_shim_register_device_layer(&kFake), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  EXPECT_EQ(aotrun_shim_register_device_layer(&kFake), AOTI_TORCH_SUCCESS);  // the same table again: no-op
  aotrun_shim_device_layer other = kFake;
  other.name = "other";
  EXPECT_EQ(aotrun_shim_register_device_layer(&other), AOTI_TORCH_FAILURE);
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("already has a layer (fake-cuda)"), std::string::npos);
}

TEST(DeviceLayer, StorageComesFromTheLayerAndGoesBackOnce) {
  const int allocs = g.allocs, releases = g.releases;
  AtenTensorHandle t = device_tensor({2, 3}, {3, 1}, 0);
  EXPECT_EQ(g.allocs, allocs + 1);
  int32_t type = -1, index = -1;
  aoti_torch_get_device_type(t, &type);
  aoti_torch_get_device_index(t, &index);
  EXPECT_EQ(type, kCuda);
  EXPECT_EQ(index, 0);
  // Views share the storage: released when the last one goes.
  AtenTensorHandle view = nullptr;
  const int64_t s[1] = {3}, st[1] = {1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(t, 1, s, st, 3, &view), AOTI_TORCH_SUCCESS);
  aoti_torch_delete_tensor_object(t);
  EXPECT_EQ(g.releases, releases);
  aoti_torch_delete_tensor_object(view);
  EXPECT_EQ(g.releases, releases + 1);
  EXPECT_TRUE(g.live.empty());
}

TEST(DeviceLayer, CopiesBetweenHostAndDeviceFollowStridesAndBroadcast) {
  float host[6] = {1, 2, 3, 4, 5, 6};
  AtenTensorHandle src = host_view(host, {2, 3}, {3, 1});
  AtenTensorHandle dev = device_tensor({2, 3}, {3, 1});
  const int bytes = g.byte_copies;
  ASSERT_EQ(aoti_torch_copy_(dev, src, 0), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  EXPECT_EQ(g.byte_copies, bytes + 1);  // dense to dense: one byte copy
  // A transposed device view back to a dense host tensor: staged on the device.
  AtenTensorHandle tr = nullptr;
  const int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(dev, 2, ts, tst, 0, &tr), AOTI_TORCH_SUCCESS);
  float out[6] = {};
  AtenTensorHandle dst = host_view(out, {3, 2}, {2, 1});
  const int strided = g.strided_copies;
  ASSERT_EQ(aoti_torch_copy_(dst, tr, 0), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  EXPECT_GT(g.strided_copies, strided);
  const float want[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
  // A host row broadcast into every row of a device tensor (addmm's bias).
  float row[3] = {7, 8, 9};
  AtenTensorHandle bias = host_view(row, {3}, {1});
  ASSERT_EQ(aoti_torch_copy_(dev, bias, 0), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  float back[6] = {};
  AtenTensorHandle b2 = host_view(back, {2, 3}, {3, 1});
  ASSERT_EQ(aoti_torch_copy_(b2, dev, 0), AOTI_TORCH_SUCCESS);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back[i], row[i % 3]) << i;
  // clone and clone_preserve_strides stay on the device.
  AtenTensorHandle c1 = nullptr, c2 = nullptr;
  ASSERT_EQ(aoti_torch_clone(tr, &c1), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_clone_preserve_strides(tr, &c2), AOTI_TORCH_SUCCESS);
  for (AtenTensorHandle c : {c1, c2}) {
    int32_t type = -1;
    aoti_torch_get_device_type(c, &type);
    EXPECT_EQ(type, kCuda);
  }
  int64_t* strides = nullptr;
  aoti_torch_get_strides(c2, &strides);
  EXPECT_EQ(strides[0], 1);
  EXPECT_EQ(strides[1], 3);
  // One element read back through a host copy.
  AtenTensorHandle one = nullptr;
  const int64_t none = 0;
  ASSERT_EQ(aoti_torch__reinterpret_tensor(c2, 0, &none, &none, 4, &one), AOTI_TORCH_SUCCESS);
  float item = 0;
  ASSERT_EQ(aoti_torch_item_float32(one, &item), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  EXPECT_EQ(item, 8.0f);  // storage element 4 of the broadcast rows {7, 8, 9, 7, 8, 9}
  double as_double = 0;
  ASSERT_EQ(aoti_torch_item_float64(one, &as_double), AOTI_TORCH_SUCCESS);  // converted on the host
  EXPECT_EQ(as_double, 8.0);
  for (AtenTensorHandle h : {src, dev, tr, dst, bias, b2, c1, c2, one}) aoti_torch_delete_tensor_object(h);
  EXPECT_TRUE(g.live.empty());
}

TEST(DeviceLayer, BorrowedDeviceMemoryIsNeverReleased) {
  ensure_registered();
  std::vector<float> mem(4);
  const int releases = g.releases;
  const int64_t n = 4, one = 1;
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(mem.data(), 1, &n, &one, 0, kF32, kCuda, 3, &h), AOTI_TORCH_SUCCESS);
  int32_t index = -1;
  aoti_torch_get_device_index(h, &index);
  EXPECT_EQ(index, 3);
  aoti_torch_delete_tensor_object(h);
  EXPECT_EQ(g.releases, releases);
}

TEST(DeviceLayer, ConversionsAndUnknownDevicesAreRefusedByName) {
  AtenTensorHandle dev = device_tensor({2}, {1});
  double d[2] = {1, 2};
  const int64_t n = 2, one = 1;
  AtenTensorHandle host = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(d, 1, &n, &one, 0, kF64, kCpu, -1, &host), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(aoti_torch_copy_(dev, host, 0), AOTI_TORCH_FAILURE);
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("float64 to float32 with a device tensor"), std::string::npos)
      << aotrun_shim_last_error();
  AtenTensorHandle xpu = nullptr;
  EXPECT_EQ(aoti_torch_empty_strided(1, &n, &one, kF32, 12, 0, &xpu), AOTI_TORCH_FAILURE);
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("device type 12"), std::string::npos);
  aoti_torch_delete_tensor_object(dev);
  aoti_torch_delete_tensor_object(host);
}

}  // namespace
