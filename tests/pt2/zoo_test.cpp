// The model zoo (issues #26 and #28): real architectures exported with torch
// 2.15 (tests/pt2/zoo/export_zoo.py, random weights) swept over every size
// of every dynamic dim from the declared minimum to the declared maximum, in
// every mode, against eager PyTorch run at that size:
//   resnet                     timm's ResNet (resnet18's topology, narrow)
//   mobilenet                  torchvision's MobileNetV3-small, channels_last
//   vit                        timm's VisionTransformer
//   clip                       transformers' CLIPModel: keyword inputs, two
//                              independent dims (texts x images)
//   bert_named                 transformers' BertModel: keyword inputs, its
//                              own ModelOutput, batch x seq
//   bert_bf16                  bert_named in bfloat16
//   gpt2, llama                transformers' GPT2LMHeadModel and
//                              LlamaForCausalLM (grouped-query attention):
//                              keyword inputs, logits, batch x seq
// What the manifest (tests/pt2/zoo/manifest.json) says of each case is what
// is asserted: "run" (in the compiled range: equals eager), "pad_batch" (a
// batch of independent rows below the compiled minimum: refused naming the
// input, then right with pad_batch) or "refused" (outside the compiled range
// otherwise: INVALID_ARGUMENT naming the input, e.g. resnet's batch 16..32,
// which torch compiled for [2, 15]: tests/pt2/zoo/README.md says why).
// Graph mode captures every size and replays it. Sizes above the compiled
// maximum that torch narrowed for a heuristic (resnet, mobilenet) are also
// run with pt2_above_compiled_max and equal eager (docs/PT2.md, "Upper
// bounds"). Under the sanitizers (AOTRUN_ZOO_STRIDE > 1) the sizes that run
// are sampled: every AOTRUN_ZOO_STRIDE-th, and each dim's compiled minimum
// and maximum; the other stages run every size. Provider: AOTRUN_LIBTORCH
// (libtorch, skipped without) or, in the shim.* variant, aotrun's own shim.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../core/test_util.hpp"
#include "../shim/npy.hpp"

using namespace aotrun_test;

#ifndef AOTRUN_ZOO_STRIDE
#define AOTRUN_ZOO_STRIDE 1
#endif

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

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// An input at one case's sizes: the leading block of the stored input (the
// first n entries of each dynamic dim), row-major, or in NHWC memory with
// channels_last strides.
struct Input {
  std::vector<int64_t> shape, strides;
  std::vector<char> bytes;
  DLDataType dtype{};
  DLTensor dl() {
    return DLTensor{bytes.data(),
                    {kDLCPU, 0},
                    static_cast<int>(shape.size()),
                    dtype,
                    shape.data(),
                    strides.empty() ? nullptr : strides.data(),
                    0};
  }
};

Input leading_block(const Npy& src, const std::vector<int64_t>& shape, size_t elem) {
  Input in;
  in.shape = shape;
  in.bytes.resize(static_cast<size_t>(numel(shape)) * elem);
  const size_t rank = shape.size();
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) src_stride[d] = src_stride[d + 1] * src.shape[d + 1];
  // Copy innermost rows whole.
  const int64_t row = rank ? shape[rank - 1] : 1;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t out = 0; out < numel(shape); out += row) {
    int64_t off = 0;
    for (size_t d = 0; d + 1 < rank; ++d) off += idx[d] * src_stride[d];
    std::memcpy(in.bytes.data() + out * elem, src.data.data() + off * elem, static_cast<size_t>(row) * elem);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return in;
}

// The same NCHW float tensor in NHWC memory: strides [H*W*C, 1, W*C, C].
Input to_channels_last(const Input& x) {
  Input y = x;
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  y.strides = {h * w * c, 1, w * c, c};
  const float* s = reinterpret_cast<const float*>(x.bytes.data());
  float* d = reinterpret_cast<float*>(y.bytes.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t yy = 0; yy < h; ++yy)
        for (int64_t xx = 0; xx < w; ++xx)
          d[i * h * w * c + yy * w * c + xx * c + ch] = s[((i * c + ch) * h + yy) * w + xx];
  return y;
}

