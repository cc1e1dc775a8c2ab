// What aotrun reads out of a model's generated C++ about valid requests
// (issue #29): the tables integer inputs index (IndexChecks) and the dims
// that must agree (SymbolicShapes). On snippets of each form Inductor emits,
// and on the real sources of the corpus (every release) and of the
// bad-request model. White-box: links the core.
#include <gtest/gtest.h>

#include <zip.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "package/pt2/specs/index_bounds.hpp"
#include "package/pt2/specs/symbolic_shapes.hpp"
#include "base/strings.hpp"

using aotrun::pt2::IndexChecks;
using aotrun::pt2::parse_index_checks;
using aotrun::pt2::SymbolicShapes;

namespace {

// Every .cpp in a .pt2, concatenated (as the bridge reads them).
std::string archive_sources(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr) return "";
  std::string all;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const std::string name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (!aotrun::ends_with(name, ".cpp")) continue;
    zip_stat_t st;
    zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st);
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    std::string text(static_cast<size_t>(st.size), '\0');
    zip_fread(f, text.data(), st.size);
    zip_fclose(f);
    all += text + "\n";
  }
  zip_close(z);
  return all;
}

// A kernel and the wrapper lines that call it with input 0 ("arg0_1").
std::string model(const std::string& body, const std::string& extra_params = "") {
  return "extern \"C\"  void  k0(const int64_t* in_ptr0, const float* in_ptr1, float* out_ptr0" + extra_params +
         ")\n{\n" + body +
         "\n}\n"
         "inputs_info_[0].name = \"arg0_1\";\n"
         "inputs_info_[1].name = \"arg1_1\";\n"
         "k0((const int64_t*)(arg0_1.data_ptr()), (const float*)(w.data_ptr()), (float*)(buf0.data_ptr()));\n";
}

