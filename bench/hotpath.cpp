// bench_hotpath: one synchronous call path in a tight loop, for instruction
// counts under callgrind (bench/callgrind.sh) and for paired timings of the
// .pt2 path against AOTInductor called from C (--paired). A plain program,
// not Google Benchmark: under callgrind only the measured loop is counted.
//
//   bench_hotpath CASE [--calls N] [--warmup W] [--pt2 FILE] [--libtorch DIR]
//   bench_hotpath --paired [--rounds R] [--pt2 FILE] [--libtorch DIR]
//
// Cases (each one call per iteration, on the same tensors every time):
//   noop_direct           (a) the noop package's run_single_threaded, called
//                             directly on the inline host (bench/support)
//   noop_single_threaded  (b) aotrun_runner_run, single_threaded, noop
//   pt2_run               (c) AOTInductorModelContainerRunSingleThreaded
//                             alone: input handles made and output handles
//                             deleted outside the counted region
//   pt2_c                 (c') what a C caller of AOTInductor does per call:
//                             one aoti_torch_create_tensor_from_blob per
//                             input, the run, one delete per output
//   pt2_c_copy            (c'') pt2_c plus one memcpy of each output into a
//                             caller buffer (what aotrun's API promises)
//   pt2_single_threaded   (d) aotrun_runner_run, single_threaded, the .pt2
//
// Under callgrind (--instr-atstart=no --collect-atstart=no) the program
// switches instrumentation on before the warm-up and collection on around
// the measured region only; it prints "calls N" so the script can divide.
// Outside valgrind the client requests are no-ops and the loop is timed
// (wall clock, whole loop), which is only a rough figure: --paired is the
// timing to read.
//
// --paired: per round, blocks of (d), (c) and (c') interleaved, each timed
// with CLOCK_THREAD_CPUTIME_ID (one read per block); prints per-call medians
// over rounds and the median of the per-round differences and ratios.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <time.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include <aotrun/aotrun.h>

#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/archive/private_dir.hpp"
#include "package/pt2/provider/torch_runtime.hpp"
#include "package/pt2/archive/zip_archive.hpp"
#include "support/direct_package.hpp"

namespace {

using aotrun::pt2::AtenTensorHandle;

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_hotpath: %s\n", msg.c_str());
  std::exit(1);
}

void check(aotrun_status* st, const std::string& what) {
  if (st == nullptr) return;
  const std::string msg = what + ": " + aotrun_code_name(aotrun_status_code(st)) + ": " + aotrun_status_message(st);
  aotrun_status_free(st);
  die(msg);
}

std::string packages_dir() {
  const char* env = std::getenv("AOTRUN_BENCH_PACKAGES");
  return env != nullptr && *env != '\0' ? env : AOTRUN_BENCH_PACKAGES_DIR;
}

// A compact CPU tensor with its own storage.
struct Buffer {
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  DLTensor dl{};
  void bind(DLDataType dtype) {
    dl = DLTensor{};
    dl.data = bytes.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
  }
};

// A float32 or int64 .npy array, C order, little endian.
std::unique_ptr<Buffer> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die(path + ": cannot open");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0) die(path + ": not .npy");
  const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
  const std::string header = all.substr(10, hlen);
  DLDataType dt{};
  if (header.find("'<f4'") != std::string::npos) {
    dt = {kDLFloat, 32, 1};
  } else if (header.find("'<i8'") != std::string::npos) {
    dt = {kDLInt, 64, 1};
  } else {
    die(path + ": neither float32 nor int64");
  }
  auto b = std::make_unique<Buffer>();
  const size_t lp = header.find('(', header.find("'shape'"));
  const size_t rp = header.find(')', lp);
  std::stringstream dims(header.substr(lp + 1, rp - lp - 1));
  std::string d;
  while (std::getline(dims, d, ',')) {
    if (d.find_first_of("0123456789") != std::string::npos) b->shape.push_back(std::stoll(d));
  }
  b->bytes.assign(all.begin() + 10 + static_cast<long>(hlen), all.end());
  b->bind(dt);
  return b;
}

