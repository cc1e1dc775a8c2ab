// A .pt2's constants through the bridge (white-box: the PackageCode that
// open_pt2 returns, as the runner uses it): the list read at open
// (model_constants) against the models' known parameters, and containers
// created with replacement constants, whose outputs are checked against a
// computation from the replaced weights. Every fixture release of the corpus
// (compat/aoti/fixtures/torch-*/mlp.pt2); skipped without libtorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <csignal>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <zip.h>

#include "device/cpu/host_services.hpp"
#include "package/package_code.hpp"
#include "package/pt2/bridge/aoti_bridge.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "base/error.hpp"
#include "base/strings.hpp"
#include "require_libtorch.hpp"

namespace aotrun::pt2 {
namespace {

const std::string kFixtures = AOTRUN_PT2_FIXTURES;

// An inline CPU host, as the runner's metadata container gets.
aotrun_pkg_host* test_host() {
  static cpu::Stream stream(cpu::Stream::Kind::Inline);
  static cpu::HostContext ctx = [] {
    cpu::HostContext c;
    c.default_stream = &stream;
    c.package_name = "constants_test";
    return c;
  }();
  static aotrun_pkg_host host = cpu::make_host_services(&ctx);
  return &host;
}

std::unique_ptr<PackageCode> open(const std::string& path) { return open_pt2(path, "mlp", Pt2Options{}); }

struct Created {
  int32_t rc = 0;
  std::string message;
  aotrun_pkg_container* c = nullptr;
};

Created create(const PackageCode& code, const std::vector<aotrun_pkg_constant>& constants, int32_t models = 1) {
  aotrun_pkg_create_args a{};
  a.struct_size = sizeof(a);
  a.num_models = models;
  a.device = DLDevice{kDLCPU, 0};
  a.host = test_host();
  a.constants = constants.empty() ? nullptr : constants.data();
  a.num_constants = constants.size();
  Created r;
  r.rc = code.create(&r.c, &a);
  if (r.rc != AOTRUN_PKG_OK) r.message = code.fn().get_last_error();
  return r;
}

void destroy(const PackageCode& code, aotrun_pkg_container* c) {
  if (c == nullptr) return;
  EXPECT_EQ(code.fn().destroy(c), AOTRUN_PKG_OK) << code.fn().get_last_error();
}

// Runs the mlp on `x` [4, 64]; returns its [4, 16] output.
std::vector<float> run_mlp(const PackageCode& code, aotrun_pkg_container* c, std::vector<float> x) {
  int64_t in_shape[2] = {4, 64}, out_shape[2] = {4, 16};
  std::vector<float> y(64, std::nanf(""));
  DLTensor in{}, out{};
  in.data = x.data();
  in.device = out.device = DLDevice{kDLCPU, 0};
  in.ndim = out.ndim = 2;
  in.dtype = out.dtype = DLDataType{kDLFloat, 32, 1};
  in.shape = in_shape;
  out.data = y.data();
  out.shape = out_shape;
  aotrun_pkg_run_args a{};
  a.struct_size = sizeof(a);
  a.inputs = &in;
  a.num_inputs = 1;
  a.outputs = &out;
  a.num_outputs = 1;
  EXPECT_EQ(code.fn().run(c, &a), AOTRUN_PKG_OK) << code.fn().get_last_error();
  return y;
}

std::vector<float> load_f32_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() < 10) return {};
  const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
  std::vector<float> v((all.size() - 10 - hlen) / 4);
  std::memcpy(v.data(), all.data() + 10 + hlen, v.size() * 4);
  return v;
}

