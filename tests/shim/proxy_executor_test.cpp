// AOTInductor's proxy executor on aotrun's shim (aotrun-shim 1.4): an
// executor made from a model's extern kernel node list, its calls as the
// wrapper makes them (tensor inputs, then one handle per output: the
// wrapper's own buffers for linalg, uninitialized tensors for unique's
// data-dependent outputs), against naive references, and every refusal
// naming the node or the op. The node lists are those torch 2.15 wrote for
// torch.linalg.inv, torch.linalg.solve and torch.unique
// (tests/pt2/edge/export_edge.py's proxy.pt2 carries the same).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "aotrun_shim/shim.h"

namespace {

constexpr int32_t kF32 = 6, kF64 = 7, kI32 = 3, kI64 = 4;

const char* kLinalgNodes = R"({"nodes": [
 {"name": "buf0", "node": {"target": "aten::linalg_inv_ex",
   "inputs": [{"name": "A", "arg": {"as_tensor": {"name": "arg1_1"}}, "kind": 1}],
   "outputs": [{"as_tensor": {"name": "buf1"}}, {"as_tensor": {"name": "buf2"}}]}},
 {"name": "buf3", "node": {"target": "aten::_linalg_check_errors",
   "inputs": [{"name": "info", "arg": {"as_tensor": {"name": "buf2"}}, "kind": 1},
              {"name": "api_name", "arg": {"as_string": "linalg.inv"}, "kind": 1},
              {"name": "is_matrix", "arg": {"as_bool": false}, "kind": 2}], "outputs": []}},
 {"name": "buf4", "node": {"target": "aten::_linalg_solve_ex",
   "inputs": [{"name": "A", "arg": {"as_tensor": {"name": "arg1_1"}}, "kind": 1},
              {"name": "B", "arg": {"as_tensor": {"name": "arg2_1"}}, "kind": 1}],
   "outputs": [{"as_tensor": {"name": "buf5"}}, {"as_tensor": {"name": "buf6"}},
               {"as_tensor": {"name": "buf7"}}, {"as_tensor": {"name": "buf8"}}]}}]})";

const char* kUniqueNodes = R"({"nodes": [{"name": "buf0", "node": {"target": "aten::_unique2",
   "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1},
              {"name": "sorted", "arg": {"as_bool": true}, "kind": 1},
              {"name": "return_inverse", "arg": {"as_bool": true}, "kind": 1},
              {"name": "return_counts", "arg": {"as_bool": true}, "kind": 1}],
   "outputs": [{"as_tensor": {"name": "buf1"}}, {"as_tensor": {"name": "buf2"}}, {"as_tensor": {"name": "buf3"}}]}}]})";

struct Executor {
  AOTIProxyExecutorHandle h = nullptr;
  explicit Executor(const char* json) {
    EXPECT_EQ(aotrun_shim_proxy_executor_create(json, std::strlen(json), &h), AOTI_TORCH_SUCCESS)
        << aotrun_shim_last_error();
  }
  ~Executor() { aotrun_shim_proxy_executor_delete(h); }
};

// A tensor owning its bytes (values as doubles, stored as dtype).
struct Buf {
  std::vector<char> bytes;
  AtenTensorHandle h = nullptr;
  Buf(const std::vector<double>& v, std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype) {
    const size_t item = dtype == kF32 || dtype == kI32 ? 4 : 8;
    bytes.resize(std::max<size_t>(v.size(), 1) * item);
    for (size_t i = 0; i < v.size(); ++i) {
      if (dtype == kF32) {
        const float f = static_cast<float>(v[i]);
        std::memcpy(&bytes[i * 4], &f, 4);
      } else if (dtype == kF64) {
        std::memcpy(&bytes[i * 8], &v[i], 8);
      } else if (dtype == kI64) {
        const int64_t x = static_cast<int64_t>(v[i]);
        std::memcpy(&bytes[i * 8], &x, 8);
      } else {
        const int32_t x = static_cast<int32_t>(v[i]);
        std::memcpy(&bytes[i * 4], &x, 4);
      }
    }
    EXPECT_EQ(aoti_torch_create_tensor_from_blob(bytes.data(), static_cast<int64_t>(sizes.size()), sizes.data(),
                                                 strides.data(), 0, dtype, aoti_torch_device_type_cpu(), 0, &h),
              AOTI_TORCH_SUCCESS);
  }
  ~Buf() { aoti_torch_delete_tensor_object(h); }
};