size_t bytes_of(const DLTensor& t) {
  size_t n = (t.dtype.bits * t.dtype.lanes + 7u) / 8u;
  for (int d = 0; d < t.ndim; ++d) n *= static_cast<size_t>(t.shape[d]);
  return n;
}

// --- aotrun through its C API --------------------------------------------------

struct AotrunPath {
  aotrun_package* package = nullptr;
  aotrun_runner* runner = nullptr;
  std::vector<DLTensor> in, out;
  std::vector<std::unique_ptr<Buffer>> out_storage;

  AotrunPath(const std::string& path, const std::string& libtorch, aotrun_mode mode, std::vector<DLTensor> inputs) {
    aotrun_package_options* o = nullptr;
    check(aotrun_package_options_create(&o), "package options");
    if (!libtorch.empty()) check(aotrun_package_options_set_libtorch(o, libtorch.c_str()), "set_libtorch");
    check(aotrun_package_open(path.c_str(), o, &package), "aotrun_package_open(" + path + ")");
    aotrun_package_options_free(o);
    aotrun_runner_options* ro = nullptr;
    check(aotrun_runner_options_create(&ro), "runner options");
    check(aotrun_runner_options_set_mode(ro, mode), "set_mode");
    check(aotrun_runner_create(package, ro, &runner), "aotrun_runner_create");
    aotrun_runner_options_free(ro);
    in = std::move(inputs);
    // Outputs: the package's specs with the shapes the first run reports.
    aotrun_package_info info{};
    info.struct_size = sizeof(info);
    check(aotrun_package_get_info(package, &info), "get_info");
    for (size_t i = 0; i < info.num_outputs; ++i) {
      aotrun_tensor_info ti{};
      ti.struct_size = sizeof(ti);
      check(aotrun_package_get_output(package, i, &ti), "get_output");
      auto b = std::make_unique<Buffer>();
      b->shape.assign(ti.shape, ti.shape + ti.ndim);
      out_storage.push_back(std::move(b));
      out_storage.back()->dl.dtype = ti.dtype;
    }
  }
  // Output shapes for these inputs (dynamic dims resolved), buffers sized.
  void size_outputs() {
    std::vector<int64_t> shapes(256);
    check(aotrun_runner_get_output_shapes(runner, in.data(), in.size(), shapes.data(), shapes.size()),
          "get_output_shapes");
    size_t at = 0;
    out.clear();
    for (auto& b : out_storage) {
      for (auto& d : b->shape) d = shapes[at++];
      const DLDataType dt = b->dl.dtype;
      b->bind(dt);
      b->bytes.assign(bytes_of(b->dl), 0);
      b->bind(dt);
      out.push_back(b->dl);
    }
  }
  ~AotrunPath() {
    aotrun_runner_destroy(runner);
    aotrun_package_close(package);
  }
  bool call() {
    aotrun_status* st = aotrun_runner_run(runner, in.data(), in.size(), out.data(), out.size());
    if (st == nullptr) return true;
    check(st, "aotrun_runner_run");
    return false;
  }
};

// --- AOTInductor called from C -------------------------------------------------

// The .pt2's model library, extracted and opened the way aotrun's bridge does
// (same archive reader, same libtorch loading), then called through its C
// entry points only, as a C program would.
struct AotiPath {
  const aotrun::pt2::TorchShim* shim = nullptr;
  std::unique_ptr<aotrun::pt2::PrivateDir> dir;
  std::unique_ptr<aotrun::pt2::AotiLibrary> lib;
  aotrun::pt2::AotiContainerHandle h = nullptr;
  struct In {
    DLTensor t;
    int32_t dtype;
    std::vector<int64_t> strides;
  };
  std::vector<In> in;
  std::vector<AtenTensorHandle> in_h, out_h;
  std::vector<std::vector<char>> copies;  // pt2_c_copy's caller buffers

