// The request fuzzer (issue #40): every zoo model (tests/pt2/zoo) in every
// mode, with requests drawn at random and at the edges: each dynamic dim
// below, at and above its compiled and declared ranges and zero; integer
// inputs with ids at -1, 0, n-1, n, 2^31, 2^40 and INT64_MIN, masks whose
// dims disagree with the ids; float inputs with NaN and Inf; strided views
// where a compact tensor is expected; wrong dtypes and ranks; each sent
// through run, run_alloc, the output-shape query or an async run, to
// packages opened plainly, with pad_batch and with pt2_above_compiled_max.
//
// Per request the call returns: either OK, or an error code other than
// INTERNAL with a message. Nothing may abort, hang or read out of bounds
// (the sanitizer stages run it too). Every OK result is then computed again
// by the single-threaded runner and must agree (same bits: one model, one
// input), and after the storm each model still gives eager PyTorch's
// outputs on a stored case. A fixed seed; AOTRUN_FUZZ_REQUESTS sets the
// count per model and mode (default 100). Counts per outcome are printed
// (docs/RELIABILITY.md records them).
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../core/test_util.hpp"
#include "../shim/npy.hpp"

using namespace aotrun_test;

namespace {

const std::string kDir = AOTRUN_PT2_ZOO;

nlohmann::json manifest() {
  std::ifstream in(kDir + "/manifest.json");
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<std::string> zoo_models() {
  std::vector<std::string> out;
  const nlohmann::json m = manifest();
  if (m.is_discarded() || !m.contains("models")) return out;
  for (const auto& [name, info] : m["models"].items()) out.push_back(name);
  return out;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint64_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool one_in(int n) { return next() % static_cast<uint64_t>(n) == 0; }

 private:
  uint64_t s_;
};

// A request's tensor: its own storage, any strides.
struct Arg {
  std::vector<int64_t> shape, strides;
  std::vector<char> bytes;
  DLDataType dtype{};
  DLTensor dl() {
    return DLTensor{bytes.empty() ? nullptr : bytes.data(),
                    {kDLCPU, 0},
                    static_cast<int>(shape.size()),
                    dtype,
                    shape.data(),
                    strides.empty() ? nullptr : strides.data(),
                    0};
  }
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// One dim's size: inside its compiled range mostly, else at and across
// every edge.
int64_t draw_size(Rng& r, const nlohmann::json& dim) {
  const int64_t dlo = dim["declared"][0], dhi = dim["declared"][1];
  const int64_t clo = dim["compiled"][0], chi = dim["compiled"][1].is_null() ? dhi : dim["compiled"][1].get<int64_t>();
  const int64_t edges[] = {0, 1, clo - 1, clo, chi, chi + 1, dlo, dhi, dhi + 1, 2 * dhi + 3};
  if (r.one_in(2)) return std::max<int64_t>(r.in(clo, chi), 0);
  return std::max<int64_t>(edges[r.in(0, 9)], 0);
}

// An int64 element: a small valid id mostly, else an edge.
int64_t draw_id(Rng& r) {
  const int64_t edges[] = {
      -1, 0, 255, 256, 999, 1000, int64_t{1} << 31, int64_t{1} << 40, std::numeric_limits<int64_t>::min()};
  if (!r.one_in(6)) return r.in(0, 200);
  return edges[r.in(0, 8)];
}

float draw_float(Rng& r) {
  if (r.one_in(50)) return std::numeric_limits<float>::quiet_NaN();
  if (r.one_in(50)) return r.one_in(2) ? INFINITY : -INFINITY;
  return static_cast<float>(r.in(-1000, 1000)) / 500.0f;
}

struct Counts {
  size_t requests = 0, ok = 0, refused = 0;
  std::map<aotrun_code, size_t> by_code;
};

class RequestFuzz : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
    const nlohmann::json m = manifest();
    ASSERT_FALSE(m.is_discarded());
    info_ = m["models"][GetParam()];
  }

  // The inputs of one request: each dim drawn; now and then one dim of one
  // input off by one (dims that must agree), a wrong dtype, a lost rank, or
  // a strided view.
  std::vector<Arg> draw_request(Rng& r) const {
    std::map<std::string, int64_t> sizes;
    for (const auto& [name, dim] : info_["dims"].items()) sizes[name] = draw_size(r, dim);
    std::vector<Arg> args;
    for (const auto& in : info_["inputs"]) {
      Arg a;
      for (const auto& d : in["shape"])
        a.shape.push_back(d.is_string() ? sizes[d.get<std::string>()] : d.get<int64_t>());
      const std::string dt = in["dtype"];
      a.dtype = dt == "int64"      ? DLDataType{kDLInt, 64, 1}
                : dt == "bfloat16" ? DLDataType{kDLBfloat, 16, 1}
                                   : DLDataType{kDLFloat, 32, 1};
      args.push_back(std::move(a));
    }
    if (r.one_in(8)) {  // one dim of one input disagrees
      Arg& a = args[static_cast<size_t>(r.in(0, static_cast<int64_t>(args.size()) - 1))];
      if (!a.shape.empty()) a.shape[static_cast<size_t>(r.in(0, static_cast<int64_t>(a.shape.size()) - 1))] += 1;
    }
    if (r.one_in(20)) args.front().dtype = DLDataType{kDLInt, 32, 1};
    if (r.one_in(25) && !args.back().shape.empty()) args.back().shape.pop_back();
    for (Arg& a : args) {
      const int64_t n = numel(a.shape);
      if (n > (int64_t{1} << 22)) a.shape[0] = 1;  // keep the storage small; still off the range
      const int64_t count = numel(a.shape);
      const size_t elem = a.dtype.bits / 8;
      // A strided view now and then: every other element of the last dim.
      const bool strided = r.one_in(12) && !a.shape.empty();
      const int64_t span = strided ? 2 * count : count;
      a.bytes.assign(static_cast<size_t>(std::max<int64_t>(span, 1)) * elem, 0);
      for (int64_t i = 0; i < span; ++i) {
        if (a.dtype.code == kDLInt && a.dtype.bits == 64) {
          const int64_t v = draw_id(r);
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 8], &v, 8);
        } else if (a.dtype.code == kDLFloat && a.dtype.bits == 32) {
          const float v = draw_float(r);
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 4], &v, 4);
        } else if (a.dtype.code == kDLBfloat) {
          const float v = draw_float(r);
          uint32_t u;
          std::memcpy(&u, &v, 4);
          const uint16_t h = static_cast<uint16_t>(u >> 16);
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 2], &h, 2);
        }
      }
      if (strided) {
        a.strides.assign(a.shape.size(), 0);
        int64_t acc = 2;
        for (size_t d = a.shape.size(); d-- > 0;) {
          a.strides[d] = acc;
          acc *= std::max<int64_t>(a.shape[d], 1);
        }
      }
    }
    return args;
  }

  // Outputs for a run: shaped by the output-shape query when it answers,
  // else by the spec with dynamic dims at 1 (a request the runner refuses).
  static std::vector<Arg> outputs_for(const Runner& r, const Package& p, std::vector<DLTensor>& in) {
    std::vector<Arg> outs;
    const std::vector<aotrun_tensor_info> specs = p.outputs();
    size_t total = 0;
    for (const auto& s : specs) total += static_cast<size_t>(std::max(s.ndim, 0));
    std::vector<int64_t> shapes(total + 1, 1);
    const Outcome q =
        outcome(aotrun_runner_get_output_shapes(r.get(), in.data(), in.size(), shapes.data(), shapes.size()));
    size_t at = 0;
    for (const auto& s : specs) {
      Arg a;
      a.dtype = s.dtype;
      for (int d = 0; d < s.ndim; ++d)
        a.shape.push_back(q.code == AOTRUN_OK ? shapes[at + d] : std::max<int64_t>(s.shape[d], 1));
      at += static_cast<size_t>(std::max(s.ndim, 0));
      a.bytes.assign(static_cast<size_t>(std::max<int64_t>(numel(a.shape), 1)) * (a.dtype.bits / 8), 0);
      outs.push_back(std::move(a));
    }
    return outs;
  }

  void record(const Outcome& o, const std::string& what, Counts* c) {
    ++c->requests;
    ++c->by_code[o.code];
    if (o.code == AOTRUN_OK) {
      ++c->ok;
      return;
    }
    ++c->refused;
    EXPECT_NE(o.code, AOTRUN_ERR_INTERNAL) << what << ": " << o.message;
    EXPECT_FALSE(o.message.empty()) << what;
  }

  nlohmann::json info_;
};

