// Real PyTorch AOTInductor packages (compat/aoti/fixtures, exported by
// compat/aoti/export_fixtures.py, one directory per torch release, built by
// scripts/build-aoti-corpus.sh) through libaotrun's C API: every model of
// every release's manifest.json, every input set, in every mode, equals eager
// PyTorch within the manifest's tolerance (float32: torch.testing.assert_close's
// defaults; int64 and bool: exact); graph replays identical to eager runs, old
// packages (no RunSingleThreaded) fall back with one warning, and bad input is
// refused. libtorch comes from $AOTRUN_LIBTORCH (scripts/test.sh fetches one);
// without it every test skips, saying so.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../core/test_util.hpp"
#include "require_libtorch.hpp"

using namespace aotrun_test;

namespace {

const std::string kNew = std::string(AOTRUN_PT2_FIXTURES) + "/torch-2.15.0";
const std::string kOld = std::string(AOTRUN_PT2_FIXTURES) + "/torch-2.6.0";

// PyTorch's float32 defaults (torch.testing.assert_close).
constexpr double kRtol = 1.3e-6, kAtol = 1e-5;

// DLPack >= 0.8's kDLBool (the dlpack.h in use may predate it).
constexpr uint8_t kDLBoolCode = 6;

// A float32 / int64 / bool .npy array, C order, little endian.
struct Npy {
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  DLDataType dtype{kDLFloat, 32, 1};
  DLTensor dl{};
  static std::unique_ptr<Npy> load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return nullptr;
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0) return nullptr;
    const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
    const std::string header = all.substr(10, hlen);
    auto n = std::make_unique<Npy>();
    if (header.find("'<f4'") != std::string::npos) {
      n->dtype = {kDLFloat, 32, 1};
    } else if (header.find("'<i8'") != std::string::npos) {
      n->dtype = {kDLInt, 64, 1};
    } else if (header.find("'|b1'") != std::string::npos) {
      n->dtype = {kDLBoolCode, 8, 1};
    } else {
      return nullptr;
    }
    const size_t lp = header.find('(', header.find("'shape'"));
    const size_t rp = header.find(')', lp);
    std::stringstream dims(header.substr(lp + 1, rp - lp - 1));
    std::string d;
    while (std::getline(dims, d, ',')) {
      if (d.find_first_of("0123456789") != std::string::npos) n->shape.push_back(std::stoll(d));
    }
    n->bytes.assign(all.begin() + 10 + static_cast<long>(hlen), all.end());
    n->bind();
    return n;
  }
  static std::unique_ptr<Npy> zeros_like(const Npy& o) {
    auto n = std::make_unique<Npy>();
    n->shape = o.shape;
    n->dtype = o.dtype;
    n->bytes.assign(o.bytes.size(), 0);
    n->bind();
    return n;
  }
  void bind() {
    dl = DLTensor{bytes.data(), {kDLCPU, 0}, static_cast<int>(shape.size()), dtype, shape.data(), nullptr, 0};
  }
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
  size_t count() const { return bytes.size() / 4; }
  bool is_float() const { return dtype.code == kDLFloat && dtype.bits == 32; }
};

std::unique_ptr<Npy> npy(const std::string& dir, const std::string& file) {
  auto n = Npy::load(dir + "/" + file);
  EXPECT_NE(n, nullptr) << "cannot read " << dir << "/" << file;
  return n;
}

// First violation of |a - b| <= atol + rtol * |b| (float32) or of equality
// (int64, bool), as a string, "" if none.
std::string close(const Npy& got, const Npy& want, double rtol = kRtol, double atol = kAtol) {
  if (got.shape != want.shape) return "shape differs";
  if (got.dtype.code != want.dtype.code || got.dtype.bits != want.dtype.bits) return "dtype differs";
  if (!want.is_float()) {
    if (got.bytes != want.bytes) {
      for (size_t i = 0; i < want.bytes.size(); ++i) {
        if (got.bytes[i] != want.bytes[i]) return "byte " + std::to_string(i) + " differs";
      }
    }
    return "";
  }
  for (size_t i = 0; i < want.count(); ++i) {
    const double a = got.f()[i], b = want.f()[i];
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
      return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b);
    }
  }
  return "";
}

struct Case {
  std::string model;
  std::string prefix;  // file prefix of the reference data
  size_t inputs, outputs;
};

const Case kCases[] = {{"mlp", "mlp", 1, 1},
                       {"convnet", "convnet", 1, 1},
                       {"dyn_mlp", "dyn_mlp", 1, 1},
                       {"dyn_mlp", "dyn_mlp.b3", 1, 1},
                       {"two_io", "two_io", 2, 2}};