  AotiPath(const std::string& path, const std::string& libtorch, const std::vector<DLTensor>& inputs) {
    shim = &aotrun::pt2::torch_shim(libtorch);
    const auto zip = aotrun::pt2::ZipArchive::open(path);
    const auto model = aotrun::pt2::find_model(*zip, aotrun::pt2::kDefaultModel);
    dir = std::make_unique<aotrun::pt2::PrivateDir>();
    lib = std::make_unique<aotrun::pt2::AotiLibrary>(aotrun::pt2::extract_model(*zip, model, *dir));
    const auto& f = lib->fn();
    if (f.run_single_threaded == nullptr) die(path + ": the model has no RunSingleThreaded");
    const int32_t rc = f.create_with_device != nullptr ? f.create_with_device(&h, 1, "cpu", dir->path().c_str())
                                                       : f.create(&h, 1, true, dir->path().c_str());
    if (rc != 0) die(path + ": container create failed");
    size_t n_out = 0;
    f.num_outputs(h, &n_out);
    for (const DLTensor& t : inputs) {
      In i{t, shim->torch_dtype(t.dtype), std::vector<int64_t>(static_cast<size_t>(t.ndim))};
      int64_t step = 1;
      for (int d = t.ndim - 1; d >= 0; --d) {
        i.strides[static_cast<size_t>(d)] = step;
        step *= t.shape[d];
      }
      in.push_back(std::move(i));
    }
    in_h.assign(in.size(), nullptr);
    out_h.assign(n_out, nullptr);
    copies.resize(n_out);
  }
  ~AotiPath() {
    if (h != nullptr) lib->fn().destroy(h);
  }
  void wrap(AtenTensorHandle* dst) {
    for (size_t i = 0; i < in.size(); ++i) {
      const In& x = in[i];
      if (shim->create_tensor_from_blob(x.t.data, x.t.ndim, x.t.shape, x.strides.data(), 0, x.dtype,
                                        shim->device_type_cpu, 0, &dst[i]) != 0) {
        die("aoti_torch_create_tensor_from_blob failed");
      }
    }
  }
  void run(AtenTensorHandle* ins, AtenTensorHandle* outs) {
    if (lib->fn().run_single_threaded(h, ins, in.size(), outs, out_h.size(), nullptr, nullptr) != 0) {
      die(lib->failure(aotrun::pt2::AotiLibrary::kRunSingleThreaded));
    }
  }
  void release(AtenTensorHandle* outs) {
    for (size_t i = 0; i < out_h.size(); ++i) shim->delete_tensor_object(outs[i]);
  }
  void copy_out() {
    for (size_t i = 0; i < out_h.size(); ++i) {
      void* src = nullptr;
      int64_t dim = 0;
      int64_t* sizes = nullptr;
      int32_t dtype = 0;
      shim->get_data_ptr(out_h[i], &src);
      shim->get_dim(out_h[i], &dim);
      shim->get_sizes(out_h[i], &sizes);
      shim->get_dtype(out_h[i], &dtype);
      DLDataType dl{};
      shim->dlpack_dtype(dtype, &dl);
      size_t n = (dl.bits * dl.lanes + 7u) / 8u;
      for (int64_t d = 0; d < dim; ++d) n *= static_cast<size_t>(sizes[d]);
      if (copies[i].size() < n) copies[i].resize(n);
      std::memcpy(copies[i].data(), src, n);
    }
  }
  // One call as a C caller makes it.
  void call_c(bool copy) {
    wrap(in_h.data());
    run(in_h.data(), out_h.data());
    if (copy) copy_out();
    release(out_h.data());
  }
};

// --- options -------------------------------------------------------------------

struct Options {
  std::string what;
  long calls = 10000, warmup = 200, rounds = 41;
  std::string pt2, libtorch;
};