TEST(IndexChecks, ScalarLoadCastAndCheck) {
  const IndexChecks c = parse_index_checks(model(R"(
    #pragma omp for
    for(int64_t x0=0; x0<8L; x0++) {
      auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
      auto tmp1 = tmp0;
      auto tmp2 = c10::convert<int64_t>(tmp1);
      AOTI_TORCH_CHECK((0 <= tmp2) & (tmp2 < 50L), "index out of bounds: 0 <= tmp2 < 50L");
      out_ptr0[x0] = in_ptr1[16L*tmp0];
    })"));
  ASSERT_EQ(c.bounds.size(), 1u);
  EXPECT_EQ(c.bounds[0].input, 0u);
  EXPECT_EQ(c.bounds[0].lo, 0);
  EXPECT_EQ(c.bounds[0].hi, 50);
  EXPECT_NE(c.bounds[0].where.find("k0"), std::string::npos);
  EXPECT_TRUE(c.unguarded.empty());
}

// Negative ids wrapped by adding the table size (tensor indexing): [-N, N).
TEST(IndexChecks, WrappedNegativeIndicesScalarAndVectorized) {
  const IndexChecks scalar = parse_index_checks(model(R"(
      auto tmp0 = in_ptr0[x0];
      auto tmp1 = 100L;
      auto tmp2 = tmp0 + tmp1;
      auto tmp3 = tmp0 < 0;
      auto tmp4 = tmp3 ? tmp2 : tmp0;
      AOTI_TORCH_CHECK((0 <= tmp4) & (tmp4 < 100L), "index out of bounds: 0 <= tmp4 < 100L");)"));
  ASSERT_EQ(scalar.bounds.size(), 1u);
  EXPECT_EQ(scalar.bounds[0].lo, -100);
  EXPECT_EQ(scalar.bounds[0].hi, 100);
  const IndexChecks vec = parse_index_checks(model(R"(
      auto tmp0 = at::vec::VectorizedN<int64_t,2>::loadu(in_ptr0 + static_cast<int64_t>(x2), static_cast<int64_t>(8));
      auto tmp3 = at::vec::VectorizedN<int64_t,2>(tmp2);
      auto tmp4 = tmp0 + tmp3;
      auto tmp7 = at::vec::VecMask<int64_t,2>(tmp0 < tmp6);
      auto tmp8 = decltype(tmp4)::blendv(tmp0, tmp4, tmp7.template cast<int64_t,2>());
      auto tmp9 =
      [&]
      {
          __at_align__ std::array<int64_t, 8> tmpbuf;
          tmp8.store(tmpbuf.data(), static_cast<int64_t>(8));
          return tmpbuf;
      }
      ()
      ;
      auto tmp10 =
      [&]
      {
          __at_align__ std::array<int64_t, 8> tmpbuf;
          for (long x2_inner = 0; x2_inner < static_cast<int64_t>(8); x2_inner++)
          {
              tmpbuf[x2_inner] = static_cast<int64_t>(tmp9[x2_inner]);
          }
          return at::vec::VectorizedN<int64_t,2>::loadu(tmpbuf.data(), static_cast<int64_t>(8));
      }
      ()
      ;
      AOTI_TORCH_CHECK((at::vec::VecMask<int64_t,2>((at::vec::VectorizedN<int64_t,2>(0) <= tmp10) & (tmp10 < at::vec::VectorizedN<int64_t,2>(100L)))).all_masked(), "index out of bounds: 0 <= tmp10 < 100L");)"));
  ASSERT_EQ(vec.bounds.size(), 1u);
  EXPECT_EQ(vec.bounds[0].lo, -100);
  EXPECT_EQ(vec.bounds[0].hi, 100);
}

// Loop counters (a position table) are bounded by the dims; a value the
// model computes (ids + 1) cannot be checked ahead and is reported, with
// whether the kernel runs it in parallel code.
TEST(IndexChecks, LoopDerivedAndComputedIndices) {
  const IndexChecks c = parse_index_checks(model(R"(
      #pragma omp parallel
      auto tmp5 = x1;
      auto tmp6 = c10::convert<int64_t>(tmp5);
      AOTI_TORCH_CHECK(tmp6 < 32L, "index out of bounds: tmp6 < 32L");
      auto tmp0 = in_ptr0[x0];
      auto tmp1 = tmp0 + 1L;
      AOTI_TORCH_CHECK((0 <= tmp1) & (tmp1 < 50L), "index out of bounds: 0 <= tmp1 < 50L");)"));
  EXPECT_TRUE(c.bounds.empty());
  EXPECT_EQ(c.from_dims, 1u);
  ASSERT_EQ(c.unguarded.size(), 1u);
  EXPECT_EQ(c.unguarded[0].kernel, "k0");
  EXPECT_TRUE(c.unguarded[0].parallel);
  EXPECT_NE(c.unguarded[0].message.find("tmp1 < 50L"), std::string::npos);
}

// A kernel reading the ids through a buffer (not the input itself) cannot
// tie the check to an input: unguarded, never a bound on the wrong input.
TEST(IndexChecks, CheckOnABufferIsNotTiedToAnInput) {
  const std::string s =
      "extern \"C\"  void  k0(const int64_t* in_ptr0, float* out_ptr0)\n{\n"
      "  auto tmp0 = in_ptr0[x0];\n"
      "  AOTI_TORCH_CHECK((0 <= tmp0) & (tmp0 < 50L), \"index out of bounds: 0 <= tmp0 < 50L\");\n}\n"
      "inputs_info_[0].name = \"arg0_1\";\n"
      "k0((const int64_t*)(buf3.data_ptr()), (float*)(buf0.data_ptr()));\n";
  const IndexChecks c = parse_index_checks(s);
  EXPECT_TRUE(c.bounds.empty());
  EXPECT_EQ(c.unguarded.size(), 1u);
}

// Ids read from one of the model's own constants (BERT's position_ids):
// the model's values, not the request's.
TEST(IndexChecks, IndicesFromTheModelsConstants) {
  const std::string s =
      "extern \"C\"  void  k0(const int64_t* in_ptr0, float* out_ptr0)\n{\n"
      "  #pragma omp parallel\n  auto tmp0 = in_ptr0[x1];\n"
      "  AOTI_TORCH_CHECK((0 <= tmp0) & (tmp0 < 128L), \"index out of bounds: 0 <= tmp0 < 128L\");\n}\n"
      "inputs_info_[0].name = \"arg0_1\";\nconstants_info_[0].name = \"position_ids\";\n"
      "k0((const int64_t*)(position_ids.data_ptr()), (float*)(buf0.data_ptr()));\n";
  const IndexChecks c = parse_index_checks(s);
  EXPECT_TRUE(c.bounds.empty());
  EXPECT_TRUE(c.unguarded.empty());
  EXPECT_EQ(c.from_constants, 1u);
}

// The corpus's embedding model (a 100-row table indexed by input 0) of
// every release: the bound is found in each release's code form.
TEST(IndexChecks, CorpusEmbeddingOfEveryRelease) {
  size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(AOTRUN_PT2_FIXTURES)) {
    const std::string path = e.path().string() + "/embed.pt2";
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(path);
    ++seen;
    const IndexChecks c = parse_index_checks(archive_sources(path));
    ASSERT_EQ(c.bounds.size(), 1u);
    EXPECT_EQ(c.bounds[0].input, 0u);
    EXPECT_EQ(c.bounds[0].hi, 100);
    EXPECT_TRUE(c.bounds[0].lo == 0 || c.bounds[0].lo == -100) << c.bounds[0].lo;
    EXPECT_TRUE(c.unguarded.empty()) << c.unguarded[0].message;
  }
  EXPECT_GE(seen, 10u);
}

TEST(IndexChecks, TheBadRequestModel) {
  const IndexChecks c = parse_index_checks(archive_sources(std::string(AOTRUN_PT2_REQUESTS) + "/ids_mask.pt2"));
  ASSERT_EQ(c.bounds.size(), 1u);
  EXPECT_EQ(c.bounds[0].input, 0u);
  EXPECT_EQ(c.bounds[0].lo, 0);
  EXPECT_EQ(c.bounds[0].hi, 500);
  EXPECT_EQ(c.from_dims, 1u);  // the position table, bounded by seq <= 64
  EXPECT_TRUE(c.unguarded.empty());
}

// A CUDA model's embedding is a Triton kernel whose source the wrapper
// keeps (torch 2.11's Llama, abridged): the ids are loaded from in_ptr0,
// wrapped from negative, and device_assert-ed against the table's rows.
TEST(IndexChecks, TritonKernelsOfACudaModel) {
  const std::string s = R"SRC(
    inputs_info_[0].name = "arg23_1";
    constants_info_[0].name = "model_model_embed_tokens_weight";
    async_compile.triton('triton_per_fused_add_embedding_3', '''
    def triton_per_fused_add_embedding_3(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
        tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
        tmp1 = tl.full([1, 1], 1000, tl.int32)
        tmp2 = tmp0 + tmp1
        tmp3 = tmp0 < 0
        tmp4 = tl.where(tmp3, tmp2, tmp0)
        tl.device_assert(((0 <= tmp4) & (tmp4 < 1000)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 1000")
        tmp6 = tl.load(in_ptr1 + (r0_1 + 64*tmp4), xmask, other=0.0)
    ''', device_str='cuda')
    async_compile.triton('triton_poi_fused_index_5', '''
    def triton_poi_fused_index_5(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
        tmp0 = tl.load(in_ptr0 + (x0), xmask)
        tmp1 = tmp0 * 2
        tl.device_assert((0 <= tmp1) & (tmp1 < 64), "index out of bounds: 0 <= tmp1 < 64")
    ''', device_str='cuda')
    static inline void call_triton_per_fused_add_embedding_3(
        const in_ptr0_type_& in_ptr0, const in_ptr1_type_& in_ptr1, const out_ptr1_type_& out_ptr1) {}
    call_triton_per_fused_add_embedding_3(arg23_1, model_model_embed_tokens_weight, buf5, xnumel, 64L, this->device_idx_, stream, kernels, this->cubin_dir_);
    call_triton_poi_fused_index_5(arg23_1, buf7, buf8, xnumel, this->device_idx_, stream, kernels, this->cubin_dir_);
  )SRC";
  const IndexChecks c = parse_index_checks(s);
  ASSERT_EQ(c.bounds.size(), 1u);
  EXPECT_EQ(c.bounds[0].input, 0u);
  EXPECT_EQ(c.bounds[0].lo, -1000);  // wrapped from negative, as eager's embedding is not
  EXPECT_EQ(c.bounds[0].hi, 1000);
  EXPECT_EQ(c.bounds[0].where, "triton_per_fused_add_embedding_3: 0 <= tmp4 < 1000");
  ASSERT_EQ(c.unguarded.size(), 1u);  // a computed index: not the input's values
  EXPECT_EQ(c.unguarded[0].kernel, "triton_poi_fused_index_5");
}

TEST(IndexChecks, OutOfRangeScanEveryIntegerWidth) {
  uint64_t at = 0;
  int64_t v = 0;
  const int64_t a64[] = {0, 5, 49, 50};
  EXPECT_TRUE(aotrun::pt2::find_out_of_range(a64, 0, 64, 4, 0, 50, &at, &v));
  EXPECT_EQ(at, 3u);
  EXPECT_EQ(v, 50);
  EXPECT_FALSE(aotrun::pt2::find_out_of_range(a64, 0, 64, 3, 0, 50, &at, &v));
  const int32_t a32[] = {3, -1};
  EXPECT_TRUE(aotrun::pt2::find_out_of_range(a32, 0, 32, 2, 0, 50, &at, &v));
  EXPECT_EQ(v, -1);
  EXPECT_FALSE(aotrun::pt2::find_out_of_range(a32, 0, 32, 2, -50, 50, &at, &v));
  const uint64_t u64[] = {1, uint64_t{1} << 63};
  EXPECT_TRUE(aotrun::pt2::find_out_of_range(u64, 1, 64, 2, 0, 50, &at, &v));
  EXPECT_EQ(at, 1u);
  const float f[] = {1e9f};
  EXPECT_FALSE(aotrun::pt2::find_out_of_range(f, 2, 32, 1, 0, 50, &at, &v));  // not an index dtype
}

// --- SymbolicShapes ---------------------------------------------------------

std::string wrapper(const std::string& body) {
  return "inputs_info_[0].name = \"arg0_1\";\ninputs_info_[1].name = \"arg1_1\";\n"
         "inputs_info_[2].name = \"arg2_1\";\n" +
         body;
}

bool check(const SymbolicShapes& s, std::vector<std::vector<int64_t>> shapes, std::string* why) {
  std::vector<const int64_t*> p;
  std::vector<int> n;
  for (auto& v : shapes) {
    p.push_back(v.data());
    n.push_back(static_cast<int>(v.size()));
  }
  return s.check(p.data(), n.data(), shapes.size(), {"ids", "mask", "pos"}, why);
}

// ids and mask share both symbols (s31 an alias of s23); a position table
// is computed from the sequence.
const char kTiedInputs[] = R"(
    int64_t s23 = arg0_1_size[0];
    int64_t s31 = s23;
    int64_t s27 = arg0_1_size[1];
    if (x) { assert_size_stride(arg0_1, {s23, s27}, {s27, 1L}, "input"); }
    if (x) { assert_size_stride(arg1_1, {s31, s27}, {s27, 1L}, "input"); }
    if (x) { assert_size_stride(arg2_1, {2L*s27 + 1L, 16L}, {16L, 1L}, "input"); }
  )";

TEST(SymbolicShapes, SharedSymbolsMustAgree) {
  const SymbolicShapes s = SymbolicShapes::parse(wrapper(kTiedInputs), 3);
  ASSERT_TRUE(s.stated());
  EXPECT_EQ(s.tied_dims(), 5u);  // ids 0/1, mask 0/1, pos 0 (an expression); not the static 16
  std::string why;
  EXPECT_TRUE(check(s, {{3, 9}, {3, 9}, {19, 16}}, &why)) << why;
  EXPECT_FALSE(check(s, {{3, 9}, {3, 8}, {19, 16}}, &why));
  EXPECT_NE(why.find("input 1 ('mask') dim 1 is 8, but input 0 ('ids') dim 1 is 9"), std::string::npos) << why;
  EXPECT_FALSE(check(s, {{3, 9}, {2, 9}, {19, 16}}, &why));  // through the alias s31 = s23
  EXPECT_NE(why.find("dim 0 is 2"), std::string::npos) << why;
  EXPECT_FALSE(check(s, {{3, 9}, {3, 9}, {18, 16}}, &why));
  EXPECT_NE(why.find("2L*s27 + 1L = 19"), std::string::npos) << why;
}

// What a tool sets (aotrun run --dim): the symbols, the dims bound to each,
// and the sizes the model computes from them.
TEST(SymbolicShapes, BindingsAndComputedSizes) {
  const SymbolicShapes s = SymbolicShapes::parse(wrapper(kTiedInputs), 3);
  ASSERT_EQ(s.symbols().size(), 2u);
  EXPECT_EQ(s.symbols()[0], "s23");  // s31 is an alias of s23
  EXPECT_EQ(s.symbols()[1], "s27");
  std::vector<std::tuple<size_t, int, size_t>> got;
  for (const auto& b : s.bindings()) got.emplace_back(b.input, b.dim, b.symbol);
  EXPECT_EQ(got, (std::vector<std::tuple<size_t, int, size_t>>{{0, 0, 0}, {0, 1, 1}, {1, 0, 0}, {1, 1, 1}}));
  int64_t size = 0;
  EXPECT_TRUE(s.computed_size(2, 0, {3, 9}, {true, true}, &size));
  EXPECT_EQ(size, 19);
  EXPECT_FALSE(s.computed_size(2, 0, {3, 9}, {true, false}, &size));  // s27 not given
  EXPECT_FALSE(s.computed_size(0, 1, {3, 9}, {true, true}, &size));   // a bare symbol, not computed
  EXPECT_FALSE(s.computed_size(2, 1, {3, 9}, {true, true}, &size));   // static
}

// transformers' Llama pads its mask to a multiple of 8, so its sequence is
// exported as 8*k: torch 2.11's CUDA wrapper binds k as an eighth of the
// input dim and works on 8*k elements. A size between multiples would be
// cut down silently: refused, and probes step by 8.
TEST(SymbolicShapes, ADimExportedAsAMultipleHasThatStep) {
  const SymbolicShapes s = SymbolicShapes::parse(wrapper(R"(
    auto arg0_1_size = arg0_1.sizes();
    int64_t arg0_1_size_1 = arg0_1_size[1];
    int64_t s6 = (1.0/8.0)*arg0_1_size_1;
    const int64_t int_array_0[] = {1L, 8L*s6};
  )"),
                                                 1);
  EXPECT_TRUE(s.stated());
  EXPECT_EQ(s.step(0, 1), 8);
  EXPECT_EQ(s.step(0, 0), 1);
  std::string why;
  EXPECT_TRUE(check(s, {{1, 40}}, &why)) << why;
  EXPECT_FALSE(check(s, {{1, 41}}, &why));
  EXPECT_NE(why.find("input 0 ('ids') dim 1 is 41, but the model was exported with it as 8*s6 and would work on 40 "
                     "of it: it must be a multiple of 8"),
            std::string::npos)
      << why;
}

TEST(SymbolicShapes, UnsupportedExpressionsAreNotChecked) {
  const SymbolicShapes s = SymbolicShapes::parse(wrapper("int64_t s0 = arg0_1_size[0];\nassert_size_stride(arg1_1, "
                                                         "{c10::div_floor_integer(s0, 2L)}, {1L}, \"input\");\n"),
                                                 2);
  std::string why;
  EXPECT_TRUE(check(s, {{8}, {3}}, &why)) << why;
  EXPECT_EQ(s.tied_dims(), 0u);
}

// The bad-request model (torch 2.15): ids and mask share both symbols.
TEST(SymbolicShapes, TheBadRequestModel) {
  const SymbolicShapes s =
      SymbolicShapes::parse(archive_sources(std::string(AOTRUN_PT2_REQUESTS) + "/ids_mask.pt2"), 2);
  EXPECT_EQ(s.tied_dims(), 4u);
  std::string why;
  EXPECT_TRUE(check(s, {{3, 9}, {3, 9}}, &why)) << why;
  EXPECT_FALSE(check(s, {{3, 9}, {3, 8}}, &why));
}

// A single-input corpus model of every release: one symbol, nothing tied.
TEST(SymbolicShapes, CorpusModelsHaveNothingTied) {
  for (const auto& e : std::filesystem::directory_iterator(AOTRUN_PT2_FIXTURES)) {
    const std::string path = e.path().string() + "/multi_dyn.pt2";
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(path);
    const SymbolicShapes s = SymbolicShapes::parse(archive_sources(path), 1);
    EXPECT_EQ(s.tied_dims(), 0u);
    std::string why;
    EXPECT_TRUE(check(s, {{4, 10, 16}}, &why)) << why;
  }
}

}  // namespace