// Within rtol/atol (the manifest's per output: torch.testing.assert_close's
// float32 defaults, or its bfloat16 rtol with the atol a compiled bfloat16
// model keeps from eager, export_zoo.py); "" when close, else where and by
// how much.
std::string close(const float* got, const float* want, int64_t n, double rtol, double atol) {
  double worst = 0;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double a = got[i], b = want[i];
    const double diff = std::fabs(a - b);
    if (!(diff <= atol + rtol * std::fabs(b))) {
      if (first < 0) first = i;
      ++bad;
    }
    if (diff > worst || std::isnan(diff)) worst = diff;
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(n) + " elements differ, first at " + std::to_string(first) +
         " (got " + std::to_string(got[first]) + ", eager " + std::to_string(want[first]) + "), max abs diff " +
         std::to_string(worst);
}

struct Case {
  std::map<std::string, int64_t> sizes;
  std::string expect;  // run, pad_batch, refused
  std::vector<std::string> outside;
  std::vector<std::vector<int64_t>> out_shapes;
  std::vector<int64_t> out_offsets;  // into each output's references
  std::string label() const {
    std::string s;
    for (const auto& [d, n] : sizes) s += (s.empty() ? "" : ", ") + d + " " + std::to_string(n);
    return s;
  }
};

struct InputInfo {
  std::string name, placeholder, layout;
  Npy data;
  size_t elem = 4;
  DLDataType dtype{};
  std::map<int, std::string> dims;  // axis -> dim name
};

