// The CUDA device layer (device_layer.h): tensor storage from each device's
// stream-ordered pool on the thread's current stream, released on the stream
// it was allocated on, so that a capture owns what it allocates (cuda.h,
// "Memory"). Registered with libaotrun_shim when this library loads.
#include <atomic>
#include <memory>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "aotrun_shim/cuda.h"
#include "aotrun_shim/device_layer.h"
#include "cuda_state.hpp"
#include "launchers.hpp"

namespace aotrun::shim::cuda {
namespace {

// What the layer notes about one allocation.
struct Record {
  cudaStream_t stream;             // allocated on (and freed on, outside captures)
  unsigned long long capture = 0;  // the capture it was allocated in, 0: none
  int device = 0;
};

thread_local std::string t_error;

const char* failed(const std::exception& e) {
  t_error = e.what();
  return t_error.c_str();
}

// Memory allocated outside a capture and released during one: freed once no
// capture is active on the releasing thread's stream.
// Every allocation and release looks: the flag keeps the lock off that path.
std::mutex g_deferred_mu;
std::vector<std::pair<void*, Record>> g_deferred;
std::atomic<bool> g_any_deferred{false};

void free_deferred() {
  if (!g_any_deferred.load(std::memory_order_acquire)) return;
  std::vector<std::pair<void*, Record>> todo;
  {
    std::lock_guard<std::mutex> lock(g_deferred_mu);
    todo.swap(g_deferred);
    g_any_deferred.store(false, std::memory_order_release);
  }
  for (auto& [p, r] : todo) {
    DeviceScope scope(r.device);
    if (cudaFreeAsync(p, r.stream) != cudaSuccess) (void)cudaGetLastError();
  }
}

const char* allocate(int32_t device_index, size_t nbytes, void** data, void** record) {
  try {
    const int dev = resolve_device(device_index);
    DeviceScope scope(dev);
    const cudaStream_t stream = current_stream(dev);
    const unsigned long long capture = capture_id(stream);
    if (capture == 0) free_deferred();
    *data = nullptr;
    if (nbytes > 0) {
      check(cudaMallocFromPoolAsync(data, nbytes, allocation_pool(dev), stream), "cudaMallocFromPoolAsync");
    }
    *record = new Record{stream, capture, dev};
    return nullptr;
  } catch (const std::exception& e) {
    return failed(e);
  }
}

void release(int32_t, void* data, void* record) {
  auto* r = static_cast<Record*>(record);
  try {
    if (data != nullptr && r != nullptr) {
      DeviceScope scope(r->device);
      const cudaStream_t now = current_stream(r->device);
      const unsigned long long capture = capture_id(now);
      if (capture != 0 && capture == r->capture) {
        check(cudaFreeAsync(data, now), "cudaFreeAsync");  // a free node of this capture
      } else if (r->capture != 0) {
        // The graph's memory, released outside its capture: the graph
        // reclaims it at its next launch (AutoFreeOnLaunch); freeing it here
        // would free what the next replay allocates at the same address.
      } else if (capture != 0) {
        std::lock_guard<std::mutex> lock(g_deferred_mu);
        g_deferred.emplace_back(data, *r);
        g_any_deferred.store(true, std::memory_order_release);
      } else {
        check(cudaFreeAsync(data, r->stream), "cudaFreeAsync");
        free_deferred();
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotrun-shim-cuda: releasing %p: %s\n", data, e.what());
  }
  delete r;
}

const char* copy_bytes(int32_t device_index, void* dst, int32_t dst_type, const void* src, int32_t src_type,
                       size_t nbytes) {
  try {
    const int dev = resolve_device(device_index);
    DeviceScope scope(dev);
    const cudaStream_t stream = current_stream(dev);
    check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
    // Host memory is read or written by the time the call returns.
    if (dst_type == 0 || src_type == 0) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return nullptr;
  } catch (const std::exception& e) {
    return failed(e);
  }
}

const char* copy_strided(int32_t device_index, void* dst, const void* src, size_t elem_size, int64_t ndim,
                         const int64_t* sizes, const int64_t* dst_strides, const int64_t* src_strides) {
  try {
    const int dev = resolve_device(device_index);
    DeviceScope scope(dev);
    check(launch_strided_copy(dst, src, elem_size, static_cast<int>(ndim), sizes, dst_strides, src_strides,
                              current_stream(dev)),
          "strided copy kernel launch");
    return nullptr;
  } catch (const std::exception& e) {
    return failed(e);
  }
}

const aotrun_shim_device_layer kLayer = {
    sizeof(aotrun_shim_device_layer), 1, "cuda", &allocate, &release, &copy_bytes, &copy_strided,
};

// Registered at load: a model library's libtorch_cuda.so stand-in brings
// this library in before the model's first call.
__attribute__((constructor)) void register_layer() {
  if (aotrun_shim_register_device_layer(&kLayer) != AOTI_TORCH_SUCCESS) {
    std::fprintf(stderr, "aotrun-shim-cuda: %s\n", aotrun_shim_last_error());
  }
}

}  // namespace
}  // namespace aotrun::shim::cuda

using namespace aotrun::shim::cuda;

extern "C" {

AOTITorchError aotrun_shim_cuda_pool_bytes(int32_t device_index, uint64_t* reserved, uint64_t* used) {
  return guarded(__func__, [&] {
    if (reserved == nullptr || used == nullptr) throw CudaError("reserved or used is null");
    *reserved = *used = 0;
    cudaMemPool_t pool = device_pool(resolve_device(device_index), false);
    if (pool == nullptr) return;
    check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, reserved), "cudaMemPoolGetAttribute");
    check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, used), "cudaMemPoolGetAttribute");
  });
}