// A deterministic weight set and the mlp's forward pass over it, in plain C++.
struct MlpWeights {
  std::vector<float> w1 = std::vector<float>(128 * 64), b1 = std::vector<float>(128), w2 = std::vector<float>(16 * 128),
                     b2 = std::vector<float>(16);
  explicit MlpWeights(float seed) {
    int k = 0;
    for (auto* v : {&w1, &b1, &w2, &b2}) {
      for (float& f : *v) f = std::sin(seed + 0.37f * static_cast<float>(k++)) * 0.1f;
    }
  }
  std::vector<float> forward(const std::vector<float>& x) const {
    std::vector<float> y(64);
    for (int r = 0; r < 4; ++r) {
      float h[128];
      for (int j = 0; j < 128; ++j) {
        double s = b1[j];
        for (int i = 0; i < 64; ++i) s += double(w1[j * 64 + i]) * x[r * 64 + i];
        h[j] = s > 0 ? static_cast<float>(s) : 0.f;
      }
      for (int o = 0; o < 16; ++o) {
        double s = b2[o];
        for (int j = 0; j < 128; ++j) s += double(w2[o * 128 + j]) * h[j];
        y[r * 16 + o] = static_cast<float>(s);
      }
    }
    return y;
  }
};

// Host-side tensors for named constants (kept alive by the test, as the
// runner keeps its own for a container's lifetime).
struct Given {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<aotrun_pkg_constant> list;
  void add(const char* name, std::vector<float>& data, std::vector<int64_t> shape) {
    shapes.push_back(std::move(shape));
    aotrun_pkg_constant c{};
    c.name = name;
    c.tensor.data = data.data();
    c.tensor.device = DLDevice{kDLCPU, 0};
    c.tensor.dtype = DLDataType{kDLFloat, 32, 1};
    list.push_back(c);
  }
  const std::vector<aotrun_pkg_constant>& done() {
    for (size_t i = 0; i < list.size(); ++i) {
      list[i].tensor.ndim = static_cast<int32_t>(shapes[i].size());
      list[i].tensor.shape = shapes[i].data();
    }
    return list;
  }
};

// The internal name of the constant whose original FQN is `fqn`.
std::string internal_name(const PackageCode& code, const std::string& fqn) {
  for (const auto& c : *code.model_constants()) {
    if (c.original_name == fqn) return c.name;
  }
  return "";
}

// The mlp's four constants by their internal names (net.0.weight,
// net.0.bias, net.2.weight, net.2.bias), all given `w`'s values; `w` must
// outlive it.
struct MlpReplacement {
  std::string names[4];
  Given given;
  MlpReplacement(const PackageCode& code, MlpWeights& w)
      : names{internal_name(code, "net.0.weight"), internal_name(code, "net.0.bias"),
              internal_name(code, "net.2.weight"), internal_name(code, "net.2.bias")} {
    given.add(names[0].c_str(), w.w1, {128, 64});
    given.add(names[1].c_str(), w.b1, {128});
    given.add(names[2].c_str(), w.w2, {16, 128});
    given.add(names[3].c_str(), w.b2, {16});
  }
};

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  EXPECT_LE(worst, 1e-5) << what;
}