class Zoo : public ::testing::TestWithParam<std::tuple<std::string, aotrun_mode>> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
    name_ = std::get<0>(GetParam());
    mode_ = std::get<1>(GetParam());
    const nlohmann::json m = manifest();
    ASSERT_FALSE(m.is_discarded()) << kDir << "/manifest.json";
    info_ = m["models"][name_];
    for (const auto& i : info_["inputs"]) {
      InputInfo x;
      x.name = i["name"];
      x.placeholder = i["placeholder"];
      x.layout = i["layout"];
      x.data = read_npy(kDir + "/" + i["file"].get<std::string>());
      if (x.data.descr == "<i8") {
        x.dtype = DLDataType{kDLInt, 64, 1};
        x.elem = 8;
      } else {
        ASSERT_EQ(x.data.descr, "<f4") << x.name;
        x.dtype = DLDataType{kDLFloat, 32, 1};
      }
      for (const auto& [axis, dim] : i["dims"].items()) x.dims[std::stoi(axis)] = dim;
      other_layout_ |= x.layout != "contiguous";
      inputs_.push_back(std::move(x));
    }
    for (const auto& o : info_["outputs"]) {
      output_names_.push_back(o["name"]);
      out_dtypes_.push_back(o.value("dtype", "float32") == "bfloat16" ? DLDataType{kDLBfloat, 16, 1}
                                                                      : DLDataType{kDLFloat, 32, 1});
      out_tol_.emplace_back(o.value("rtol", 1.3e-6), o.value("atol", 1e-5));
      const Npy n = read_npy(kDir + "/" + o["file"].get<std::string>());
      ASSERT_EQ(n.descr, "<f4") << o["file"];
      refs_.emplace_back(reinterpret_cast<const float*>(n.data.data()),
                         reinterpret_cast<const float*>(n.data.data()) + n.numel());
    }
    std::vector<int64_t> offsets(refs_.size(), 0);
    for (const auto& c : info_["cases"]) {
      Case k;
      for (const auto& [d, n] : c["sizes"].items()) k.sizes[d] = n;
      k.expect = c["expect"];
      if (c.contains("outside_compiled")) k.outside = c["outside_compiled"].get<std::vector<std::string>>();
      for (size_t j = 0; j < refs_.size(); ++j) {
        k.out_shapes.push_back(c["outputs"][j].get<std::vector<int64_t>>());
        k.out_offsets.push_back(offsets[j]);
        offsets[j] += numel(k.out_shapes.back());
      }
      cases_.push_back(std::move(k));
    }
    for (size_t j = 0; j < refs_.size(); ++j) {
      ASSERT_EQ(offsets[j], static_cast<int64_t>(refs_[j].size())) << "references of output " << j;
    }
    const std::string path = kDir + "/" + info_["archive"].get<std::string>();
    pkg_ = std::make_unique<Package>(path);
    runner_ = std::make_unique<Runner>(*pkg_, options());
    if (info_["batch_rows"].get<bool>()) {
      padded_pkg_ = std::make_unique<Package>(path, PackageOptions().pt2_pad_batch(true));
      padded_ = std::make_unique<Runner>(*padded_pkg_, options());
    }
    above_pkg_ = std::make_unique<Package>(path, PackageOptions().pt2_above_compiled_max(true));
    above_ = std::make_unique<Runner>(*above_pkg_, options());
  }

  // Whether the sweep runs case `index` (every case, unless sampled under
  // the sanitizers: see the top of this file).
  bool sampled(const Case& c, size_t index) const {
    if (AOTRUN_ZOO_STRIDE <= 1 || c.expect != "run" || index % AOTRUN_ZOO_STRIDE == 0) return true;
    for (const auto& [dim, r] : info_["dims"].items()) {
      const nlohmann::json& k = r["compiled"];
      const int64_t n = c.sizes.at(dim);
      if ((!k[0].is_null() && n == k[0].get<int64_t>()) || (!k[1].is_null() && n == k[1].get<int64_t>()) ||
          (k[1].is_null() && n == r["declared"][1].get<int64_t>()))
        return true;
    }
    return false;
  }

  // Whether every dim of `c` outside its compiled range is above it (what
  // pt2_above_compiled_max runs).
  bool only_above(const Case& c) const {
    if (c.outside.empty()) return false;
    for (const std::string& d : c.outside) {
      const nlohmann::json& k = info_["dims"][d]["compiled"];
      if (k[1].is_null() || c.sizes.at(d) <= k[1].get<int64_t>()) return false;
    }
    return true;
  }

  // Graph mode captures every size on its first run (no eager warm-up) and
  // keeps them all: each size's first run is its capture, the second a
  // replay (runs() below).
  RunnerOptions options() const {
    RunnerOptions o;
    o.mode(mode_);
    if (mode_ == AOTRUN_MODE_GRAPH) o.graph_warmup_runs(0).graph_cache_limit(4096);
    return o;
  }
  int runs() const { return mode_ == AOTRUN_MODE_GRAPH ? 2 : 1; }

  // The case's inputs (row-major, or channels_last for the inputs compiled
  // for it when `model_layout`).
  std::vector<Input> inputs_for(const Case& c, bool model_layout) {
    std::vector<Input> out;
    for (const InputInfo& x : inputs_) {
      std::vector<int64_t> shape = x.data.shape;
      for (const auto& [axis, dim] : x.dims) shape[static_cast<size_t>(axis)] = c.sizes.at(dim);
      Input in = leading_block(x.data, shape, x.elem);
      in.dtype = x.dtype;
      if (model_layout && x.layout == "channels_last") in = to_channels_last(in);
      out.push_back(std::move(in));
    }
    return out;
  }

  struct Outputs {
    std::vector<std::vector<char>> data;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<DLTensor> dl;
  };
  // Output buffers in each output's dtype, filled with NaN.
  Outputs outputs_for(const Case& c) const {
    Outputs o;
    o.shapes = c.out_shapes;
    for (size_t j = 0; j < o.shapes.size(); ++j) {
      const bool bf16 = out_dtypes_[j].code == kDLBfloat;
      const size_t n = static_cast<size_t>(numel(o.shapes[j]));
      o.data.emplace_back(n * (bf16 ? 2 : 4));
      for (size_t i = 0; i < n; ++i) {
        if (bf16) {
          const uint16_t nan = 0x7fc0;
          std::memcpy(o.data[j].data() + i * 2, &nan, 2);
        } else {
          const float nan = NAN;
          std::memcpy(o.data[j].data() + i * 4, &nan, 4);
        }
      }
      o.dl.push_back(DLTensor{o.data[j].data(),
                              {kDLCPU, 0},
                              static_cast<int>(o.shapes[j].size()),
                              out_dtypes_[j],
                              o.shapes[j].data(),
                              nullptr,
                              0});
    }
    return o;
  }

  Outcome run(Runner& r, std::vector<Input>& in, Outputs* out) {
    std::vector<DLTensor> dl;
    for (Input& x : in) dl.push_back(x.dl());
    return outcome(aotrun_runner_run(r.get(), dl.data(), dl.size(), out->dl.data(), out->dl.size()));
  }

  // Every output equals eager PyTorch's at this case's sizes.
  // (bfloat16 outputs are read as the float32 numbers they are.)
  void expect_eager(const Case& c, const std::vector<const void*>& got, const std::string& how) {
    for (size_t j = 0; j < refs_.size(); ++j) {
      const int64_t n = numel(c.out_shapes[j]);
      std::vector<float> as_float(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        if (out_dtypes_[j].code == kDLBfloat) {
          uint16_t b;
          std::memcpy(&b, static_cast<const char*>(got[j]) + i * 2, 2);
          const uint32_t bits = static_cast<uint32_t>(b) << 16;
          std::memcpy(&as_float[static_cast<size_t>(i)], &bits, 4);
        } else {
          std::memcpy(&as_float[static_cast<size_t>(i)], static_cast<const char*>(got[j]) + i * 4, 4);
        }
      }
      EXPECT_EQ(close(as_float.data(), refs_[j].data() + c.out_offsets[j], n, out_tol_[j].first, out_tol_[j].second),
                "")
          << name_ << " " << c.label() << " (" << how << "), output " << j << " '" << output_names_[j] << "'";
    }
  }
  void expect_eager(const Case& c, const Outputs& o, const std::string& how) {
    std::vector<const void*> got;
    for (const auto& d : o.data) got.push_back(d.data());
    expect_eager(c, got, how);
  }

  // The shape query and run_alloc on one case: shapes as eager's, values
  // equal to eager's.
  void query_and_alloc(Runner& r, const Case& c, const std::string& how) {
    std::vector<Input> in = inputs_for(c, false);
    std::vector<DLTensor> dl;
    for (Input& x : in) dl.push_back(x.dl());
    std::vector<int64_t> shapes(64, -7);
    AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(r.get(), dl.data(), dl.size(), shapes.data(), shapes.size()));
    size_t at = 0;
    for (size_t j = 0; j < c.out_shapes.size(); ++j) {
      const std::vector<int64_t> got(shapes.begin() + static_cast<long>(at),
                                     shapes.begin() + static_cast<long>(at + c.out_shapes[j].size()));
      EXPECT_EQ(got, c.out_shapes[j]) << name_ << " " << c.label() << " (" << how << "), output " << j;
      at += c.out_shapes[j].size();
    }
    std::vector<DLManagedTensor*> owned(c.out_shapes.size(), nullptr);
    AOTRUN_ASSERT_OK(aotrun_runner_run_alloc(r.get(), dl.data(), dl.size(), owned.data(), owned.size()));
    std::vector<const void*> got;
    for (size_t j = 0; j < owned.size(); ++j) {
      ASSERT_NE(owned[j], nullptr);
      const DLTensor& t = owned[j]->dl_tensor;
      EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + t.ndim), c.out_shapes[j]) << "run_alloc output " << j;
      if (t.strides != nullptr) {  // compact row-major, or say so
        int64_t s = 1;
        for (int d = t.ndim; d-- > 0;) {
          if (t.shape[d] != 1) {
            EXPECT_EQ(t.strides[d], s) << "run_alloc output " << j << " dim " << d;
          }
          s *= t.shape[d];
        }
      }
      EXPECT_EQ(t.dtype.code, out_dtypes_[j].code) << "run_alloc output " << j;
      EXPECT_EQ(t.dtype.bits, out_dtypes_[j].bits) << "run_alloc output " << j;
      got.push_back(static_cast<const char*>(t.data) + t.byte_offset);
    }
    expect_eager(c, got, how + ", run_alloc");
    for (DLManagedTensor* t : owned)
      if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }

  // The refusal names an input that carries a dim outside its compiled
  // range, the dim, its size and that range.
  void expect_refusal_names_input(const Outcome& o, const Case& c, const std::string& how) {
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << name_ << " " << c.label() << " (" << how << "): " << o.message;
    bool named = false;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      for (const auto& [axis, dim] : inputs_[i].dims) {
        for (const std::string& d : c.outside) {
          if (d != dim) continue;
          const nlohmann::json& r = info_["dims"][d]["compiled"];
          const std::string said =
              "input " + std::to_string(i) + " ('" + inputs_[i].placeholder + "'): dim " + std::to_string(axis) +
              " is " + std::to_string(c.sizes.at(d)) + ", outside the range the model was compiled for [" +
              std::to_string(r[0].get<int64_t>()) + ", " + std::to_string(r[1].get<int64_t>()) + "]";
          if (o.message.find(said) != std::string::npos) named = true;
        }
      }
    }
    EXPECT_TRUE(named) << name_ << " " << c.label() << " (" << how << "): " << o.message;
  }

  std::string name_;
  aotrun_mode mode_{};
  nlohmann::json info_;
  std::vector<InputInfo> inputs_;
  bool other_layout_ = false;  // an input compiled for a layout other than row-major
  std::vector<std::string> output_names_;
  std::vector<std::vector<float>> refs_;
  std::vector<DLDataType> out_dtypes_;              // per output
  std::vector<std::pair<double, double>> out_tol_;  // rtol, atol per output
  std::vector<Case> cases_;
  std::unique_ptr<Package> pkg_, padded_pkg_, above_pkg_;
  std::unique_ptr<Runner> runner_, padded_, above_;
};