AOTITorchError aotrun_shim_cuda_trim_pool(int32_t device_index) {
  return guarded(__func__, [&] {
    cudaMemPool_t pool = device_pool(resolve_device(device_index), false);
    if (pool != nullptr) check(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
  });
}

AOTITorchError aotrun_shim_cuda_pool_create(int32_t device_index, aotrun_shim_cuda_pool** ret_pool) {
  return guarded(__func__, [&] {
    if (ret_pool == nullptr) throw CudaError("ret_pool is null");
    *ret_pool = nullptr;
    const int dev = resolve_device(device_index);
    DeviceScope scope(dev);
    auto own = std::make_unique<OwnPool>();
    own->device = dev;
    own->pool = create_pool(dev);
    *ret_pool = reinterpret_cast<aotrun_shim_cuda_pool*>(own.release());
  });
}

AOTITorchError aotrun_shim_cuda_pool_destroy(aotrun_shim_cuda_pool* pool) {
  return guarded(__func__, [&] {
    std::unique_ptr<OwnPool> own(reinterpret_cast<OwnPool*>(pool));
    if (own == nullptr) return;
    // Frees of this pool's memory that were deferred past a capture run
    // first; what is still allocated returns to the device when released.
    free_deferred();
    check(cudaMemPoolDestroy(own->pool), "cudaMemPoolDestroy");
  });
}

AOTITorchError aotrun_shim_cuda_pool_use(aotrun_shim_cuda_pool* pool, aotrun_shim_cuda_pool** previous) {
  OwnPool* old = exchange_thread_pool(reinterpret_cast<OwnPool*>(pool));
  if (previous != nullptr) *previous = reinterpret_cast<aotrun_shim_cuda_pool*>(old);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_shim_cuda_read_to_host(void* stream, const void* src, void* dst, size_t bytes, int32_t* done) {
  return guarded(__func__, [&] {
    if (done == nullptr || (bytes != 0 && (src == nullptr || dst == nullptr))) {
      throw CudaError("src, dst or done is null");
    }
    *done = 0;
    const auto s = static_cast<cudaStream_t>(stream);
    if (capture_id(s) != 0) return;
    if (bytes != 0) {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    }
    *done = 1;
  });
}

AOTITorchError aotrun_shim_cuda_pool_get_bytes(const aotrun_shim_cuda_pool* pool, uint64_t* reserved, uint64_t* used) {
  return guarded(__func__, [&] {
    if (pool == nullptr || reserved == nullptr || used == nullptr) throw CudaError("pool, reserved or used is null");
    const auto* own = reinterpret_cast<const OwnPool*>(pool);
    check(cudaMemPoolGetAttribute(own->pool, cudaMemPoolAttrReservedMemCurrent, reserved), "cudaMemPoolGetAttribute");
    check(cudaMemPoolGetAttribute(own->pool, cudaMemPoolAttrUsedMemCurrent, used), "cudaMemPoolGetAttribute");
  });
}

}  // extern "C"