std::vector<std::string> releases() {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(kFixtures.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind("torch-", 0) == 0) out.push_back(n.substr(6));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int minor_of(const std::string& release) { return std::atoi(release.c_str() + release.find('.') + 1); }

class Release : public testing::TestWithParam<std::string> {};

TEST_P(Release, ListsTheMlpsParameters) {
  REQUIRE_LIBTORCH();
  auto code = open(kFixtures + "/torch-" + GetParam() + "/mlp.pt2");
  Created m = create(*code, {});
  ASSERT_EQ(m.rc, AOTRUN_PKG_OK) << m.message;
  destroy(*code, m.c);
  const std::vector<ConstantInfo>* list = code->model_constants();
  ASSERT_NE(list, nullptr);
  struct Want {
    const char* fqn;
    std::vector<int64_t> shape;
    uint64_t bytes;
  };
  const Want want[] = {{"net.0.weight", {128, 64}, 32768},
                       {"net.0.bias", {128}, 512},
                       {"net.2.weight", {16, 128}, 8192},
                       {"net.2.bias", {16}, 64}};
  ASSERT_EQ(list->size(), 4u);
  for (const Want& w : want) {
    const ConstantInfo* found = nullptr;
    for (const auto& c : *list) found = c.original_name == w.fqn ? &c : found;
    ASSERT_NE(found, nullptr) << w.fqn;
    EXPECT_EQ(found->dtype.code, kDLFloat);
    EXPECT_EQ(found->dtype.bits, 32);
    EXPECT_TRUE(found->shape_known) << w.fqn;
    EXPECT_EQ(found->shape, w.shape) << w.fqn;
    EXPECT_EQ(found->nbytes, w.bytes) << w.fqn;
    EXPECT_FALSE(found->folded);
    EXPECT_NE(found->name, "");
  }
}

TEST_P(Release, ReplacedWeightsGiveTheirOutputsAndLeaveOtherContainersAlone) {
  REQUIRE_LIBTORCH();
  const std::string dir = kFixtures + "/torch-" + GetParam();
  auto code = open(dir + "/mlp.pt2");
  Created plain = create(*code, {});
  ASSERT_EQ(plain.rc, AOTRUN_PKG_OK) << plain.message;
  MlpWeights w(1.5f);
  MlpReplacement all(*code, w);
  const std::string* n = all.names;
  Created replaced = create(*code, all.given.done(), 2);
  if (minor_of(GetParam()) < 7) {
    // torch 2.6: only the std::unordered_map forms, with the old string ABI.
    EXPECT_EQ(replaced.rc, AOTRUN_PKG_ERR_UNSUPPORTED);
    EXPECT_NE(replaced.message.find("pre-C++11 std::string"), std::string::npos) << replaced.message;
    destroy(*code, plain.c);
    return;
  }
  ASSERT_EQ(replaced.rc, AOTRUN_PKG_OK) << replaced.message;
  const std::vector<float> x = load_f32_npy(dir + "/mlp.in0.npy");
  ASSERT_EQ(x.size(), 256u);
  expect_close(run_mlp(*code, replaced.c, x), w.forward(x), "replaced weights");
  // The container made before is untouched: still the exported weights.
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/mlp.out0.npy"), "original container");

  // A partial replacement: W2 = 0 and b2 = v makes every output row v,
  // whatever the first layer's (original) weights are.
  std::vector<float> zeros(16 * 128, 0.f), v(16);
  for (int i = 0; i < 16; ++i) v[i] = 0.25f * static_cast<float>(i) - 1.f;
  Given p;
  p.add(n[2].c_str(), zeros, {16, 128});
  p.add(n[3].c_str(), v, {16});
  Created partial = create(*code, p.done());
  ASSERT_EQ(partial.rc, AOTRUN_PKG_OK) << partial.message;
  std::vector<float> want(64);
  for (int r = 0; r < 4; ++r) std::copy(v.begin(), v.end(), want.begin() + r * 16);
  expect_close(run_mlp(*code, partial.c, x), want, "partial replacement");
  destroy(*code, partial.c);
  destroy(*code, replaced.c);
  // After the replaced container is gone, the first still runs as exported.
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/mlp.out0.npy"), "original container, later");
  destroy(*code, plain.c);
}

// The mlp's four constants are parameters. On aotrun's shim a container of a
// torch 2.13+ model declares them constant (its GEMMs then pack the weights
// once), and so does one created with replacement weights, whose outputs
// stay the replacements' (above); on libtorch, or before 2.13 (no C-ABI list
// of the handles), none is declared and the model runs as before.
TEST_P(Release, DeclaresItsParametersOnAotrunsShimFrom213) {
  REQUIRE_LIBTORCH();
  const std::string dir = kFixtures + "/torch-" + GetParam();
  auto code = open(dir + "/mlp.pt2");
  Created plain = create(*code, {});
  ASSERT_EQ(plain.rc, AOTRUN_PKG_OK) << plain.message;
  const bridge::BridgeContainer* c = bridge::as_container(plain.c);
  ASSERT_NE(c, nullptr);
  const bool aotruns_shim = c->b->shim->last_error != nullptr;  // aotrun_shim_last_error: the shim's own
  const size_t want = aotruns_shim && minor_of(GetParam()) >= 13 ? 4 : 0;
  EXPECT_EQ(c->lib->fn().extract_constants != nullptr, minor_of(GetParam()) >= 13);
  EXPECT_EQ(c->declared_parameters, want) << (aotruns_shim ? "aotrun's shim" : "libtorch");
  const std::vector<float> x = load_f32_npy(dir + "/mlp.in0.npy");
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/mlp.out0.npy"), "exported weights");
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/mlp.out0.npy"), "exported weights, again");
  if (minor_of(GetParam()) >= 7) {
    MlpWeights w(2.5f);
    MlpReplacement all(*code, w);
    Created replaced = create(*code, all.given.done());
    ASSERT_EQ(replaced.rc, AOTRUN_PKG_OK) << replaced.message;
    EXPECT_EQ(bridge::as_container(replaced.c)->declared_parameters, want);
    expect_close(run_mlp(*code, replaced.c, x), w.forward(x), "replaced weights");
    expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/mlp.out0.npy"), "exported weights, beside");
    destroy(*code, replaced.c);
  }
  destroy(*code, plain.c);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Release, testing::ValuesIn(releases()), [](const auto& i) {
  std::string s = "torch_" + i.param;
  for (char& ch : s) ch = ch == '.' ? '_' : ch;
  return s;
});

TEST(Pt2Constants, BadReplacementsAreRefusedNamingTheConstant) {
  REQUIRE_LIBTORCH();
  auto code = open(kFixtures + "/torch-2.15.0/mlp.pt2");
  const Created first = create(*code, {});  // reads the list
  ASSERT_EQ(first.rc, AOTRUN_PKG_OK) << first.message;
  const std::string w2 = internal_name(*code, "net.2.weight");
  std::vector<float> data(16 * 128);
  struct Case {
    const char* name;
    std::vector<int64_t> shape;
    DLDataType dtype;
    int32_t rc;
    const char* says;
  };
  const Case cases[] = {
      {"no_such_weight", {16, 128}, {kDLFloat, 32, 1}, AOTRUN_PKG_ERR_INVALID_ARGUMENT, "has no constant of that name"},
      {w2.c_str(),
       {128, 16},
       {kDLFloat, 32, 1},
       AOTRUN_PKG_ERR_INVALID_ARGUMENT,
       "has shape [128, 16], the model's is [16, 128]"},
      {w2.c_str(), {16, 128}, {kDLInt, 32, 1}, AOTRUN_PKG_ERR_INVALID_ARGUMENT, "another dtype"},
  };
  for (const Case& k : cases) {
    Given g;
    g.add(k.name, data, k.shape);
    g.list[0].tensor.dtype = k.dtype;
    Created r = create(*code, g.done());
    EXPECT_EQ(r.rc, k.rc) << k.name;
    EXPECT_NE(r.message.find(k.says), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(k.name), std::string::npos) << r.message;
    destroy(*code, r.c);  // none when refused
  }
  Given twice;
  twice.add(w2.c_str(), data, {16, 128});
  twice.add(w2.c_str(), data, {16, 128});
  Created r = create(*code, twice.done());
  EXPECT_EQ(r.rc, AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("given twice"), std::string::npos) << r.message;
  destroy(*code, r.c);
  destroy(*code, first.c);
}

// The external-constants fixture (binary blob, torch 2.15): its weights are
// mapped from the archive and pointed to, not copied; it runs as eager
// PyTorch did, and takes replacements like any other.
TEST(Pt2Constants, BinaryBlobWeightsRunInPlaceAndCanBeReplaced) {
  REQUIRE_LIBTORCH();
  const std::string dir = std::string(AOTRUN_PT2_EXTERNAL) + "/torch-2.15.0";
  auto code = open(dir + "/mlp_blob.pt2");
  Created plain = create(*code, {});
  ASSERT_EQ(plain.rc, AOTRUN_PKG_OK) << plain.message;
  ASSERT_NE(code->model_constants(), nullptr);
  ASSERT_EQ(code->model_constants()->size(), 4u);
  EXPECT_EQ(internal_name(*code, "l1.weight"), "l1_weight");
  const std::vector<float> x = load_f32_npy(dir + "/input.arg4_1.npy");
  ASSERT_EQ(x.size(), 256u);
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/reference/output0.npy"), "blob weights");
  MlpWeights w(0.5f);
  Given g;
  g.add("l1_weight", w.w1, {128, 64});
  g.add("l1_bias", w.b1, {128});
  g.add("l2_weight", w.w2, {16, 128});
  g.add("l2_bias", w.b2, {16});
  Created replaced = create(*code, g.done());
  ASSERT_EQ(replaced.rc, AOTRUN_PKG_OK) << replaced.message;
  expect_close(run_mlp(*code, replaced.c, x), w.forward(x), "replaced blob weights");
  expect_close(run_mlp(*code, plain.c, x), load_f32_npy(dir + "/reference/output0.npy"), "blob weights, later");
  destroy(*code, replaced.c);
  destroy(*code, plain.c);
}

// The pickled-weights fixtures (package_constants_on_disk=True in 2.8,
// format "pickle_weights" from 2.10): each weight file is read by the
// strict torch.save reader and its storage pointed to where it lies in the
// archive; the model runs as eager PyTorch did and takes replacements.
class Pt2PickledWeights : public ::testing::TestWithParam<const char*> {};

TEST_P(Pt2PickledWeights, RunFromTheArchiveAndCanBeReplaced) {
  REQUIRE_LIBTORCH();
  const std::string dir = std::string(AOTRUN_PT2_EXTERNAL) + "/" + GetParam();
  if (::access((dir + "/mlp_pickle.pt2").c_str(), R_OK) != 0) GTEST_SKIP() << "no fixture in " << dir;
  auto code = open(dir + "/mlp_pickle.pt2");
  Created plain = create(*code, {});
  ASSERT_EQ(plain.rc, AOTRUN_PKG_OK) << plain.message;
  ASSERT_NE(code->model_constants(), nullptr);
  ASSERT_EQ(code->model_constants()->size(), 4u);
  const std::vector<float> x = load_f32_npy(dir + "/input.arg4_1.npy");
  const std::vector<float> ref = load_f32_npy(dir + "/reference/output0.npy");
  expect_close(run_mlp(*code, plain.c, x), ref, "pickled weights");
  MlpWeights w(0.25f);
  Given g;
  g.add("l2_weight", w.w2, {16, 128});  // one replaced, the others from the archive
  Created replaced = create(*code, g.done());
  ASSERT_EQ(replaced.rc, AOTRUN_PKG_OK) << replaced.message;
  EXPECT_NE(run_mlp(*code, replaced.c, x), ref);
  expect_close(run_mlp(*code, plain.c, x), ref, "pickled weights, later");
  destroy(*code, replaced.c);
  destroy(*code, plain.c);
}

INSTANTIATE_TEST_SUITE_P(Releases, Pt2PickledWeights,
                         ::testing::Values("torch-2.8.0", "torch-2.9.0", "torch-2.11.0", "torch-2.15.0"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

// A copy of the archive at `src` in a new file, changed by `edit` (libzip).
template <typename Edit>
std::string rewritten(const std::string& src, const char* tag, Edit&& edit) {
  const std::string dst = ::testing::TempDir() + "/pickled_" + tag + ".pt2";
  {
    std::ifstream in(src, std::ios::binary);
    std::ofstream out(dst, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  int err = 0;
  zip_t* z = zip_open(dst.c_str(), 0, &err);
  EXPECT_NE(z, nullptr) << dst;
  if (z == nullptr) return dst;
  edit(z);
  EXPECT_EQ(zip_close(z), 0) << zip_strerror(z);
  return dst;
}

zip_int64_t entry(zip_t* z, const std::string& suffix) {
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    const std::string name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (aotrun::ends_with(name, suffix)) return i;
  }
  ADD_FAILURE() << "no entry " << suffix;
  return -1;
}

void replace_entry(zip_t* z, const std::string& suffix, const std::string& bytes) {
  // libzip copies the buffer when it writes the archive (zip_close): kept alive until then.
  static std::vector<std::string> keep;
  keep.push_back(bytes);
  zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
  ASSERT_EQ(zip_file_replace(z, static_cast<zip_uint64_t>(entry(z, suffix)), src, 0), 0) << zip_strerror(z);
}

std::pair<Code, std::string> open_refusal(const std::string& path) {
  try {
    open(path);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {Code::Ok, "opened"};
}

// Pickled weights compressed (torch stores them; any zip tool may not) are
// copied out, aligned, and run the same; damaged ones are refused at open,
// naming the file and what is wrong.
TEST(Pt2PickledWeightsArchive, CompressedRunsAndDamagedIsRefusedAtOpen) {
  REQUIRE_LIBTORCH();
  const std::string dir = std::string(AOTRUN_PT2_EXTERNAL) + "/torch-2.15.0";
  const std::string src = dir + "/mlp_pickle.pt2";
  const std::string deflated = rewritten(src, "deflated", [](zip_t* z) {
    for (const char* w : {"weight_0", "weight_1", "weight_2", "weight_3"}) {
      EXPECT_EQ(zip_set_file_compression(z, static_cast<zip_uint64_t>(entry(z, std::string("/data/weights/") + w)),
                                         ZIP_CM_DEFLATE, 9),
                0);
    }
  });
  {
    auto code = open(deflated);
    Created c = create(*code, {});
    ASSERT_EQ(c.rc, AOTRUN_PKG_OK) << c.message;
    expect_close(run_mlp(*code, c.c, load_f32_npy(dir + "/input.arg4_1.npy")),
                 load_f32_npy(dir + "/reference/output0.npy"), "deflated pickled weights");
    destroy(*code, c.c);
  }
  struct Case {
    const char* tag;
    std::function<void(zip_t*)> edit;
    Code code;
    const char* says;
  };
  const Case cases[] = {
      {"truncated", [](zip_t* z) { replace_entry(z, "/data/weights/weight_3", std::string(700, 'P')); },
       Code::BadPackage, "data/weights/weight_3 is not a torch.save archive"},
      {"missing_file", [](zip_t* z) { zip_delete(z, static_cast<zip_uint64_t>(entry(z, "/data/weights/weight_1"))); },
       Code::BadPackage, "names the weight file 'mlp_pickle/data/weights/weight_1', which the archive lacks"},
      {"bad_config",
       [](zip_t* z) { replace_entry(z, "/weights_config.json", R"({"l1.weight": ["weight_0", [128, 64], [64, 1]]})"); },
       Code::BadPackage, "constant 'l1.weight' is not [file, shape, stride, storage_offset]"},
      {"past_storage",
       [](zip_t* z) {
         replace_entry(z, "/weights_config.json",
                       R"({"l1.weight": ["weight_0", [128, 64], [64, 1], 1], "l1.bias": ["weight_1", [128], [1], 0],)"
                       R"( "l2.weight": ["weight_2", [16, 128], [128, 1], 0], "l2.bias": ["weight_3", [16], [1], 0]})");
       },
       Code::BadPackage, "constant 'l1.weight' reaches past its storage"},
      {"traversal",
       [](zip_t* z) { replace_entry(z, "/weights_config.json", R"({"l1.bias": ["../x", [128], [1], 0]})"); },
       Code::BadPackage, "not a plain file name"},
  };
  for (const auto& c : cases) {
    const auto [code, message] = open_refusal(rewritten(src, c.tag, c.edit));
    EXPECT_EQ(code, c.code) << c.tag << ": " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.tag << ": " << message;
  }
  // A config that lacks a constant opens (the list is the model's) but no
  // container is created without it.
  auto code = open(rewritten(src, "lacks_constant", [](zip_t* z) {
    replace_entry(z, "/weights_config.json",
                  R"({"l1.weight": ["weight_0", [128, 64], [64, 1], 0], "l1.bias": ["weight_1", [128], [1], 0],)"
                  R"( "l2.weight": ["weight_2", [16, 128], [128, 1], 0]})");
  }));
  Created r = create(*code, {});
  EXPECT_EQ(r.rc, AOTRUN_PKG_ERR_INVALID_ARGUMENT);  // the runner reports it as BAD_PACKAGE
  EXPECT_NE(r.message.find("has no entry for constant 'l2.bias'"), std::string::npos) << r.message;
  // Strides the model was not compiled for: refused, as a wrong shape is.
  auto strided = open(rewritten(src, "other_stride", [](zip_t* z) {
    replace_entry(z, "/weights_config.json",
                  R"({"l1.weight": ["weight_0", [128, 64], [1, 128], 0], "l1.bias": ["weight_1", [128], [1], 0],)"
                  R"( "l2.weight": ["weight_2", [16, 128], [128, 1], 0], "l2.bias": ["weight_3", [16], [1], 0]})");
  }));
  r = create(*strided, {});
  EXPECT_EQ(r.rc, AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("gives constant 'l1.weight' another shape or stride"), std::string::npos) << r.message;
  for (const char* tag : {"other_stride", "deflated", "truncated", "missing_file", "bad_config", "past_storage",
                          "traversal", "lacks_constant"}) {
    std::remove((::testing::TempDir() + "/pickled_" + tag + ".pt2").c_str());
  }
}

// Child mode of the test below, before gtest starts: open the archive named by
// AOTRUN_TEST_OPEN_AND_WAIT (its extraction goes under $AOTRUN_TMPDIR), create
// a container, say so on stdout, and wait to be killed.
const bool kChild = [] {
  const char* path = std::getenv("AOTRUN_TEST_OPEN_AND_WAIT");
  if (path == nullptr) return false;
  try {
    auto code = open(path);
    Created c = create(*code, {});
    std::printf(c.rc == AOTRUN_PKG_OK ? "opened\n" : "create failed\n");
  } catch (const std::exception& e) {
    std::printf("open failed: %s\n", e.what());
  }
  std::fflush(stdout);
  for (;;) ::pause();
}();

bool empty_dir(const std::string& dir, std::string* first) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool empty = true;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      *first = e->d_name;
    }
  }
  ::closedir(d);
  return empty;
}

TEST(Pt2PrivateDir, NothingIsLeftBehindWhenAProcessIsKilledAfterOpen) {
  REQUIRE_LIBTORCH();
  char base[] = "/tmp/aotrun-pt2-kill-XXXXXX";
  ASSERT_NE(::mkdtemp(base), nullptr);
  for (const char* archive : {"/torch-2.15.0/mlp.pt2", "/torch-2.6.0/mlp.pt2"}) {
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      ::setenv("AOTRUN_TEST_OPEN_AND_WAIT", (kFixtures + archive).c_str(), 1);
      ::setenv("AOTRUN_TMPDIR", base, 1);
      ::execl("/proc/self/exe", "pt2_constants_tests", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    char line[256] = {};
    const ssize_t n = ::read(out[0], line, sizeof line - 1);  // blocks until the child has opened
    ::close(out[0]);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_GT(n, 0);
    EXPECT_EQ(std::string(line), "opened\n") << archive;
    std::string left;
    EXPECT_TRUE(empty_dir(base, &left)) << archive << ": '" << left << "' left in " << base;
  }
  ::rmdir(base);
}

}  // namespace
}  // namespace aotrun::pt2