// The archive's inputs are the manifest's, in its order, dtypes and ranks,
// each dynamic dim dynamic.
TEST_P(Zoo, SpecsAreTheManifests) {
  ASSERT_EQ(pkg_->info().num_inputs, inputs_.size());
  ASSERT_EQ(pkg_->info().num_outputs, refs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const aotrun_tensor_info t = pkg_->input(i);
    EXPECT_EQ(std::string(t.name), inputs_[i].placeholder) << i;
    EXPECT_EQ(t.dtype.code, inputs_[i].dtype.code) << inputs_[i].name;
    EXPECT_EQ(t.dtype.bits, inputs_[i].dtype.bits) << inputs_[i].name;
    ASSERT_EQ(t.ndim, static_cast<int32_t>(inputs_[i].data.shape.size())) << inputs_[i].name;
    for (int d = 0; d < t.ndim; ++d) {
      const bool dynamic = inputs_[i].dims.count(d) != 0;
      EXPECT_EQ(t.shape[d], dynamic ? -1 : inputs_[i].data.shape[static_cast<size_t>(d)])
          << inputs_[i].name << " dim " << d;
    }
  }
  for (size_t j = 0; j < refs_.size(); ++j) {
    EXPECT_EQ(pkg_->output(j).ndim, static_cast<int32_t>(cases_.back().out_shapes[j].size())) << output_names_[j];
  }
  // The model's own names (docs/PT2.md, "Names"): keyword inputs and dict or
  // ModelOutput keys as exported; positional inputs and a plain tensor
  // output keep their placeholders.
  const bool keywords = info_["keywords"].get<bool>();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    EXPECT_EQ(pkg_->input_model_name(i), keywords ? inputs_[i].name : inputs_[i].placeholder) << i;
  }
  for (size_t j = 0; j < refs_.size(); ++j) {
    const std::string own = output_names_[j].empty() ? std::string(pkg_->output(j).name) : output_names_[j];
    EXPECT_EQ(pkg_->output_model_name(j), own) << j;
  }
}

