// Per-call latency of the CUDA MLP at batch 1 through libaotrun: eager
// (single_threaded, and threaded for reference) against graph replay.
// Target: graph replay >= 1.3x faster than eager single_threaded.
//
//   bench_cuda_mlp [--package DIR] [--iters N] [--rounds R] [--require-speedup]
//
// Eager and graph blocks alternate within each round and the medians over
// rounds are compared (ratios from one run; the machine may be noisy). Every
// call is a synchronous aotrun_runner_run: enqueue + wait for the result.
// Without a CUDA device it prints why and exits 0 having measured nothing.
// Exit status: 0 measured (or no device), 1 error, 3 below target with
// --require-speedup.
#include <cuda_runtime_api.h>

#include <aotrun/aotrun.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr double kTarget = 1.3;

bool ok(aotrun_status* s, const char* what) {
  if (s == nullptr) return true;
  std::fprintf(stderr, "bench_cuda_mlp: %s: %s: %s\n", what, aotrun_code_name(aotrun_status_code(s)),
               aotrun_status_message(s));
  aotrun_status_free(s);
  return false;
}

struct Buffers {
  int64_t xs[2] = {1, 256};
  int64_t ys[2] = {1, 64};
  void* x = nullptr;
  void* y = nullptr;
  DLTensor tx{}, ty{};
  bool init() {
    if (cudaMalloc(&x, 256 * sizeof(float)) != cudaSuccess || cudaMalloc(&y, 64 * sizeof(float)) != cudaSuccess) {
      return false;
    }
    std::vector<float> host(256);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
    if (cudaMemcpy(x, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return false;
    if (cudaDeviceSynchronize() != cudaSuccess) return false;
    tx = DLTensor{x, {kDLCUDA, 0}, 2, {kDLFloat, 32, 1}, xs, nullptr, 0};
    ty = DLTensor{y, {kDLCUDA, 0}, 2, {kDLFloat, 32, 1}, ys, nullptr, 0};
    return true;
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
  }
};

struct Bench {
  const char* label;
  aotrun_mode mode;
  aotrun_runner* runner = nullptr;
  std::vector<double> per_call_us;  // one entry per round
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string package = std::string(AOTRUN_BENCH_PACKAGES_DIR) + "/cuda_mlp";
  int iters = 2000;
  int rounds = 9;
  bool require = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--package" && i + 1 < argc) {
      package = argv[++i];
    } else if (a == "--iters" && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--require-speedup") {
      require = true;
    } else {
      std::fprintf(stderr, "usage: %s [--package DIR] [--iters N] [--rounds R] [--require-speedup]\n", argv[0]);
      return 1;
    }
  }

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("bench_cuda_mlp: no CUDA device: %s; nothing measured\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
    return 0;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) std::printf("device 0: %s\n", prop.name);

  aotrun_package* pkg = nullptr;
  if (!ok(aotrun_package_open(package.c_str(), nullptr, &pkg), "package_open")) return 1;
  Buffers buf;
  if (!buf.init()) {
    std::fprintf(stderr, "bench_cuda_mlp: device buffers could not be set up\n");
    return 1;
  }
  Bench benches[] = {{"eager single_threaded", AOTRUN_MODE_SINGLE_THREADED, nullptr, {}},
                     {"eager threaded", AOTRUN_MODE_THREADED, nullptr, {}},
                     {"graph replay", AOTRUN_MODE_GRAPH, nullptr, {}}};
  int status = 0;
  for (Bench& b : benches) {
    aotrun_runner_options* o = nullptr;
    aotrun_status_free(aotrun_runner_options_create(&o));
    aotrun_status_free(aotrun_runner_options_set_mode(o, b.mode));
    const bool made = ok(aotrun_runner_create(pkg, o, &b.runner), "runner_create");
    aotrun_runner_options_free(o);
    if (!made) status = 1;
  }
  // Warm-up (graph mode captures here).
  for (Bench& b : benches) {
    for (int i = 0; i < 50 && status == 0; ++i) {
      if (!ok(aotrun_runner_run(b.runner, &buf.tx, 1, &buf.ty, 1), b.label)) status = 1;
    }
  }
  for (int r = 0; r < rounds && status == 0; ++r) {
    for (Bench& b : benches) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) {
        if (!ok(aotrun_runner_run(b.runner, &buf.tx, 1, &buf.ty, 1), b.label)) {
          status = 1;
          break;
        }
      }
      const auto t1 = std::chrono::steady_clock::now();
      b.per_call_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
    }
  }
  if (status == 0) {
    aotrun_runner_stats st{};
    st.struct_size = sizeof(st);
    aotrun_status_free(aotrun_runner_get_stats(benches[2].runner, &st));
    if (st.effective_mode != AOTRUN_MODE_GRAPH || st.graph_replays == 0) {
      std::fprintf(stderr, "bench_cuda_mlp: the graph runner did not replay (mode %s, %llu replays): %s\n",
                   aotrun_mode_name(st.effective_mode), static_cast<unsigned long long>(st.graph_replays),
                   st.fallback_reason ? st.fallback_reason : "");
      status = 1;
    }
  }
  if (status == 0) {
    std::printf("cuda_mlp, batch 1, %d rounds x %d calls, synchronous aotrun_runner_run\n", rounds, iters);
    std::printf("%-24s %14s %10s %10s\n", "mode", "median us/call", "min", "max");
    for (const Bench& b : benches) {
      std::printf("%-24s %14.2f %10.2f %10.2f\n", b.label, median(b.per_call_us),
                  *std::min_element(b.per_call_us.begin(), b.per_call_us.end()),
                  *std::max_element(b.per_call_us.begin(), b.per_call_us.end()));
    }
    const double speedup = median(benches[0].per_call_us) / median(benches[2].per_call_us);
    const bool met = speedup >= kTarget;
    std::printf("graph replay speedup over eager single_threaded: %.2fx (target >= %.2fx): %s\n", speedup, kTarget,
                met ? "met" : "BELOW TARGET");
    if (require && !met) status = 3;
  }
  for (Bench& b : benches) aotrun_runner_destroy(b.runner);
  aotrun_package_close(pkg);
  return status;
}