Options parse(int argc, char** argv) {
  Options o;
  const char* lt = std::getenv("AOTRUN_LIBTORCH");
  o.libtorch = lt != nullptr ? lt : "";
  o.pt2 = std::string(AOTRUN_HOTPATH_FIXTURES) + "/mlp.pt2";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--calls")
      o.calls = std::stol(value());
    else if (a == "--warmup")
      o.warmup = std::stol(value());
    else if (a == "--rounds")
      o.rounds = std::stol(value());
    else if (a == "--pt2")
      o.pt2 = value();
    else if (a == "--libtorch")
      o.libtorch = value();
    else if (a == "--paired")
      o.what = "paired";
    else if (!a.empty() && a[0] != '-' && o.what.empty())
      o.what = a;
    else
      die("unknown argument " + a + " (see the comment at the top of bench/hotpath.cpp)");
  }
  if (o.what.empty()) die("name a case or --paired");
  return o;
}

std::vector<std::unique_ptr<Buffer>> pt2_inputs(const std::string& pt2) {
  std::vector<std::unique_ptr<Buffer>> v;
  const std::string stem = pt2.substr(0, pt2.size() - 4);
  for (int i = 0;; ++i) {
    const std::string f = stem + ".in" + std::to_string(i) + ".npy";
    if (!std::ifstream(f)) break;
    v.push_back(read_npy(f));
  }
  if (v.empty()) die(pt2 + ": no " + stem + ".in0.npy next to it");
  return v;
}

std::vector<DLTensor> dl_of(const std::vector<std::unique_ptr<Buffer>>& v) {
  std::vector<DLTensor> out;
  for (const auto& b : v) out.push_back(b->dl);
  return out;
}