struct Loaded {
  std::vector<std::unique_ptr<Npy>> in, want;
  std::vector<DLTensor> in_dl;
  Loaded(const std::string& dir, const Case& c) {
    for (size_t i = 0; i < c.inputs; ++i) {
      in.push_back(npy(dir, c.prefix + ".in" + std::to_string(i) + ".npy"));
      in_dl.push_back(in.back()->dl);
    }
    for (size_t i = 0; i < c.outputs; ++i) want.push_back(npy(dir, c.prefix + ".out" + std::to_string(i) + ".npy"));
  }
  // Runs once into fresh outputs and compares them with the reference.
  void run_and_compare(aotrun_runner* r, std::vector<std::unique_ptr<Npy>>* got_out = nullptr) {
    std::vector<std::unique_ptr<Npy>> got;
    std::vector<DLTensor> out_dl;
    for (auto& w : want) {
      got.push_back(Npy::zeros_like(*w));
      out_dl.push_back(got.back()->dl);
    }
    AOTRUN_ASSERT_OK(aotrun_runner_run(r, in_dl.data(), in_dl.size(), out_dl.data(), out_dl.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(close(*got[i], *want[i]), "") << "output " << i;
    if (got_out != nullptr) *got_out = std::move(got);
  }
};

// ---------------------------------------------------------------------------
// The corpus: every compat/aoti/fixtures/torch-*/manifest.json, every model
// and input set in it, every mode.

struct CorpusCase {
  std::string release;  // "2.15.0"
  std::string dir;
  std::string model, set;  // set: "default" or a variant ("b3")
  std::vector<std::string> inputs, outputs;
  std::map<std::string, std::pair<double, double>> tol;  // dtype -> (rtol, atol)
  aotrun_mode mode = AOTRUN_MODE_THREADED;
  // Where the specs come from: the archive's wrapper source carries input
  // checks (the manifest's facts), so every input's spec must be known.
  bool input_checks = false;
  std::vector<std::pair<size_t, size_t>> dynamic;  // (input, dim) declared dynamic at export
};

// gtest prints a parameter in test listings and failures: the case, readably.
void PrintTo(const CorpusCase& c, std::ostream* os) {
  *os << "torch-" << c.release << "/" << c.model << " (" << c.set << ") " << static_cast<int>(c.mode);
}

std::vector<int> version_of(const std::string& v) {
  std::vector<int> out;
  std::stringstream ss(v);
  std::string part;
  while (std::getline(ss, part, '.')) out.push_back(std::atoi(part.c_str()));
  return out;
}

const char* mode_name(aotrun_mode m) {
  return m == AOTRUN_MODE_THREADED ? "threaded" : m == AOTRUN_MODE_GRAPH ? "graph" : "single_threaded";
}

// Clean refusals: what aotrun does today where it does not run a corpus case.
// `where` is the call that fails: "open" (aotrun_package_open), "runner"
// (aotrun_runner_create), "run" (aotrun_runner_run) or "*" (the first that
// fails). "*" in release, model, mode matches all. Each is a library gap to
// fix (see docs/COMPAT_MATRIX.md); the test fails once the case runs, so the
// entry is removed then.
struct Known {
  const char* release;
  const char* model;
  const char* mode;
  const char* where;
  aotrun_code code;
  const char* why;
};
const Known kKnown[] = {
    // (bool outputs, once refused here, map to DLPack's bool since #16.)
    {nullptr, nullptr, nullptr, nullptr, AOTRUN_OK, nullptr},
};

// Cases that crash or compute a wrong answer today: registered as DISABLED_
// (a crash would take the whole binary down with it).
struct Disabled {
  const char* release;
  const char* model;
  const char* mode;
  const char* why;
};
const Disabled kDisabled[] = {
    // A 2.6 archive carries no input checks, so nothing says the model was
    // compiled for channels_last input strides; the row-major input is read
    // as NHWC (max |diff| 1.12). docs/RELIABILITY.md 95a'.
    {"2.6.0", "convnet_cl", "*", "channels_last input strides unknown without input checks: wrong numbers"},
    {nullptr, nullptr, nullptr, nullptr},
};

bool glob_eq(const char* pattern, const std::string& value) {
  return pattern != nullptr && (std::strcmp(pattern, "*") == 0 || value == pattern);
}

const Known* known_for(const CorpusCase& c) {
  for (const Known& k : kKnown) {
    if (k.release == nullptr) continue;
    if (glob_eq(k.release, c.release) && glob_eq(k.model, c.model) && glob_eq(k.mode, mode_name(c.mode))) return &k;
  }
  return nullptr;
}

const Disabled* disabled_for(const CorpusCase& c) {
  for (const Disabled& d : kDisabled) {
    if (d.release == nullptr) continue;
    if (glob_eq(d.release, c.release) && glob_eq(d.model, c.model) && glob_eq(d.mode, mode_name(c.mode))) return &d;
  }
  return nullptr;
}

std::vector<CorpusCase> corpus_cases() {
  namespace fs = std::filesystem;
  std::vector<CorpusCase> out;
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(AOTRUN_PT2_FIXTURES, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && n.rfind("torch-", 0) == 0 && fs::exists(e.path() / "manifest.json"))
      dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return version_of(a.filename().string().substr(6)) < version_of(b.filename().string().substr(6));
  });
  for (const auto& d : dirs) {
    std::ifstream in(d / "manifest.json");
    const nlohmann::json m = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (m.is_discarded() || !m.contains("models")) continue;
    std::map<std::string, std::pair<double, double>> tol;
    const nlohmann::json tolerance = m.value("tolerance", nlohmann::json::object());
    for (const auto& [dtype, t] : tolerance.items()) {
      tol[dtype] = {t.value("rtol", 0.0), t.value("atol", 0.0)};
    }
    for (const auto& [model, info] : m["models"].items()) {
      for (const auto& [set, files] : info["sets"].items()) {
        CorpusCase c;
        c.release = d.filename().string().substr(6);
        c.dir = d.string();
        c.model = model;
        c.set = set;
        c.tol = tol;
        const auto facts = info.find("facts");
        c.input_checks = facts != info.end() && facts->is_object() && facts->value("input_checks_in_wrapper", false);
        const nlohmann::json dynamic = info.value("dynamic", nlohmann::json::object());
        for (const auto& [dim_name, d] : dynamic.items()) {
          if (d.is_object()) c.dynamic.emplace_back(d.value("input", 0), d.value("dim", 0));
        }
        for (const auto& f : files["inputs"]) c.inputs.push_back(f["file"]);
        for (const auto& f : files["outputs"]) c.outputs.push_back(f["file"]);
        for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
          c.mode = mode;
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

// The release of the libtorch in use, from its cache directory's name
// (scripts/fetch-libtorch.sh: .../libtorch-<version>/lib); empty if unknown.
std::string libtorch_release() {
  const char* lt = std::getenv("AOTRUN_LIBTORCH");
  std::smatch m;
  const std::string s = lt != nullptr ? lt : "";
  if (std::regex_search(s, m, std::regex("libtorch-([0-9]+\\.[0-9]+\\.[0-9]+)"))) return m[1];
  return "";
}

class Corpus : public testing::TestWithParam<CorpusCase> {};

TEST_P(Corpus, MatchesEagerPyTorch) {
  REQUIRE_LIBTORCH();
  const CorpusCase& c = GetParam();
  // ctest names each test, and gtest runs a DISABLED_ test named by its filter.
  if (const Disabled* d = disabled_for(c)) GTEST_SKIP() << "disabled: " << d->why;
  const Known* known = known_for(c);
  // PyTorch promises no forward compatibility: a package exported by a newer
  // torch than the libtorch in use may call shim functions it lacks, which
  // aotrun names at open (LOAD_FAILED) instead of failing in dlopen.
  const std::string lt = libtorch_release();
  const bool newer_than_libtorch = !lt.empty() && version_of(c.release) > version_of(lt);

  aotrun_package* raw = nullptr;
  Outcome open = outcome(aotrun_package_open((c.dir + "/" + c.model + ".pt2").c_str(), nullptr, &raw));
  Package pkg(raw);
  // A KNOWN case passes when its first failing call fails with the code
  // recorded (at the stage recorded, unless "*"), and fails once it runs.
  auto refused_as_known = [&](const char* stage, const Outcome& o) {
    if (known == nullptr || o.code == AOTRUN_OK) return false;
    EXPECT_TRUE(std::strcmp(known->where, "*") == 0 || std::strcmp(known->where, stage) == 0)
        << "KNOWN at " << known->where << ", failed at " << stage << ": " << o.message;
    EXPECT_EQ(o.code, known->code) << "KNOWN: " << known->why << "; " << stage << ": " << o.message;
    return true;
  };
  if (refused_as_known("open", open)) return;
  if (newer_than_libtorch && open.code == AOTRUN_ERR_LOAD_FAILED) {
    EXPECT_NE(open.message.find("aoti_"), std::string::npos) << open.message;
    GTEST_SKIP() << "package from torch " << c.release << " needs what libtorch " << lt << " lacks: " << open.message;
  }
  ASSERT_EQ(open.code, AOTRUN_OK) << open.message;

  const char* reason = nullptr;
  const bool native = aotrun_package_mode_available(pkg.get(), c.mode, &reason) != 0;
  aotrun_runner* raw_runner = nullptr;
  Outcome created = outcome(aotrun_runner_create(pkg.get(), RunnerOptions().mode(c.mode).get(), &raw_runner));
  Runner r(raw_runner);
  if (refused_as_known("runner", created)) return;
  ASSERT_EQ(created.code, AOTRUN_OK) << created.message;
  std::vector<std::unique_ptr<Npy>> in, want;
  std::vector<DLTensor> in_dl;
  for (const auto& f : c.inputs) {
    in.push_back(npy(c.dir, f));
    ASSERT_NE(in.back(), nullptr);
    in_dl.push_back(in.back()->dl);
  }
  // The specs, from the archive's input checks where it has them (every
  // release from 2.7; no release's archive states them anywhere else, see
  // compat/aoti/README.md), else unknown (2.6): dtype, rank and every static
  // dim as exported, -1 exactly for the dims declared dynamic.
  for (size_t i = 0; i < in.size(); ++i) {
    aotrun_tensor_info ti{};
    ti.struct_size = sizeof(ti);
    AOTRUN_ASSERT_OK(aotrun_package_get_input(pkg.get(), i, &ti));
    if (!c.input_checks) {
      EXPECT_EQ(ti.ndim, -1) << "input " << i << ": no checks in the archive, yet a spec";
      continue;
    }
    ASSERT_EQ(ti.ndim, static_cast<int32_t>(in[i]->shape.size())) << "input " << i << " spec from the checks";
    EXPECT_EQ(ti.dtype.code, in[i]->dtype.code) << "input " << i;
    EXPECT_EQ(ti.dtype.bits, in[i]->dtype.bits) << "input " << i;
    for (size_t d = 0; d < in[i]->shape.size(); ++d) {
      const bool dyn = std::find(c.dynamic.begin(), c.dynamic.end(), std::make_pair(i, d)) != c.dynamic.end();
      EXPECT_EQ(ti.shape[d], dyn ? -1 : in[i]->shape[d]) << "input " << i << " dim " << d;
    }
  }
  for (const auto& f : c.outputs) {
    want.push_back(npy(c.dir, f));
    ASSERT_NE(want.back(), nullptr);
  }
  for (int run = 0; run < 3; ++run) {  // graph: warm-up, capture, replay
    std::vector<std::unique_ptr<Npy>> got;
    std::vector<DLTensor> out_dl;
    for (auto& w : want) {
      got.push_back(Npy::zeros_like(*w));
      std::fill(got.back()->bytes.begin(), got.back()->bytes.end(), static_cast<char>(0x7f));
      out_dl.push_back(got.back()->dl);
    }
    Outcome o = outcome(aotrun_runner_run(r.get(), in_dl.data(), in_dl.size(), out_dl.data(), out_dl.size()));
    if (refused_as_known("run", o)) return;
    ASSERT_EQ(o.code, AOTRUN_OK) << "run " << run << ": " << o.message;
    for (size_t i = 0; i < want.size(); ++i) {
      const std::string dtype = want[i]->is_float() ? "float32" : want[i]->dtype.code == kDLInt ? "int64" : "bool";
      const auto t = c.tol.count(dtype) ? c.tol.at(dtype) : std::make_pair(0.0, 0.0);
      EXPECT_EQ(close(*got[i], *want[i], t.first, t.second), "") << "run " << run << ", output " << i;
    }
  }
  EXPECT_EQ(known, nullptr) << "runs now; remove the KNOWN entry: " << (known ? known->why : "");
  const aotrun_runner_stats st = r.stats();
  if (!native) {
    // A release without RunSingleThreaded: the run falls back to Run.
    EXPECT_NE(c.mode, AOTRUN_MODE_THREADED) << reason;
    EXPECT_GE(st.fallback_runs, 1u) << reason;
    EXPECT_EQ(st.graph_captures, 0u);
  } else if (c.mode == AOTRUN_MODE_GRAPH) {
    EXPECT_EQ(st.graph_captures, 1u);
    EXPECT_GE(st.graph_replays, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Corpus, testing::ValuesIn(corpus_cases()), [](const auto& i) {
  const CorpusCase& c = i.param;
  std::string n = "torch_" + c.release + "_" + c.model + (c.set == "default" ? "" : "_" + c.set) + "_" +
                  (c.mode == AOTRUN_MODE_SINGLE_THREADED ? "single" : mode_name(c.mode));
  for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return (disabled_for(c) != nullptr ? "DISABLED_" : "") + n;
});

TEST(Pt2, InspectShowsSpecsFromTheModelsInputChecks) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/dyn_mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &info));
  EXPECT_STREQ(info.format, "pt2");
  EXPECT_STREQ(info.name, "dyn_mlp");
  aotrun_tensor_info in{};
  in.struct_size = sizeof(in);
  AOTRUN_ASSERT_OK(aotrun_package_get_input(pkg.get(), 0, &in));
  ASSERT_EQ(in.ndim, 2);
  EXPECT_EQ(in.shape[0], -1);  // dynamic batch
  EXPECT_EQ(in.shape[1], 64);
  EXPECT_EQ(in.dtype.code, kDLFloat);
  aotrun_tensor_info out{};
  out.struct_size = sizeof(out);
  AOTRUN_ASSERT_OK(aotrun_package_get_output(pkg.get(), 0, &out));
  ASSERT_EQ(out.ndim, 2);
  EXPECT_EQ(out.shape[0], -1);
  EXPECT_EQ(out.shape[1], 16);
  bool found_st = false;
  for (size_t i = 0; i < info.num_symbols; ++i) {
    aotrun_symbol_info s{};
    s.struct_size = sizeof(s);
    AOTRUN_ASSERT_OK(aotrun_package_get_symbol(pkg.get(), i, &s));
    if (std::strcmp(s.name, "AOTInductorModelContainerRunSingleThreaded") == 0) found_st = s.found == 1;
  }
  EXPECT_TRUE(found_st);
}

TEST(Pt2, GraphReplaysAreBitIdenticalToEagerAcrossInterleavedBatchSizes) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/dyn_mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  Loaded b8(kNew, kCases[2]), b3(kNew, kCases[3]);
  for (int round = 0; round < 4; ++round) {
    for (Loaded* l : {&b8, &b3}) {
      std::vector<std::unique_ptr<Npy>> g, e;
      l->run_and_compare(graph.get(), &g);
      l->run_and_compare(eager.get(), &e);
      EXPECT_EQ(g[0]->bytes, e[0]->bytes) << "round " << round;
    }
  }
  EXPECT_EQ(graph.stats().graph_captures, 2u);
  EXPECT_GE(graph.stats().graph_replays, 4u);
}

// The bridge keeps a view of each input between runs and hands the model a
// new reference to it when the next run passes the same memory, dtype and
// shape. Whatever the caller does with its buffers, a run must compute on
// what they hold now: contents rewritten in place, the same pointer with
// another shape, two buffers in turn.
TEST(Pt2, KeptInputViewsFollowTheCallersMemory) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/dyn_mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Loaded b8(kNew, kCases[2]), b3(kNew, kCases[3]);
  const Npy& x8 = *b8.in[0];
  const Npy& x3 = *b3.in[0];
  for (aotrun_mode mode : {AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_THREADED}) {
    SCOPED_TRACE(aotrun_mode_name(mode));
    Runner r(pkg, RunnerOptions().mode(mode));
    auto run = [&](const DLTensor& in, const Npy& like) {
      auto y = Npy::zeros_like(like);
      AOTRUN_EXPECT_OK(aotrun_runner_run(r.get(), &in, 1, &y->dl, 1));
      return y;
    };
    // One buffer, large enough for batch 8, first with the batch-8 input.
    Npy x;
    x.shape = x8.shape;
    x.bytes = x8.bytes;
    x.bind();
    EXPECT_EQ(close(*run(x.dl, *b8.want[0]), *b8.want[0]), "");
    EXPECT_EQ(close(*run(x.dl, *b8.want[0]), *b8.want[0]), "");  // the kept view
    // The same pointer, batch 3 with its rows.
    std::memcpy(x.bytes.data(), x3.bytes.data(), x3.bytes.size());
    DLTensor as3 = x.dl;
    int64_t shape3[2] = {x3.shape[0], x3.shape[1]};
    as3.shape = shape3;
    EXPECT_EQ(close(*run(as3, *b3.want[0]), *b3.want[0]), "");
    // Batch 8 again after rewriting the buffer in place, twice: the results
    // follow the contents (against the same contents at another address).
    std::memcpy(x.bytes.data(), x8.bytes.data(), x8.bytes.size());
    EXPECT_EQ(close(*run(x.dl, *b8.want[0]), *b8.want[0]), "");
    for (size_t i = 0; i < x.count(); ++i) reinterpret_cast<float*>(x.bytes.data())[i] *= -0.5f;
    Npy copy;
    copy.shape = x.shape;
    copy.bytes = x.bytes;
    copy.bind();
    const auto in_place = run(x.dl, *b8.want[0]);
    const auto elsewhere = run(copy.dl, *b8.want[0]);
    EXPECT_EQ(in_place->bytes, elsewhere->bytes);
    EXPECT_NE(close(*in_place, *b8.want[0]), "");  // it did change
    // Two buffers in turn.
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(run(x.dl, *b8.want[0])->bytes, elsewhere->bytes) << i;
      EXPECT_EQ(close(*run(x8.dl, *b8.want[0]), *b8.want[0]), "") << i;
    }
  }
}

