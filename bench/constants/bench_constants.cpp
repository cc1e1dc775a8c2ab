// Constants (weights) of an aotrun package while serving, through the public
// API, with test package weight_id (tests/packages; w float32 [N], b [4]):
//
//   sizes   open time (hash verification off and on), first-run latency and
//           RSS after open / after the first run, for w of 1 MiB .. 1 GiB;
//   swap    latency of update (named tensors: a copy; a .safetensors file:
//           a mapping) + swap, and of free_inactive;
//   storm   throughput of 4 threads of sync runs with and without another
//           thread updating and swapping in a loop (the ratio is the figure).
//
//   bench_constants <weight_id package dir> <work dir> [max MiB (1024)] [storm seconds (3)]
//
// Writes package copies with bigger weights into <work dir> (deleted after
// each size). Prints a table, and one JSON object per line with --json.
#include <aotrun/aotrun.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "safetensors_writer.hpp"
#include "support/process_memory.hpp"

namespace ax = aotrun::cxx;
using Clock = std::chrono::steady_clock;

namespace {

using aotrun_bench::rss_kib;

constexpr DLDataType kF32{kDLFloat, 32, 1};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  return static_cast<bool>(in) && static_cast<bool>(out);
}

// sha256sum's digest of `path` ("" on failure): the manifest needs one per
// file, and this tool links nothing but libaotrun.
std::string sha256_of(const std::string& path) {
  const std::string cmd = "sha256sum '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char hex[65] = {};
  const bool ok = std::fread(hex, 1, 64, p) == 64;
  ::pclose(p);
  return ok ? std::string(hex, 64) : "";
}

// A package directory like weight_id's, with w of `floats` elements.
std::string make_package(const std::string& src, const std::string& dir, int64_t floats) {
  ::mkdir(dir.c_str(), 0755);
  if (!copy_file(src + "/libweight_id.so", dir + "/libweight_id.so")) return "";
  if (!aotrun_test::write_safetensors(dir + "/weights.safetensors",
                                      {{"w", {floats}, std::vector<float>(static_cast<size_t>(floats), 1.f)},
                                       {"b", {4}, std::vector<float>(4, 1000.f)}})) {
    return "";
  }
  const std::string lib_hash = sha256_of(dir + "/libweight_id.so");
  const std::string weights_hash = sha256_of(dir + "/weights.safetensors");
  std::ofstream m(dir + "/manifest.json");
  m << R"({"format": "aotrun-package", "format_version": 1, "name": "weight_id_big", "abi_version": "1.1",
"device": "cpu", "library": "libweight_id.so", "weights": ["weights.safetensors"], "files": {"libweight_id.so": ")"
    << lib_hash << R"(", "weights.safetensors": ")" << weights_hash << R"("}})"
    << "\n";
  return m && !lib_hash.empty() && !weights_hash.empty() ? dir : "";
}

void remove_package(const std::string& dir) {
  ::unlink((dir + "/libweight_id.so").c_str());
  ::unlink((dir + "/weights.safetensors").c_str());
  ::unlink((dir + "/manifest.json").c_str());
  ::rmdir(dir.c_str());
}

struct Io {
  std::vector<float> x = std::vector<float>(16, 0.f), y = std::vector<float>(16);
  std::vector<int64_t> shape{4, 4};
  DLTensor in = ax::tensor_view(x.data(), kF32, shape.data(), 2);
  DLTensor out = ax::tensor_view(y.data(), kF32, shape.data(), 2);
};

void sizes(const std::string& src, const std::string& work, int64_t max_mib, bool json) {
  if (!json)
    std::printf("%10s %12s %14s %12s %14s %14s\n", "weights", "open ms", "open+hash ms", "1st run ms", "RSS open MiB",
                "RSS run MiB");
  for (int64_t mib = 1; mib <= max_mib; mib *= 4) {
    const std::string dir = make_package(src, work + "/big_" + std::to_string(mib), mib * (1 << 18));
    if (dir.empty()) {
      std::fprintf(stderr, "cannot write a %lld MiB package under %s\n", static_cast<long long>(mib), work.c_str());
      std::exit(1);
    }
    // Open without verification: what a served package's open costs once
    // trusted (hashing reads every byte; measured on its own below).
    ax::PackageOptions fast;
    fast.verify_hashes(false);
    const long rss0 = rss_kib();
    auto t = Clock::now();
    double open_ms = 0, run_ms = 0;
    long rss_open = 0, rss_run = 0;
    {
      ax::Package pkg(dir, fast);
      open_ms = ms_since(t);
      rss_open = rss_kib() - rss0;
      ax::Runner r(pkg);
      Io io;
      t = Clock::now();
      r.run(io.in, io.out);
      run_ms = ms_since(t);
      rss_run = rss_kib() - rss0;
    }
    // With the hash of the weights file checked (a pinned sha256 would be the
    // same cost: every byte is read once).
    t = Clock::now();
    { ax::Package hashed(dir); }
    const double hashed_ms = ms_since(t);
    if (json) {
      std::printf(R"({"bench":"sizes","mib":%lld,"open_ms":%.3f,"open_hashed_ms":%.3f,"first_run_ms":%.3f,)"
                  R"("rss_open_kib":%ld,"rss_run_kib":%ld})"
                  "\n",
                  static_cast<long long>(mib), open_ms, hashed_ms, run_ms, rss_open, rss_run);
    } else {
      std::printf("%7lld MiB %12.2f %14.1f %12.3f %14.1f %14.1f\n", static_cast<long long>(mib), open_ms, hashed_ms,
                  run_ms, rss_open / 1024.0, rss_run / 1024.0);
    }
    remove_package(dir);
  }
}

