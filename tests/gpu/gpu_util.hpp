// Helpers of the GPU suites for libaotrun's public C API: status checks and
// RAII owners of packages, options and runners.
#pragma once

#include <aotrun/aotrun.h>
#include <gtest/gtest.h>

#include <string>

#include "gpu_device.hpp"

namespace aotrun_gpu {

// "CODE: message" (or "OK"); frees the status.
inline std::string describe(aotrun_status* s) {
  std::string d = s ? std::string(aotrun_code_name(aotrun_status_code(s))) + ": " + aotrun_status_message(s) : "OK";
  aotrun_status_free(s);
  return d;
}

#define AOTRUN_GPU_ASSERT_OK(expr)                                 \
  do {                                                             \
    aotrun_status* _s = (expr);                                    \
    ASSERT_EQ(_s, nullptr) << ::aotrun_gpu::describe(_s);          \
  } while (0)

// RAII owners of the C handles.
struct Package {
  aotrun_package* p = nullptr;
  explicit Package(const std::string& path) {
    aotrun_status* s = aotrun_package_open(path.c_str(), nullptr, &p);
    if (s) ADD_FAILURE() << "open " << path << ": " << describe(s);
  }
  ~Package() { aotrun_package_close(p); }
};

struct Options {
  aotrun_runner_options* o = nullptr;
  Options() { aotrun_status_free(aotrun_runner_options_create(&o)); }
  ~Options() { aotrun_runner_options_free(o); }
  Options& mode(aotrun_mode m) { aotrun_status_free(aotrun_runner_options_set_mode(o, m)); return *this; }
  Options& models(int n) { aotrun_status_free(aotrun_runner_options_set_num_models(o, n)); return *this; }
  Options& inflight(int n) { aotrun_status_free(aotrun_runner_options_set_max_inflight(o, n)); return *this; }
  Options& device(int id) { aotrun_status_free(aotrun_runner_options_set_device(o, DLDevice{kDLCUDA, id})); return *this; }
};

struct Runner {
  aotrun_runner* r = nullptr;
  Runner(aotrun_package* p, const Options& o) {
    aotrun_status* s = aotrun_runner_create(p, o.o, &r);
    if (s) ADD_FAILURE() << "runner_create: " << describe(s);
  }
  ~Runner() { aotrun_runner_destroy(r); }
  aotrun_runner_stats stats() const {
    aotrun_runner_stats st{};
    st.struct_size = sizeof(st);
    aotrun_status_free(aotrun_runner_get_stats(r, &st));
    return st;
  }
};

}  // namespace aotrun_gpu