TEST(Pt2, AsyncRunsStayInTheWindowAndMatch) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions().num_models(2).max_inflight(3));
  Loaded data(kNew, kCases[0]);
  constexpr int kRuns = 24;
  std::vector<std::unique_ptr<Npy>> outs;
  std::vector<DLTensor> out_dl;
  for (int i = 0; i < kRuns; ++i) outs.push_back(Npy::zeros_like(*data.want[0]));
  for (auto& o : outs) out_dl.push_back(o->dl);
  std::vector<aotrun_event*> events(kRuns, nullptr);
  for (int i = 0; i < kRuns; ++i) {
    AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), data.in_dl.data(), 1, &out_dl[static_cast<size_t>(i)], 1,
                                             &events[static_cast<size_t>(i)]));
  }
  for (auto* e : events) {
    AOTRUN_EXPECT_OK(aotrun_event_wait(e));
    aotrun_event_free(e);
  }
  for (auto& o : outs) EXPECT_EQ(close(*o, *data.want[0]), "");
  EXPECT_LE(r.stats().peak_inflight, 3u);
}

TEST(Pt2, RunAllocHandsOverOutputsOfTheRightShape) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/two_io.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  Loaded data(kNew, kCases[4]);
  DLManagedTensor* out[2] = {};
  AOTRUN_ASSERT_OK(aotrun_runner_run_alloc(r.get(), data.in_dl.data(), 2, out, 2));
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(out[i], nullptr);
    Npy got;
    got.shape.assign(out[i]->dl_tensor.shape, out[i]->dl_tensor.shape + out[i]->dl_tensor.ndim);
    const char* p = static_cast<const char*>(out[i]->dl_tensor.data);
    got.bytes.assign(p, p + data.want[static_cast<size_t>(i)]->bytes.size());
    EXPECT_EQ(close(got, *data.want[static_cast<size_t>(i)]), "") << "output " << i;
    out[i]->deleter(out[i]);
  }
}