AtenTensorHandle empty(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype,
                                     aoti_torch_device_type_cpu(), 0, &h),
            AOTI_TORCH_SUCCESS);
  return h;
}

std::vector<int64_t> sizes_of(AtenTensorHandle h) {
  int64_t d = 0, *s = nullptr;
  aoti_torch_get_dim(h, &d);
  aoti_torch_get_sizes(h, &s);
  return std::vector<int64_t>(s, s + d);
}

// Element at a multi-index, as double, whatever the strides.
double at(AtenTensorHandle h, const std::vector<int64_t>& idx) {
  int64_t* st = nullptr;
  int32_t dt = 0;
  void* p = nullptr;
  aoti_torch_get_strides(h, &st);
  aoti_torch_get_dtype(h, &dt);
  aoti_torch_get_data_ptr(h, &p);
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * st[i];
  const char* c = static_cast<const char*>(p);
  if (dt == kF32) return reinterpret_cast<const float*>(c)[off];
  if (dt == kF64) return reinterpret_cast<const double*>(c)[off];
  if (dt == kI64) return static_cast<double>(reinterpret_cast<const int64_t*>(c)[off]);
  return reinterpret_cast<const int32_t*>(c)[off];
}

// A [2, 3, 3] batch: an invertible matrix and a singular one (row 1 = 2 row 0:
// elimination leaves an exact zero pivot).
const std::vector<double> kMats = {4, 1, 2, 1, 5, 3, 2, 3, 6, 1, 2, 3, 2, 4, 6, 1, 1, 1};

TEST(ProxyExecutor, InverseWritesTheWrappersBuffersAndChecksErrors) {
  Executor ex(kLinalgNodes);
  for (int32_t dt : {kF32, kF64}) {
    Buf a(kMats, {2, 3, 3}, {9, 3, 1}, dt);
    // As the wrapper preallocates them: column-major inverses, int32 info.
    AtenTensorHandle inv = empty({2, 3, 3}, {9, 1, 3}, dt), info = empty({2}, {1}, kI32);
    AtenTensorHandle args[3] = {a.h, inv, info};
    ASSERT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 0, 0, nullptr, 3, args), AOTI_TORCH_SUCCESS)
        << aotrun_shim_last_error();
    int64_t* st = nullptr;
    aoti_torch_get_strides(inv, &st);
    EXPECT_EQ(std::vector<int64_t>(st, st + 3), (std::vector<int64_t>{9, 1, 3})) << "the buffer's strides stay";
    EXPECT_EQ(at(info, {0}), 0);
    EXPECT_GT(at(info, {1}), 0) << "the singular matrix: LAPACK's zero pivot";
    // A · A⁻¹ = I for the invertible one.
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k) s += kMats[i * 3 + k] * at(inv, {0, k, j});
        EXPECT_NEAR(s, i == j ? 1.0 : 0.0, dt == kF32 ? 1e-5 : 1e-12) << i << "," << j;
      }
    // _linalg_check_errors raises libtorch's message for the singular one.
    AtenTensorHandle check[1] = {info};
    EXPECT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 1, 0, nullptr, 1, check), AOTI_TORCH_FAILURE);
    const std::string m = aotrun_shim_last_error();
    EXPECT_NE(m.find("linalg.inv: (Batch element 1): The diagonal element"), std::string::npos) << m;
    EXPECT_NE(m.find("singular"), std::string::npos) << m;
    aoti_torch_delete_tensor_object(inv);
    aoti_torch_delete_tensor_object(info);
  }
}

TEST(ProxyExecutor, SolveGivesLuPivotsAndTheSolution) {
  Executor ex(kLinalgNodes);
  const std::vector<double> a = {4, 1, 2, 1, 5, 3, 2, 3, 6}, b = {1, 2, 3, 4, 5, 6};  // B [3, 2]
  Buf ah(a, {1, 3, 3}, {9, 3, 1}, kF64), bh(b, {1, 3, 2}, {6, 2, 1}, kF64);
  AtenTensorHandle out[4] = {empty({1, 3, 2}, {6, 1, 3}, kF64), empty({1, 3, 3}, {9, 1, 3}, kF64),
                             empty({1, 3}, {3, 1}, kI32), empty({1}, {1}, kI32)};
  AtenTensorHandle args[6] = {ah.h, bh.h, out[0], out[1], out[2], out[3]};
  ASSERT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 2, 0, nullptr, 6, args), AOTI_TORCH_SUCCESS)
      << aotrun_shim_last_error();
  EXPECT_EQ(at(out[3], {0}), 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += a[i * 3 + k] * at(out[0], {0, k, j});
      EXPECT_NEAR(s, b[i * 2 + j], 1e-12) << i << "," << j;
    }
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(at(out[2], {0, i}), 1) << "pivots are 1-based";
    EXPECT_LE(at(out[2], {0, i}), 3);
  }
  for (AtenTensorHandle h : out) aoti_torch_delete_tensor_object(h);
}