// Warm-up (instrumented, not counted), then `calls` iterations counted.
template <class F>
void measure(const Options& o, F&& one) {
  CALLGRIND_START_INSTRUMENTATION;
  for (long i = 0; i < o.warmup; ++i) one();
  const auto t0 = std::chrono::steady_clock::now();
  CALLGRIND_TOGGLE_COLLECT;
  for (long i = 0; i < o.calls; ++i) one();
  CALLGRIND_TOGGLE_COLLECT;
  const auto t1 = std::chrono::steady_clock::now();
  CALLGRIND_STOP_INSTRUMENTATION;
  std::printf("case %s\ncalls %ld\nwall_ns_per_call %.1f\n", o.what.c_str(), o.calls,
              std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(o.calls));
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// (d) against (c) and (c'), interleaved in blocks of ~200 us each.
int paired(const Options& o) {
  const auto inputs = pt2_inputs(o.pt2);
  AotrunPath a(o.pt2, o.libtorch, AOTRUN_MODE_SINGLE_THREADED, dl_of(inputs));
  a.size_outputs();
  AotiPath c(o.pt2, o.libtorch, dl_of(inputs));
  for (int i = 0; i < 50; ++i) {
    a.call();
    c.call_c(true);
  }
  // Block size from a short calibration.
  const double t0 = thread_cpu_ns();
  for (int i = 0; i < 20; ++i) c.call_c(false);
  const double est = std::max(100.0, (thread_cpu_ns() - t0) / 20);
  const size_t block = std::clamp<size_t>(static_cast<size_t>(200e3 / est), 8, 4096);
  const size_t n_in = c.in.size(), n_out = c.out_h.size();
  std::vector<AtenTensorHandle> ins(block * n_in), outs(block * n_out);

  std::vector<double> d_ns, c_ns, cc_ns, d_minus_c, d_minus_cc, ratio_c, ratio_cc;
  for (long r = 0; r < o.rounds; ++r) {
    double s = thread_cpu_ns();
    for (size_t i = 0; i < block; ++i) a.call();
    const double d = (thread_cpu_ns() - s) / static_cast<double>(block);
    // (c): handles made before and deleted after the timed stretch.
    for (size_t i = 0; i < block; ++i) c.wrap(&ins[i * n_in]);
    s = thread_cpu_ns();
    for (size_t i = 0; i < block; ++i) c.run(&ins[i * n_in], &outs[i * n_out]);
    const double cr = (thread_cpu_ns() - s) / static_cast<double>(block);
    for (size_t i = 0; i < block; ++i) c.release(&outs[i * n_out]);
    s = thread_cpu_ns();
    for (size_t i = 0; i < block; ++i) c.call_c(false);
    const double cc = (thread_cpu_ns() - s) / static_cast<double>(block);
    d_ns.push_back(d);
    c_ns.push_back(cr);
    cc_ns.push_back(cc);
    d_minus_c.push_back(d - cr);
    d_minus_cc.push_back(d - cc);
    ratio_c.push_back(d / cr);
    ratio_cc.push_back(d / cc);
  }
  auto range = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f-%.3f", v[v.size() / 10], v[v.size() * 9 / 10]);
    return std::string(buf);
  };
  std::printf("pt2 %s: %ld rounds x %zu calls, thread CPU time, per-call medians\n", o.pt2.c_str(), o.rounds, block);
  std::printf("  (d) aotrun single_threaded      %8.0f ns\n", median(d_ns));
  std::printf("  (c) RunSingleThreaded alone     %8.0f ns   (d)-(c)  %+6.0f ns  ratio %.3f (p10-p90 %s)\n",
              median(c_ns), median(d_minus_c), median(ratio_c), range(ratio_c).c_str());
  std::printf("  (c') C caller, wrap+run+delete  %8.0f ns   (d)-(c') %+6.0f ns  ratio %.3f (p10-p90 %s)\n",
              median(cc_ns), median(d_minus_cc), median(ratio_cc), range(ratio_cc).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.what == "paired") return paired(o);
  if (o.what == "noop_direct" || o.what == "noop_single_threaded") {
    const std::string path = packages_dir() + "/noop";
    int64_t shape[2] = {1, 4};
    float x[4] = {0.5f, 0.5f, 0.5f, 0.5f}, y[4] = {};
    DLTensor tx{}, ty{};
    tx.data = x;
    ty.data = y;
    tx.device = ty.device = DLDevice{kDLCPU, 0};
    tx.ndim = ty.ndim = 2;
    tx.dtype = ty.dtype = DLDataType{kDLFloat, 32, 1};
    tx.shape = ty.shape = shape;
    if (o.what == "noop_direct") {
      aotrun_bench::DirectPackage direct(path, 1);
      measure(o, [&] {
        if (direct.run_single_threaded(&tx, 1, &ty, 1) != AOTRUN_PKG_OK) die("direct: " + direct.last_error());
      });
    } else {
      AotrunPath a(path, "", AOTRUN_MODE_SINGLE_THREADED, {tx});
      a.out = {ty};
      measure(o, [&] { a.call(); });
    }
    return 0;
  }
  const auto inputs = pt2_inputs(o.pt2);
  if (o.what == "pt2_single_threaded") {
    AotrunPath a(o.pt2, o.libtorch, AOTRUN_MODE_SINGLE_THREADED, dl_of(inputs));
    a.size_outputs();
    measure(o, [&] { a.call(); });
    return 0;
  }
  AotiPath c(o.pt2, o.libtorch, dl_of(inputs));
  if (o.what == "pt2_run") {
    // Collection is toggled around the model call only.
    CALLGRIND_START_INSTRUMENTATION;
    for (long i = 0; i < o.warmup; ++i) c.call_c(false);
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < o.calls; ++i) {
      c.wrap(c.in_h.data());
      CALLGRIND_TOGGLE_COLLECT;
      c.run(c.in_h.data(), c.out_h.data());
      CALLGRIND_TOGGLE_COLLECT;
      c.release(c.out_h.data());
    }
    const auto t1 = std::chrono::steady_clock::now();
    CALLGRIND_STOP_INSTRUMENTATION;
    std::printf("case %s\ncalls %ld\nwall_ns_per_call %.1f (includes wrap and release)\n", o.what.c_str(), o.calls,
                std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(o.calls));
  } else if (o.what == "pt2_c" || o.what == "pt2_c_copy") {
    const bool copy = o.what == "pt2_c_copy";
    measure(o, [&] { c.call_c(copy); });
  } else {
    die("unknown case " + o.what);
  }
  return 0;
}