TEST(Pt2, CallerCaptureRecordsSingleThreadedAndRefusesThreaded) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Loaded data(kNew, kCases[0]);
  auto y = Npy::zeros_like(*data.want[0]);
  aotrun_stream* s = nullptr;
  AOTRUN_ASSERT_OK(aotrun_stream_create(AOTRUN_STREAM_INLINE, &s));
  {
    Runner threaded(pkg, RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(1));
    AOTRUN_ASSERT_OK(aotrun_stream_begin_capture(s, AOTRUN_CAPTURE_GLOBAL));
    Outcome o = outcome(aotrun_runner_run_on_stream(threaded.get(), s, data.in_dl.data(), 1, &y->dl, 1));
    EXPECT_EQ(o.code, AOTRUN_ERR_CAPTURE_UNSUPPORTED) << o.message;
    EXPECT_NE(o.message.find("AOTInductorModelContainerRunSingleThreaded"), std::string::npos) << o.message;
    aotrun_graph* g = nullptr;
    aotrun_status_free(aotrun_stream_end_capture(s, &g));
    aotrun_graph_free(g);
  }
  Runner single(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  AOTRUN_ASSERT_OK(aotrun_stream_begin_capture(s, AOTRUN_CAPTURE_GLOBAL));
  AOTRUN_ASSERT_OK(aotrun_runner_run_on_stream(single.get(), s, data.in_dl.data(), 1, &y->dl, 1));
  aotrun_graph* g = nullptr;
  AOTRUN_ASSERT_OK(aotrun_stream_end_capture(s, &g));
  std::fill(y->bytes.begin(), y->bytes.end(), 0);
  AOTRUN_ASSERT_OK(aotrun_graph_launch(g, s));
  AOTRUN_ASSERT_OK(aotrun_stream_synchronize(s));
  EXPECT_EQ(close(*y, *data.want[0]), "");
  aotrun_graph_free(g);
  aotrun_stream_free(s);
}

