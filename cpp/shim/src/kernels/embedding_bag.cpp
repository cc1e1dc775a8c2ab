// aoti_torch_cpu__embedding_bag: sums, means or maxima of bags of weight rows.
// weight [num_weights, D] (float32, float64, bfloat16, float16), indices
// [n] and offsets [b] (int64 or int32; the outputs holding indices take
// their common type, int64 when they differ), bag j starting at offsets[j];
// include_last_offset: offsets' last element ends the last bag instead of
// starting one. Indices equal to padding_idx (when >= 0) are skipped.
// per_sample_weights (mode sum only) scale each row. The four results are
// libtorch's CPU ones, bit for bit where they are indices:
//   ret0 output [bags, D] (empty bags: 0);
//   ret1 offset2bag: the bag of each index, or [0] where libtorch's fast
//        sum path (float32/16-bit weight with unit-stride rows, unit-stride
//        per_sample_weights, no padding_idx) skips computing it;
//   ret2 bag_size: indices per bag less the padded ones (mode sum: zeros);
//   ret3 max_indices: mode max: the row each maximum came from [bags, D]
//        (0 for empty bags); else a copy of bag_size.
// Sums accumulate in float32 (float64 for float64) in index order; a 16-bit
// mean is the rounded sum divided by the bag size and rounded again, as in
// libtorch. On libtorch's fast path (above) each bag sums only the indices
// up to the next offset (with include_last_offset: up to the last offset);
// otherwise every index belongs to the bag of the last offset at or before
// it, as libtorch's offset2bag says, and bag sizes count that way too.
#include <algorithm>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

std::vector<int64_t> read_indices(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.sizes[0]));
  const void* base = t.data();
  for (int64_t i = 0; i < t.sizes[0]; ++i) {
    v[i] = t.dtype == kInt64 ? load<int64_t>(base, i * t.strides[0]) : load<int32_t>(base, i * t.strides[0]);
  }
  return v;
}

Tensor index_tensor(const std::vector<int64_t>& sizes, int32_t dtype, const std::vector<int64_t>& values) {
  Tensor t = empty_contiguous(sizes, dtype);
  void* base = t.data();
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == kInt64) {
      store<int64_t>(base, static_cast<int64_t>(i), values[i]);
    } else {
      store<int32_t>(base, static_cast<int64_t>(i), static_cast<int32_t>(values[i]));
    }
  }
  return t;
}

}  // namespace

void embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                   const Tensor* per_sample_weights, bool include_last_offset, int64_t padding_idx, Tensor* out[4],
                   const char* op) {
  expect_cpu_defined(weight, op, "weight");
  expect_cpu_defined(indices, op, "indices");
  expect_cpu_defined(offsets, op, "offsets");
  expect_dim(weight, 2, op, "weight");
  expect_dim(indices, 1, op, "indices");
  expect_dim(offsets, 1, op, "offsets");
  const int32_t dt = weight.dtype;
  if (dt != kFloat32 && dt != kFloat64 && dt != kBFloat16 && dt != kFloat16) {
    fail_arg(op, "weight", std::string("has dtype ") + dtype_name(dt) + "; expected a floating dtype");
  }
  const Tensor* index_args[2] = {&indices, &offsets};
  const char* index_names[2] = {"indices", "offsets"};
  for (int a = 0; a < 2; ++a) {
    if (index_args[a]->dtype != kInt64 && index_args[a]->dtype != kInt32) {
      fail_arg(op, index_names[a],
               std::string("has dtype ") + dtype_name(index_args[a]->dtype) + "; expected int64 or int32");
    }
  }
  if (mode != kSum && mode != kMean && mode != kMax) {
    fail_arg(op, "mode", "is " + std::to_string(mode) + "; expected 0 (sum), 1 (mean) or 2 (max)");
  }
  const int64_t n = indices.sizes[0], num_weights = weight.sizes[0], dim = weight.sizes[1];
  if (per_sample_weights != nullptr) {
    if (mode != kSum) fail_arg(op, "per_sample_weights", "is given, which only mode sum (0) takes");
    expect_cpu_defined(*per_sample_weights, op, "per_sample_weights");
    expect_dim(*per_sample_weights, 1, op, "per_sample_weights");
    if (per_sample_weights->dtype != dt) fail_arg(op, "per_sample_weights", "must have weight's dtype");
    if (per_sample_weights->sizes[0] != n) fail_arg(op, "per_sample_weights", "must have one element per index");
  }
  const int32_t index_dtype = indices.dtype == offsets.dtype ? indices.dtype : kInt64;
  const std::vector<int64_t> idx = read_indices(indices), offs = read_indices(offsets);
  const int64_t num_offsets = static_cast<int64_t>(offs.size());
  const int64_t bags = include_last_offset ? num_offsets - 1 : num_offsets;
  if (bags < 0) fail_arg(op, "offsets", "is empty, with include_last_offset set");
  if (num_offsets > 0 && offs[0] != 0) fail_arg(op, "offsets", "must start at 0, got " + std::to_string(offs[0]));
  for (int64_t j = 0; j < num_offsets; ++j) {
    if (offs[j] > n) {
      fail_arg(op, "offsets", "holds " + std::to_string(offs[j]) + ", beyond the " + std::to_string(n) + " indices");
    }
    if (j > 0 && offs[j] < offs[j - 1]) fail_arg(op, "offsets", "must be non-decreasing");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= num_weights) {
      fail_arg(op, "indices",
               "holds " + std::to_string(idx[i]) + " at " + std::to_string(i) + ", outside [0, " +
                   std::to_string(num_weights) + ")");
    }
  }
  // The bag of each index as libtorch's offset2bag has it: the last of the
  // first `bags` offsets at or before it.
  std::vector<int64_t> bag_of(static_cast<size_t>(n), 0);
  for (int64_t i = 0, b = 0; i < n; ++i) {
    while (b + 1 < bags && offs[b + 1] <= i) ++b;
    bag_of[i] = b;
  }
  const bool padded = padding_idx >= 0;
  const bool fast = (dt == kFloat32 || dt == kBFloat16 || dt == kFloat16) && (weight.strides[1] == 1) &&
                    (per_sample_weights == nullptr || per_sample_weights->strides[0] == 1) && !padded;
  std::vector<int64_t> bag_size(static_cast<size_t>(bags), 0);
  if (mode != kSum) {
    for (int64_t i = 0; i < n; ++i) {
      if (bags > 0 && !(padded && idx[i] == padding_idx)) ++bag_size[bag_of[i]];
    }
  }
  const int32_t acc_dt = dt == kFloat64 ? kFloat64 : kFloat32;
  Tensor w = empty_contiguous(weight.sizes, acc_dt);
  copy_elements(w, weight);
  std::vector<double> psw;
  if (per_sample_weights != nullptr) {
    Tensor p = empty_contiguous({n}, kFloat64);
    copy_elements(p, *per_sample_weights);
    psw.assign(static_cast<const double*>(p.data()), static_cast<const double*>(p.data()) + n);
  }
  Tensor acc = empty_contiguous({bags, dim}, acc_dt);
  std::vector<int64_t> max_idx;
  auto compute = [&](auto tag) {
    using T = decltype(tag);
    const T* wp = static_cast<const T*>(w.data());
    T* ap = static_cast<T*>(acc.data());
    std::fill(ap, ap + bags * dim, T(0));
    if (mode == kMax) {
      max_idx.assign(static_cast<size_t>(bags * dim), 0);
      std::vector<bool> seen(static_cast<size_t>(bags), false);
      for (int64_t i = 0; i < n; ++i) {
        if (bags == 0 || (padded && idx[i] == padding_idx)) continue;
        const int64_t b = bag_of[i];
        const T* row = wp + idx[i] * dim;
        for (int64_t k = 0; k < dim; ++k) {
          if (!seen[b] || row[k] > ap[b * dim + k]) {
            ap[b * dim + k] = row[k];
            max_idx[b * dim + k] = idx[i];
          }
        }
        seen[b] = true;
      }
      return;
    }
    auto add = [&](int64_t b, int64_t i) {
      const T* row = wp + idx[i] * dim;
      T* o = ap + b * dim;
      if (psw.empty()) {
        for (int64_t k = 0; k < dim; ++k) o[k] += row[k];
      } else {
        const T s = static_cast<T>(psw[i]);
        for (int64_t k = 0; k < dim; ++k) o[k] += s * row[k];
      }
    };
    if (fast) {
      for (int64_t b = 0; b < bags; ++b) {
        const int64_t end = b + 1 < num_offsets ? offs[b + 1] : n;
        for (int64_t i = offs[b]; i < end; ++i) add(b, i);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if (bags > 0 && !(padded && idx[i] == padding_idx)) add(bag_of[i], i);
      }
    }
  };
  if (acc_dt == kFloat64) {
    compute(double{});
  } else {
    compute(float{});
  }
  Tensor output = empty_contiguous({bags, dim}, dt);
  copy_elements(output, acc);
  if (mode == kMean && bags > 0 && dim > 0) {
    // Divide what the output holds (16-bit sums already rounded).
    copy_elements(acc, output);
    if (acc_dt == kFloat64) {
      double* ap = static_cast<double*>(acc.data());
      for (int64_t b = 0; b < bags; ++b)
        for (int64_t k = 0; k < dim; ++k) ap[b * dim + k] /= static_cast<double>(std::max<int64_t>(bag_size[b], 1));
    } else {
      float* ap = static_cast<float*>(acc.data());
      for (int64_t b = 0; b < bags; ++b)
        for (int64_t k = 0; k < dim; ++k) ap[b * dim + k] /= static_cast<float>(std::max<int64_t>(bag_size[b], 1));
    }
    copy_elements(output, acc);
  }
  *out[0] = output;
  const bool skip_offset2bag = mode == kSum && fast;
  *out[1] = skip_offset2bag ? empty_contiguous({0}, index_dtype) : index_tensor({n}, index_dtype, bag_of);
  *out[2] = index_tensor({bags}, index_dtype, bag_size);
  *out[3] =
      mode == kMax ? index_tensor({bags, dim}, index_dtype, max_idx) : index_tensor({bags}, index_dtype, bag_size);
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                                        AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                        int64_t mode, int32_t sparse,
                                                        AtenTensorHandle* per_sample_weights,
                                                        int32_t include_last_offset, int64_t padding_idx,
                                                        AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                        AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  using namespace aotrun::shim;
  (void)scale_grad_by_freq;  // gradient-only options: no effect on the forward results
  (void)sparse;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu__embedding_bag";
    const Tensor& w = as_tensor(weight, "weight");
    const Tensor& i = as_tensor(indices, "indices");
    const Tensor& o = as_tensor(offsets, "offsets");
    const Tensor* psw = nullptr;
    if (per_sample_weights != nullptr && *per_sample_weights != nullptr) {
      psw = &as_tensor(*per_sample_weights, "per_sample_weights");
      if (!psw->defined()) psw = nullptr;
    }
    AtenTensorHandle* outs[4] = {out_arg(ret0, "ret0"), out_arg(ret1, "ret1"), out_arg(ret2, "ret2"),
                                 out_arg(ret3, "ret3")};
    Tensor r[4];
    Tensor* rp[4] = {&r[0], &r[1], &r[2], &r[3]};
    kernels::embedding_bag(w, i, o, mode, psw, include_last_offset != 0, padding_idx, rp, op);
    for (int k = 0; k < 4; ++k) *outs[k] = new_handle(std::move(r[k]));
  });
}