void swaps(const std::string& src, const std::string& work, bool json) {
  ax::Package pkg(src);
  ax::Runner r(pkg);
  std::vector<float> w(4096, 2.f), b(4, 2000.f);
  std::vector<int64_t> ws{4096}, bs{4};
  const std::vector<aotrun_named_tensor> named = {{"w", ax::tensor_view(w.data(), kF32, ws.data(), 1)},
                                                  {"b", ax::tensor_view(b.data(), kF32, bs.data(), 1)}};
  const std::string file = work + "/update.safetensors";
  aotrun_test::write_safetensors(file, {{"w", {4096}, w}, {"b", {4}, b}});
  constexpr int kN = 2000;
  double update_ms = 0, file_ms = 0, swap_ms = 0, free_ms = 0;
  for (int i = 0; i < kN; ++i) {
    auto t = Clock::now();
    if (i % 2 == 0) {
      r.update_constants(named);
      update_ms += ms_since(t);
    } else {
      r.update_constants_from_file(file);
      file_ms += ms_since(t);
    }
    t = Clock::now();
    r.swap_constants();
    swap_ms += ms_since(t);
    t = Clock::now();
    r.free_inactive_constants();
    free_ms += ms_since(t);
  }
  ::unlink(file.c_str());
  const double us = 1000.0;
  if (json) {
    std::printf(R"({"bench":"swap","update_us":%.2f,"update_file_us":%.2f,"swap_us":%.3f,"free_us":%.2f})"
                "\n",
                update_ms * us / (kN / 2), file_ms * us / (kN / 2), swap_ms * us / kN, free_ms * us / kN);
  } else {
    std::printf(
        "\nupdate (2 tensors, 16 KiB, copied): %.1f us; from .safetensors: %.1f us; swap: %.2f us; "
        "free_inactive: %.1f us (mean of %d)\n",
        update_ms * us / (kN / 2), file_ms * us / (kN / 2), swap_ms * us / kN, free_ms * us / kN, kN);
  }
}

// Runs per second of 4 threads of sync runs for `seconds`, with a swapper
// thread updating and swapping when `storm`: `per_s` times a second, or as
// fast as it can (0; on a small machine it then takes a core's share from
// the runs, which is what the ratio shows).
double throughput(ax::Runner& r, double seconds, bool storm, long* swaps_done, int per_s) {
  std::atomic<bool> stop{false};
  std::atomic<long> runs{0}, swaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      Io io;
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        r.run(io.in, io.out);
        ++n;
      }
      runs += n;
    });
  }
  std::thread swapper;
  if (storm) {
    swapper = std::thread([&] {
      std::vector<float> w(4096), b(4);
      std::vector<int64_t> ws{4096}, bs{4};
      auto next = Clock::now();
      for (long s = 1; !stop.load(); ++s) {
        if (per_s > 0) {
          next += std::chrono::microseconds(1000000 / per_s);
          std::this_thread::sleep_until(next);
        }
        std::fill(w.begin(), w.end(), static_cast<float>(s));
        std::fill(b.begin(), b.end(), static_cast<float>(1000 * s));
        r.update_constants({{"w", ax::tensor_view(w.data(), kF32, ws.data(), 1)},
                            {"b", ax::tensor_view(b.data(), kF32, bs.data(), 1)}});
        r.swap_constants();
        ++swaps;
      }
    });
  }
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  if (swapper.joinable()) swapper.join();
  *swaps_done = swaps.load();
  return runs.load() / (ms_since(t0) / 1000.0);
}

void storm(const std::string& src, double seconds, bool json) {
  ax::Package pkg(src);
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    for (int per_s : {100, 0}) {
      ax::RunnerOptions o;
      o.mode(mode).num_models(mode == AOTRUN_MODE_THREADED ? 4 : 1);
      ax::Runner r(pkg, o);
      long swaps = 0, ignored = 0;
      // Alternate quiet and storm twice; the ratio uses the sums (noise).
      double quiet = 0, stormy = 0;
      for (int round = 0; round < 2; ++round) {
        quiet += throughput(r, seconds / 2, false, &ignored, per_s);
        long s = 0;
        stormy += throughput(r, seconds / 2, true, &s, per_s);
        swaps += s;
      }
      const std::string rate = per_s > 0 ? std::to_string(per_s) + "/s" : "max";
      if (json) {
        std::printf(R"({"bench":"storm","mode":"%s","rate":"%s","runs_per_s_quiet":%.0f,"runs_per_s_storm":%.0f,)"
                    R"("ratio":%.3f,"swaps_per_s":%.0f})"
                    "\n",
                    aotrun_mode_name(mode), rate.c_str(), quiet / 2, stormy / 2, stormy / quiet, swaps / seconds);
      } else {
        std::printf("storm %-15s %-6s quiet %9.0f runs/s, during swaps %9.0f runs/s: ratio %.3f (%.0f swaps/s)\n",
                    aotrun_mode_name(mode), rate.c_str(), quiet / 2, stormy / 2, stormy / quiet, swaps / seconds);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--json") {
      json = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: %s [--json] <weight_id package dir> <work dir> [max MiB (1024)] [storm s (3)]\n",
                 argv[0]);
    return 2;
  }
  const int64_t max_mib = args.size() > 2 ? std::atoll(args[2].c_str()) : 1024;
  const double seconds = args.size() > 3 ? std::atof(args[3].c_str()) : 3.0;
  try {
    sizes(args[0], args[1], max_mib, json);
    swaps(args[0], args[1], json);
    storm(args[0], seconds, json);
  } catch (const ax::Error& e) {
    std::fprintf(stderr, "bench_constants: %s\n", e.what());
    return 1;
  }
  return 0;
}