// convnet_cl was compiled for a channels_last input (strides [192, 1, 24, 3]
// for [2, 3, 8, 8]): inductor's own kernel indexes it as NHWC. Before the
// layout was honoured, a row-major input computed wrong numbers in every
// mode (720 of 1024 elements of output 0 off, max |diff| 1.12) with no
// error. Now a row-major input is converted, a channels_last DLPack tensor
// is passed as it is, and both equal eager PyTorch in every mode, with
// run_alloc and async too; output 0 comes back channels_last from the model
// and is copied into the caller's row-major tensor.
struct ChannelsLast {
  std::unique_ptr<Npy> row_major;
  std::vector<float> nhwc;
  int64_t strides[4] = {192, 1, 24, 3};
  DLTensor dl{};
  explicit ChannelsLast(const std::string& dir) : row_major(npy(dir, "convnet_cl.in0.npy")) {
    const auto& s = row_major->shape;  // [2, 3, 8, 8]
    nhwc.resize(row_major->count());
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t c = 0; c < s[1]; ++c)
        for (int64_t h = 0; h < s[2]; ++h)
          for (int64_t w = 0; w < s[3]; ++w)
            nhwc[static_cast<size_t>(n * strides[0] + c * strides[1] + h * strides[2] + w * strides[3])] =
                row_major->f()[((n * s[1] + c) * s[2] + h) * s[3] + w];
    dl = row_major->dl;
    dl.data = nhwc.data();
    dl.strides = strides;
  }
};