// Every case of the sweep, as the manifest expects it.
TEST_P(Zoo, EverySizeInTheDeclaredRange) {
  const bool threaded = mode_ == AOTRUN_MODE_THREADED;
  int ran = 0, padded = 0, refused = 0, above = 0;
  const Case* top = nullptr;  // the largest case that runs
  bool queried_plain = false, queried_padded = false;
  for (size_t index = 0; index < cases_.size(); ++index) {
    const Case& c = cases_[index];
    if (!sampled(c, index)) continue;
    SCOPED_TRACE(name_ + " " + c.label());
    std::vector<Input> in = inputs_for(c, false);
    Outputs out = outputs_for(c);
    const Outcome o = run(*runner_, in, &out);
    if (c.expect == "run") {
      ASSERT_EQ(o.code, AOTRUN_OK) << c.label() << ": " << o.message;
      expect_eager(c, out, "row-major");
      for (int again = 1; again < runs(); ++again) {  // graph replay
        Outputs out2 = outputs_for(c);
        const Outcome o2 = run(*runner_, in, &out2);
        ASSERT_EQ(o2.code, AOTRUN_OK) << c.label() << " replay: " << o2.message;
        expect_eager(c, out2, "row-major, replay");
      }
      // An input compiled for channels_last, handed in that layout too.
      for (int again = 0; other_layout_ && again < runs(); ++again) {
        std::vector<Input> cl = inputs_for(c, true);
        Outputs out2 = outputs_for(c);
        const Outcome o2 = run(*runner_, cl, &out2);
        ASSERT_EQ(o2.code, AOTRUN_OK) << c.label() << " channels_last: " << o2.message;
        expect_eager(c, out2, again ? "channels_last, replay" : "channels_last");
      }
      if (threaded && !queried_plain) {
        query_and_alloc(*runner_, c, "smallest compiled size");
        queried_plain = true;
      }
      top = &c;
      ++ran;
    } else if (c.expect == "pad_batch") {
      expect_refusal_names_input(o, c, "without pad_batch");
      EXPECT_NE(o.message.find("pad_batch"), std::string::npos) << o.message;
      ASSERT_NE(padded_, nullptr) << "the manifest pads a model whose rows it does not call independent";
      for (bool model_layout : {false, true}) {
        for (int again = 0; (other_layout_ || !model_layout) && again < runs(); ++again) {
          std::vector<Input> in2 = inputs_for(c, model_layout);
          Outputs out2 = outputs_for(c);
          const Outcome p = run(*padded_, in2, &out2);
          ASSERT_EQ(p.code, AOTRUN_OK) << c.label() << " with pad_batch: " << p.message;
          expect_eager(
              c, out2,
              std::string(model_layout ? "pad_batch, model's layout" : "pad_batch") + (again ? ", replay" : ""));
        }
      }
      if (threaded && !queried_padded) {
        query_and_alloc(*padded_, c, "pad_batch");
        queried_padded = true;
      }
      ++padded;
    } else {
      ASSERT_EQ(c.expect, "refused");
      expect_refusal_names_input(o, c, "outside the compiled range");
      // Nothing written to the outputs.
      ASSERT_EQ(out.data, outputs_for(c).data) << "a refused run wrote its outputs (they were NaN)";
      ++refused;
      // Above a maximum torch narrowed: the option says what to do, and
      // with it the model computes eager's numbers.
      if (only_above(c)) {
        EXPECT_NE(o.message.find("pt2_above_compiled_max"), std::string::npos) << o.message;
        for (int again = 0; again < runs(); ++again) {
          Outputs out2 = outputs_for(c);
          const Outcome a = run(*above_, in, &out2);
          ASSERT_EQ(a.code, AOTRUN_OK) << c.label() << " with pt2_above_compiled_max: " << a.message;
          expect_eager(c, out2, again ? "pt2_above_compiled_max, replay" : "pt2_above_compiled_max");
        }
        ++above;
      } else {
        // Below a minimum: the option changes nothing.
        Outputs out2 = outputs_for(c);
        expect_refusal_names_input(run(*above_, in, &out2), c, "below the compiled range, with the option");
      }
    }
  }
  ASSERT_NE(top, nullptr) << "no size of " << name_ << " ran";
  if (threaded) {
    SCOPED_TRACE(name_ + " largest " + top->label());
    query_and_alloc(*runner_, *top, "largest size that runs");
  }
  // The top of the compiled range ran: each dynamic dim's compiled maximum
  // (the declared one where torch kept it) is reached by some case that ran.
  for (const auto& [dim, r] : info_["dims"].items()) {
    const int64_t compiled_max =
        r["compiled"][1].is_null() ? r["declared"][1].get<int64_t>() : r["compiled"][1].get<int64_t>();
    bool reached = false;
    for (const Case& c : cases_)
      if (c.expect == "run" && c.sizes.at(dim) == compiled_max) reached = true;
    EXPECT_TRUE(reached) << name_ << ": no case at " << dim << " " << compiled_max << " ran";
  }
  RecordProperty("ran", ran);
  RecordProperty("padded", padded);
  RecordProperty("refused", refused);
  RecordProperty("above_compiled_max", above);
  if (mode_ == AOTRUN_MODE_GRAPH) {
    // Every size that ran was captured once and replayed.
    const aotrun_runner_stats st = runner_->stats();
    EXPECT_EQ(st.effective_mode, AOTRUN_MODE_GRAPH) << st.fallback_reason;
    EXPECT_GE(st.graph_captures, static_cast<uint64_t>(ran));
    EXPECT_GE(st.graph_replays, static_cast<uint64_t>(ran));
    EXPECT_EQ(st.eager_cache_full, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(zoo, Zoo,
                         ::testing::Combine(::testing::ValuesIn(zoo_models()),
                                            ::testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED,
                                                              AOTRUN_MODE_GRAPH)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, aotrun_mode>>& i) {
                           const aotrun_mode m = std::get<1>(i.param);
                           return std::get<0>(i.param) + "_" +
                                  (m == AOTRUN_MODE_SINGLE_THREADED ? "single" : aotrun_mode_name(m));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Zoo);

}  // namespace