TEST_P(RequestFuzz, EveryRequestIsAnErrorOrAnAnswerInEveryMode) {
  const std::string model = GetParam();
  const std::string path = kDir + "/" + info_["archive"].get<std::string>();
  const char* env = std::getenv("AOTRUN_FUZZ_REQUESTS");
  const int n = env != nullptr ? std::atoi(env) : 100;
  Package plain(path), padded(path, PackageOptions().pt2_pad_batch(true)),
      above(path, PackageOptions().pt2_above_compiled_max(true));
  Package* packages[] = {&plain, &padded, &above};
  const aotrun_mode modes[] = {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH};
  std::vector<std::unique_ptr<Runner>> runners;  // [package][mode]
  for (Package* p : packages)
    for (aotrun_mode m : modes) runners.push_back(std::make_unique<Runner>(*p, RunnerOptions().mode(m)));
  // A good request first (every dim at its compiled minimum, small ids),
  // and its answer from a fresh runner: the reference after the fuzz.
  std::vector<Arg> base;
  {
    Rng v(7);
    for (const auto& in : info_["inputs"]) {
      Arg a;
      for (const auto& d : in["shape"]) {
        a.shape.push_back(d.is_string() ? info_["dims"][d.get<std::string>()]["compiled"][0].get<int64_t>()
                                        : d.get<int64_t>());
      }
      const std::string dt = in["dtype"];
      a.dtype = dt == "int64"      ? DLDataType{kDLInt, 64, 1}
                : dt == "bfloat16" ? DLDataType{kDLBfloat, 16, 1}
                                   : DLDataType{kDLFloat, 32, 1};
      const int64_t count = numel(a.shape);
      a.bytes.assign(static_cast<size_t>(count) * (a.dtype.bits / 8), 0);
      for (int64_t i = 0; i < count; ++i) {
        if (a.dtype.bits == 64) {
          const int64_t id = v.in(1, 200);
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 8], &id, 8);
        } else if (a.dtype.bits == 32) {
          const float x = static_cast<float>(v.in(-100, 100)) / 50.0f;
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 4], &x, 4);
        } else {
          const uint16_t h = static_cast<uint16_t>(0x3f80 + v.in(0, 64));  // bfloat16 in [1, 2)
          std::memcpy(&a.bytes[static_cast<size_t>(i) * 2], &h, 2);
        }
      }
      base.push_back(std::move(a));
    }
  }
  std::vector<DLTensor> base_in;
  for (Arg& a : base) base_in.push_back(a.dl());
  std::vector<Arg> baseline;
  {
    Runner fresh(plain, RunnerOptions().mode(AOTRUN_MODE_THREADED));
    std::vector<DLManagedTensor*> owned(plain.outputs().size(), nullptr);
    const Outcome o =
        outcome(aotrun_runner_run_alloc(fresh.get(), base_in.data(), base_in.size(), owned.data(), owned.size()));
    ASSERT_EQ(o.code, AOTRUN_OK) << model << ": the reference request: " << o.message;
    for (DLManagedTensor* t : owned) {
      Arg a;
      a.shape.assign(t->dl_tensor.shape, t->dl_tensor.shape + t->dl_tensor.ndim);
      a.dtype = t->dl_tensor.dtype;
      const size_t bytes = static_cast<size_t>(numel(a.shape)) * (a.dtype.bits / 8);
      a.bytes.assign(static_cast<const char*>(t->dl_tensor.data), static_cast<const char*>(t->dl_tensor.data) + bytes);
      baseline.push_back(std::move(a));
      t->deleter(t);
    }
  }
  Counts counts;
  Rng r(std::hash<std::string>{}(model) ^ 20261128u);
  for (int i = 0; i < n * 3; ++i) {
    const size_t pi = static_cast<size_t>(r.in(0, 2)), mi = static_cast<size_t>(r.in(0, 2));
    Runner& runner = *runners[pi * 3 + mi];
    Package& pkg = *packages[pi];
    std::vector<Arg> args = draw_request(r);
    std::vector<DLTensor> in;
    for (Arg& a : args) in.push_back(a.dl());
    const std::string what = model + " request " + std::to_string(i) + " (package " + std::to_string(pi) + ", mode " +
                             std::to_string(mi) + ")";
    const int path_kind = static_cast<int>(r.in(0, 3));
    if (path_kind == 0) {  // the shape query
      std::vector<int64_t> shapes(64, 0);
      record(outcome(aotrun_runner_get_output_shapes(runner.get(), in.data(), in.size(), shapes.data(), shapes.size())),
             what + " shapes", &counts);
    } else if (path_kind == 1) {  // run_alloc
      std::vector<DLManagedTensor*> owned(pkg.outputs().size(), nullptr);
      const Outcome o =
          outcome(aotrun_runner_run_alloc(runner.get(), in.data(), in.size(), owned.data(), owned.size()));
      record(o, what + " run_alloc", &counts);
      for (DLManagedTensor* t : owned) {
        if (o.code != AOTRUN_OK) {
          EXPECT_EQ(t, nullptr) << what;
        }
        if (t != nullptr && t->deleter != nullptr) t->deleter(t);
      }
    } else {  // run (2: sync, 3: async), then the same on the single-threaded runner
      std::vector<Arg> outs = outputs_for(runner, pkg, in);
      std::vector<DLTensor> out;
      for (Arg& a : outs) out.push_back(a.dl());
      Outcome o;
      if (path_kind == 2) {
        o = outcome(aotrun_runner_run(runner.get(), in.data(), in.size(), out.data(), out.size()));
      } else {
        aotrun_event* e = nullptr;
        const Outcome launched =
            outcome(aotrun_runner_run_async(runner.get(), in.data(), in.size(), out.data(), out.size(), &e));
        o = launched.code == AOTRUN_OK ? outcome(aotrun_event_wait(e)) : launched;
        if (e != nullptr) aotrun_event_free(e);
      }
      record(o, what + (path_kind == 2 ? " run" : " async"), &counts);
      if (o.code == AOTRUN_OK && mi != 1) {
        std::vector<Arg> again = outs;
        std::vector<DLTensor> out2;
        for (Arg& a : again) {
          std::fill(a.bytes.begin(), a.bytes.end(), 0);
          out2.push_back(a.dl());
        }
        const Outcome o2 =
            outcome(aotrun_runner_run(runners[pi * 3 + 1]->get(), in.data(), in.size(), out2.data(), out2.size()));
        ASSERT_EQ(o2.code, AOTRUN_OK) << what << ": single_threaded refused what mode " << mi << " ran: " << o2.message;
        for (size_t k = 0; k < outs.size(); ++k) {
          // NaN in NaN out: compare bits.
          EXPECT_EQ(std::memcmp(outs[k].bytes.data(), again[k].bytes.data(), outs[k].bytes.size()), 0)
              << what << ": output " << k << " differs between modes";
        }
      }
    }
  }
  // The storm left every runner serving: the request made before it gives
  // the same bits again on each of them.
  for (auto& run : runners) {
    std::vector<DLManagedTensor*> owned(plain.outputs().size(), nullptr);
    const Outcome o =
        outcome(aotrun_runner_run_alloc(run->get(), base_in.data(), base_in.size(), owned.data(), owned.size()));
    ASSERT_EQ(o.code, AOTRUN_OK) << model << " after the fuzz: " << o.message;
    for (size_t k = 0; k < owned.size(); ++k) {
      const DLTensor& t = owned[k]->dl_tensor;
      ASSERT_EQ(std::vector<int64_t>(t.shape, t.shape + t.ndim), baseline[k].shape) << model;
      EXPECT_EQ(std::memcmp(t.data, baseline[k].bytes.data(), baseline[k].bytes.size()), 0)
          << model << ": output " << k << " after the fuzz";
    }
    for (DLManagedTensor* t : owned)
      if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }
  std::string by;
  for (const auto& [code, k] : counts.by_code)
    by += " " + std::string(aotrun_code_name(code)) + "=" + std::to_string(k);
  std::printf("request fuzz %s: %zu requests, %zu answered, %zu refused (%s)\n", model.c_str(), counts.requests,
              counts.ok, counts.refused, by.c_str() + (by.empty() ? 0 : 1));
}

INSTANTIATE_TEST_SUITE_P(Zoo, RequestFuzz, ::testing::ValuesIn(zoo_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