TEST(Pt2Layout, ChannelsLastModelMatchesEagerFromRowMajorAndChannelsLastInputsInEveryMode) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/convnet_cl.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  const Case c{"convnet_cl", "convnet_cl", 1, 2};
  Loaded data(kNew, c);
  ChannelsLast cl(kNew);
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(mode_name(mode));
    Runner r(pkg, RunnerOptions().mode(mode));
    // Alternating layouts: graph mode keeps one captured graph per layout.
    for (int run = 0; run < 6; ++run) {
      SCOPED_TRACE(run);
      data.in_dl[0] = run % 2 == 0 ? data.in[0]->dl : cl.dl;
      data.run_and_compare(r.get());
    }
    data.in_dl[0] = cl.dl;
    DLManagedTensor* out[2] = {};
    AOTRUN_ASSERT_OK(aotrun_runner_run_alloc(r.get(), data.in_dl.data(), 1, out, 2));
    for (size_t i = 0; i < 2; ++i) {
      ASSERT_NE(out[i], nullptr);
      Npy got;
      got.shape.assign(out[i]->dl_tensor.shape, out[i]->dl_tensor.shape + out[i]->dl_tensor.ndim);
      const char* p = static_cast<const char*>(out[i]->dl_tensor.data);
      got.bytes.assign(p, p + data.want[i]->bytes.size());
      EXPECT_EQ(close(got, *data.want[i]), "") << "run_alloc output " << i;
      out[i]->deleter(out[i]);
    }
  }
  // Async: the kept descriptors keep the strides until the run.
  Runner r(pkg, RunnerOptions().max_inflight(4));
  constexpr int kRuns = 8;
  std::vector<std::unique_ptr<Npy>> outs;
  for (int i = 0; i < 2 * kRuns; ++i) outs.push_back(Npy::zeros_like(*data.want[static_cast<size_t>(i % 2)]));
  std::vector<aotrun_event*> events(kRuns, nullptr);
  for (int i = 0; i < kRuns; ++i) {
    DLTensor in = i % 2 == 0 ? data.in[0]->dl : cl.dl;
    DLTensor o[2] = {outs[static_cast<size_t>(2 * i)]->dl, outs[static_cast<size_t>(2 * i + 1)]->dl};
    AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &in, 1, o, 2, &events[static_cast<size_t>(i)]));
  }
  for (auto* e : events) {
    AOTRUN_EXPECT_OK(aotrun_event_wait(e));
    aotrun_event_free(e);
  }
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(close(*outs[i], *data.want[i % 2]), "") << "async " << i;
}