TEST(ProxyExecutor, UniqueFillsUninitializedOutputsLikeLibtorch) {
  Executor ex(kUniqueNodes);
  const double nan = std::nan("");
  Buf x({3, 1, nan, 2, 1, nan, 3}, {7}, {1}, kF32);
  AtenTensorHandle out[3] = {};
  for (auto& h : out) ASSERT_EQ(aoti_torch_new_uninitialized_tensor(&h), AOTI_TORCH_SUCCESS);
  AtenTensorHandle args[4] = {x.h, out[0], out[1], out[2]};
  ASSERT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 0, 0, nullptr, 4, args), AOTI_TORCH_SUCCESS)
      << aotrun_shim_last_error();
  // torch 2.15: values [1, 2, 3, nan, nan], inverse [2, 0, 3, 1, 0, 4, 2], counts [2, 1, 2, 1, 1].
  ASSERT_EQ(sizes_of(out[0]), (std::vector<int64_t>{5}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(at(out[0], {i}), i + 1);
  EXPECT_TRUE(std::isnan(at(out[0], {3})) && std::isnan(at(out[0], {4})));
  const std::vector<double> inverse = {2, 0, 3, 1, 0, 4, 2}, counts = {2, 1, 2, 1, 1};
  ASSERT_EQ(sizes_of(out[1]), (std::vector<int64_t>{7}));
  for (int i = 0; i < 7; ++i) EXPECT_EQ(at(out[1], {i}), inverse[i]) << i;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(at(out[2], {i}), counts[i]) << i;
  for (AtenTensorHandle h : out) aoti_torch_delete_tensor_object(h);
}

TEST(ProxyExecutor, RefusesUnknownOpsAndMismatchedCallsNamingThem) {
  AOTIProxyExecutorHandle h = nullptr;
  const std::string eig = R"({"nodes": [{"node": {"target": "aten::linalg_eig", "inputs": [], "outputs": []}}]})";
  EXPECT_EQ(aotrun_shim_proxy_executor_create(eig.c_str(), eig.size(), &h), AOTI_TORCH_FAILURE);
  EXPECT_EQ(h, nullptr);
  std::string m = aotrun_shim_last_error();
  EXPECT_NE(m.find("aten::linalg_eig"), std::string::npos) << m;
  EXPECT_NE(m.find("aten::linalg_inv_ex"), std::string::npos) << "says what it runs: " << m;
  const std::string ints =
      R"({"nodes": [{"node": {"target": "aten::_unique2", "inputs": [{"name": "dim", "arg": {"as_int": 0}}], "outputs": []}}]})";
  EXPECT_EQ(aotrun_shim_proxy_executor_create(ints.c_str(), ints.size(), &h), AOTI_TORCH_FAILURE);
  m = aotrun_shim_last_error();
  EXPECT_NE(m.find("'dim'"), std::string::npos) << m;
  const std::string bad = "{\"nodes\": 3}";
  EXPECT_EQ(aotrun_shim_proxy_executor_create(bad.c_str(), bad.size(), &h), AOTI_TORCH_FAILURE);

  Executor ex(kLinalgNodes);
  Buf a(kMats, {2, 3, 3}, {9, 3, 1}, kF32);
  AtenTensorHandle args[3] = {a.h, a.h, a.h};
  EXPECT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 7, 0, nullptr, 3, args), AOTI_TORCH_FAILURE);
  m = aotrun_shim_last_error();
  EXPECT_NE(m.find("extern kernel node 7 does not exist"), std::string::npos) << m;
  EXPECT_EQ(aoti_torch_proxy_executor_call_function(ex.h, 0, 0, nullptr, 2, args), AOTI_TORCH_FAILURE);
  m = aotrun_shim_last_error();
  EXPECT_NE(m.find("aten::linalg_inv_ex"), std::string::npos) << m;
  EXPECT_EQ(aoti_torch_proxy_executor_call_function(nullptr, 0, 0, nullptr, 3, args), AOTI_TORCH_FAILURE);
  m = aotrun_shim_last_error();
  EXPECT_NE(m.find("passed none"), std::string::npos) << m;
}

}  // namespace
