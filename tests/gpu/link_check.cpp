// A shared library linking aotrun_cuda the way libaotrun does. The build
// checks with readelf that it needs neither libcuda.so nor libcudart.so
// (check_no_driver_link.cmake); cuda_backend_tests dlopens it and asks it
// whether device 0 is usable, on machines with and without a GPU.
#include <cstddef>
#include <cstring>
#include <string>

#include "device/cuda/cuda_context.hpp"

extern "C" __attribute__((visibility("default"))) int aotrun_cuda_link_check_usable(int device, char* why,
                                                                                    size_t capacity) {
  std::string reason;
  const bool ok = aotrun::cuda::usable(device, &reason);
  if (why != nullptr && capacity > 0) {
    const size_t n = reason.size() < capacity - 1 ? reason.size() : capacity - 1;
    std::memcpy(why, reason.data(), n);
    why[n] = '\0';
  }
  return ok ? 1 : 0;
}