// Its convolution weight is a constant the model keeps channels-last too
// (strides [27, 1, 9, 3]); the update API takes row-major values. Before,
// the update was refused as UNSUPPORTED; now, replaced by zeros and then by
// the values it was exported with (tests/pt2/constants, written by
// export_weights.py), the outputs move and then are eager's again, in every
// release that takes updates. (The convolution reads a weight of any
// strides; a constant that the model's own kernel indexes by its strides is
// edge_test.cpp's cl_param.)
class Pt2ChannelsLastConstant : public ::testing::TestWithParam<const char*> {};

TEST_P(Pt2ChannelsLastConstant, RowMajorReplacementIsLaidOutAsTheModelKeepsIt) {
  REQUIRE_LIBTORCH();
  const std::string dir = std::string(AOTRUN_PT2_FIXTURES) + "/torch-" + GetParam();
  Package pkg(dir + "/convnet_cl.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  const Case c{"convnet_cl", "convnet_cl", 1, 2};
  Loaded data(dir, c);
  const std::unique_ptr<Npy> w = npy(AOTRUN_PT2_CONSTANTS, "convnet_cl.conv_weight.npy");
  ASSERT_EQ(w->shape, (std::vector<int64_t>{8, 3, 3, 3}));
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(mode_name(mode));
    Runner r(pkg, RunnerOptions().mode(mode));
    // First a weight of zeros: output 0 is then the bias's ReLU everywhere,
    // so the replacement must take effect.
    std::vector<float> zeros(8 * 27, 0.0f);
    aotrun_named_tensor z{"conv_weight", w->dl};
    z.tensor.data = zeros.data();
    AOTRUN_ASSERT_OK(aotrun_runner_update_constants(r.get(), &z, 1, 0));
    AOTRUN_ASSERT_OK(aotrun_runner_swap_constants(r.get()));
    std::vector<std::unique_ptr<Npy>> got;
    std::vector<DLTensor> out_dl;
    for (auto& want : data.want) {
      got.push_back(Npy::zeros_like(*want));
      out_dl.push_back(got.back()->dl);
    }
    AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), data.in_dl.data(), 1, out_dl.data(), 2));
    EXPECT_NE(close(*got[0], *data.want[0]), "") << "a zero weight changed nothing";
    aotrun_named_tensor own{"conv_weight", w->dl};
    AOTRUN_ASSERT_OK(aotrun_runner_update_constants(r.get(), &own, 1, 0));
    AOTRUN_ASSERT_OK(aotrun_runner_swap_constants(r.get()));
    data.run_and_compare(r.get());
    data.run_and_compare(r.get());  // graph mode: a replay too
  }
}

