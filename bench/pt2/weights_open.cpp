// Open time and memory of a .pt2 whose weights are an external binary blob
// (package_constants_on_disk_format="binary_blob"): the blob is mapped where
// it lies in the archive and the model's constants point into that mapping,
// so opening should cost the same for 1 KB or 1 GiB of weights, and resident
// memory should grow only with the pages a run touches.
//
//   bench_pt2_weights_open <archive.pt2> <int64 index count> [runs]
//
// The model takes one int64 tensor of indices [count] (an embedding lookup:
// bench/pt2/weights_mmap.py exports it). Prints one JSON line: open_ms (open
// plus the metadata container package open makes), create_ms (a container
// that runs), run_ms (first run), and VmRSS in KiB before, after open,
// after create and after the run.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device/cpu/host_services.hpp"
#include "package/pt2/bridge/aoti_bridge.hpp"
#include "support/process_memory.hpp"

namespace {

using aotrun_bench::rss_kib;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <archive.pt2> <index count>\n", argv[0]);
    return 2;
  }
  using namespace aotrun;
  static cpu::Stream stream(cpu::Stream::Kind::Inline);
  static cpu::HostContext ctx;
  ctx.default_stream = &stream;
  ctx.package_name = "bench";
  static aotrun_pkg_host host = cpu::make_host_services(&ctx);
  aotrun_pkg_create_args a{};
  a.struct_size = sizeof(a);
  a.device = DLDevice{kDLCPU, 0};
  a.host = &host;

  (void)pt2::open_pt2(argv[1], "warm", {});  // loads libtorch once, outside the timing
  const long rss0 = rss_kib();
  auto t = std::chrono::steady_clock::now();
  auto code = pt2::open_pt2(argv[1], "bench", {});
  aotrun_pkg_container* meta = nullptr;
  a.num_models = 0;
  if (code->create(&meta, &a) != AOTRUN_PKG_OK) {
    std::fprintf(stderr, "create: %s\n", code->fn().get_last_error());
    return 1;
  }
  const double open_ms = ms_since(t);
  const long rss_open = rss_kib();
  t = std::chrono::steady_clock::now();
  aotrun_pkg_container* c = nullptr;
  a.num_models = 1;
  if (code->create(&c, &a) != AOTRUN_PKG_OK) {
    std::fprintf(stderr, "create: %s\n", code->fn().get_last_error());
    return 1;
  }
  const double create_ms = ms_since(t);
  const long rss_create = rss_kib();

  const int64_t n = std::atoll(argv[2]);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = (i * 7919) % 1000;
  size_t n_out = 0;
  code->fn().num_outputs(c, &n_out);
  aotrun_pkg_tensor_spec os{};
  os.struct_size = sizeof(os);
  code->fn().output_spec(c, 0, &os);
  std::vector<int64_t> out_shape(os.shape, os.shape + os.ndim);
  out_shape[0] = n;
  size_t out_elems = 1;
  for (int64_t d : out_shape) out_elems *= static_cast<size_t>(d);
  std::vector<float> out(out_elems);
  int64_t in_shape[1] = {n};
  DLTensor in{}, o{};
  in.data = idx.data();
  in.device = o.device = DLDevice{kDLCPU, 0};
  in.ndim = 1;
  in.shape = in_shape;
  in.dtype = DLDataType{kDLInt, 64, 1};
  o.data = out.data();
  o.ndim = static_cast<int32_t>(out_shape.size());
  o.shape = out_shape.data();
  o.dtype = DLDataType{kDLFloat, 32, 1};
  aotrun_pkg_run_args r{};
  r.struct_size = sizeof(r);
  r.inputs = &in;
  r.num_inputs = 1;
  r.outputs = &o;
  r.num_outputs = 1;
  t = std::chrono::steady_clock::now();
  if (code->fn().run(c, &r) != AOTRUN_PKG_OK) {
    std::fprintf(stderr, "run: %s\n", code->fn().get_last_error());
    return 1;
  }
  const double run_ms = ms_since(t);
  const long rss_run = rss_kib();
  std::printf(
      "{\"loader\": \"aotrun\", \"open_ms\": %.2f, \"create_ms\": %.2f, \"run_ms\": %.2f, \"rss_before_kib\": %ld, "
      "\"rss_open_kib\": %ld, \"rss_create_kib\": %ld, \"rss_run_kib\": %ld, \"out0\": %.6f}\n",
      open_ms, create_ms, run_ms, rss0, rss_open, rss_create, rss_run, static_cast<double>(out[0]));
  code->fn().destroy(c);
  code->fn().destroy(meta);
  return 0;
}