INSTANTIATE_TEST_SUITE_P(Releases, Pt2ChannelsLastConstant, ::testing::Values("2.8.0", "2.10.0", "2.11.0", "2.15.0"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string s = std::string("torch_") + i.param;
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

TEST(Pt2Layout, OtherStridesAreRefusedNamingTheInputAndTheExpectedOnes) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/convnet_cl.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  const Case c{"convnet_cl", "convnet_cl", 1, 2};
  Loaded data(kNew, c);
  ChannelsLast cl(kNew);
  std::vector<std::unique_ptr<Npy>> got;
  std::vector<DLTensor> out_dl;
  for (auto& w : data.want) {
    got.push_back(Npy::zeros_like(*w));
    out_dl.push_back(got.back()->dl);
  }
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    Runner r(pkg, RunnerOptions().mode(mode));
    DLTensor odd = cl.dl;
    int64_t hw_swapped[4] = {192, 1, 3, 24};  // channels_last with H and W transposed
    odd.strides = hw_swapped;
    Outcome o = outcome(aotrun_runner_run(r.get(), &odd, 1, out_dl.data(), 2));
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("input 0 ('"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("strides [192, 1, 3, 24]"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("compiled for strides [192, 1, 24, 3]"), std::string::npos) << o.message;
    // The runner stays usable.
    data.in_dl[0] = cl.dl;
    data.run_and_compare(r.get());
  }
  // A model compiled for row-major inputs still takes only those.
  Package mlp(kNew + "/mlp.pt2");
  Runner r(mlp, RunnerOptions());
  Tensor x({4, 64}), y({4, 16});
  int64_t column_major[2] = {1, 4};
  x.dl.strides = column_major;
  Outcome o = outcome(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("not contiguous"), std::string::npos) << o.message;
}

TEST(Pt2, BadInputsAreRefusedWithTheReason) {
  REQUIRE_LIBTORCH();
  Package pkg(kNew + "/dyn_mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  Tensor big({65, 64}), y({65, 16});
  Outcome o = outcome(aotrun_runner_run(r.get(), &big.dl, 1, &y.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("outside the range the model was compiled for [2, 64]"), std::string::npos) << o.message;
  // Exported with Dim("batch", min=1): torch compiled it for 2 and up, and the
  // message says why and what to do (pad_batch: requests_test.cpp).
  Tensor one({1, 64}), y1({1, 16});
  o = outcome(aotrun_runner_run(r.get(), &one.dl, 1, &y1.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("dim 0 is 1, outside the range the model was compiled for [2, 64]; the compiled code "
                           "assumes every dynamic size is 2 or more (torch's 0/1 specialisation"),
            std::string::npos)
      << o.message;
  Tensor wrong({8, 63}), y8({8, 16});
  o = outcome(aotrun_runner_run(r.get(), &wrong.dl, 1, &y8.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("expected [-1, 64]"), std::string::npos) << o.message;
  Tensor x({8, 64}), y_bad({8, 15});
  o = outcome(aotrun_runner_run(r.get(), &x.dl, 1, &y_bad.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  // The runner stays usable.
  Loaded data(kNew, kCases[2]);
  data.run_and_compare(r.get());
}

TEST(Pt2, OldPackageWithoutRunSingleThreadedFallsBackWithOneWarning) {
  REQUIRE_LIBTORCH();
  Package pkg(kOld + "/mlp.pt2");
  ASSERT_NE(pkg.get(), nullptr);
  const char* reason = nullptr;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_SINGLE_THREADED, &reason), 0);
  EXPECT_NE(std::string(reason).find("lacks AOTInductorModelContainerRunSingleThreaded"), std::string::npos) << reason;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_GRAPH, &reason), 0);
  EXPECT_NE(std::string(reason).find("graph mode unavailable"), std::string::npos) << reason;

  LogCapture log;
  Loaded data(kOld, kCases[0]);
  {
    Runner a(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    Runner b(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    data.run_and_compare(a.get());
    data.run_and_compare(b.get());
    EXPECT_GE(a.stats().fallback_runs, 1u);
  }
  EXPECT_EQ(log.count_containing("lacks AOTInductorModelContainerRunSingleThreaded"), 1u);
  Runner g(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  data.run_and_compare(g.get());
  EXPECT_EQ(g.stats().graph_captures, 0u);

  RunnerOptions strict;
  strict.mode(AOTRUN_MODE_SINGLE_THREADED).strict(true);
  aotrun_runner* r = nullptr;
  Outcome o = outcome(aotrun_runner_create(pkg.get(), strict.get(), &r));
  EXPECT_EQ(o.code, AOTRUN_ERR_UNSUPPORTED) << o.message;
  EXPECT_EQ(r, nullptr);
}

TEST(Pt2, EveryOldFixtureMatchesEagerPyTorchOnTheNewLibtorch) {
  REQUIRE_LIBTORCH();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.prefix);
    Package pkg(kOld + "/" + c.model + ".pt2");
    ASSERT_NE(pkg.get(), nullptr);
    Runner r(pkg, RunnerOptions());
    Loaded data(kOld, c);
    data.run_and_compare(r.get());
  }
}

TEST(Pt2, BrokenArchivesGiveClearErrors) {
  REQUIRE_LIBTORCH();
  // Truncated: the zip magic is there, the central directory is not.
  std::ifstream in(kNew + "/mlp.pt2", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char dir[] = "/tmp/aotrun-pt2-broken-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string cut = std::string(dir) + "/cut.pt2";
  std::ofstream(cut, std::ios::binary).write(all.data(), static_cast<std::streamsize>(all.size() / 2));
  aotrun_package* p = nullptr;
  Outcome o = outcome(aotrun_package_open(cut.c_str(), nullptr, &p));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE) << o.message;
  EXPECT_NE(o.message.find("cut.pt2"), std::string::npos) << o.message;
  // A .pt2 name on something that is not a zip.
  const std::string text = std::string(dir) + "/text.pt2";
  std::ofstream(text) << "not a zip\n";
  o = outcome(aotrun_package_open(text.c_str(), nullptr, &p));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE) << o.message;
  EXPECT_NE(o.message.find("not a zip archive"), std::string::npos) << o.message;
  ::unlink(cut.c_str());
  ::unlink(text.c_str());
  ::rmdir(dir);
}

}  // namespace
