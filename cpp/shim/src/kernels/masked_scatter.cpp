// aoti_torch_cpu_masked_scatter (since aotrun-shim 1.7): libtorch's
// functional masked_scatter on the CPU, as vision-language models merge
// image embeddings into token embeddings: self broadcast with the bool mask
// into a new contiguous tensor, whose elements where the mask is true take
// source's elements one after the other (row-major order of the result,
// source read as if flattened). source must have self's dtype and at least
// as many elements as there are true positions; the rest of it is unused.
// Two passes over chunks of the result, each pass split over the calling
// thread's OpenMP team: count each chunk's true positions, then fill each
// chunk from its running total in source. Elements move as bytes.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/team_split.hpp"
#include "kernels/element_moves.hpp"

namespace aotrun::shim::kernels {

namespace {

// Results of at least this many elements are split over the team, in
// chunks of at least kChunkElements.
constexpr int64_t kParallelElements = int64_t{1} << 16;
constexpr int64_t kChunkElements = int64_t{1} << 14;

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The dtypes libtorch 2.15's masked_scatter takes on the CPU (not uint16-64,
// float8 or complex32).
bool scatters(int32_t dtype) {
  switch (dtype) {
    case kFloat32:
    case kFloat64:
    case kFloat16:
    case kBFloat16:
    case kInt64:
    case kInt32:
    case kInt16:
    case kInt8:
    case kUInt8:
    case kBool:
    case kComplex64:
    case kComplex128: return true;
    default: return false;
  }
}

// yes when take, else no, by masking bits: a random mask would mispredict a
// branch every few elements, and compilers turn the ternary into one.
template <typename T>
inline T pick(bool take, T yes, T no) {
  if constexpr (std::is_integral_v<T>) {
    const T m = static_cast<T>(T(0) - static_cast<T>(take));
    return static_cast<T>((yes & m) | (no & static_cast<T>(~m)));
  } else {
    return T{pick(take, yes.lo, no.lo), pick(take, yes.hi, no.hi)};
  }
}

// t's strides for a view broadcast to `shape` (0 where it broadcasts).
std::vector<int64_t> broadcast_to(const Tensor& t, const std::vector<int64_t>& shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> st(n, 0);
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t o = n - t.dim() + i;
    st[o] = t.sizes[i] == 1 && shape[o] != 1 ? 0 : t.strides[i];
  }
  return st;
}

}  // namespace

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const char* op) {
  expect_cpu_defined(self, op, "self");
  expect_cpu_defined(mask, op, "mask");
  expect_cpu_defined(source, op, "source");
  if (mask.dtype != kBool) {
    fail_arg(op, "mask", std::string("must be bool, got ") + dtype_name(mask.dtype) + " (libtorch refuses uint8 too)");
  }
  if (!scatters(self.dtype)) {
    fail_arg(op, "self", std::string("has dtype ") + dtype_name(self.dtype) + ", which masked_scatter does not take");
  }
  if (source.dtype != self.dtype) {
    fail_arg(op, "source",
             std::string("has dtype ") + dtype_name(source.dtype) + ", 'self' has " + dtype_name(self.dtype));
  }
  const int64_t nd = std::max(self.dim(), mask.dim());
  std::vector<int64_t> shape(nd);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t si = i - (nd - self.dim()), mi = i - (nd - mask.dim());
    const int64_t ss = si >= 0 ? self.sizes[si] : 1, ms = mi >= 0 ? mask.sizes[mi] : 1;
    if (ss != ms && ss != 1 && ms != 1) {
      fail_arg(op, "mask",
               "of size " + shape_str(mask.sizes) + " does not broadcast with 'self' of size " + shape_str(self.sizes));
    }
    shape[i] = ss == 1 ? ms : ss;
  }
  Tensor out = empty_contiguous(shape, self.dtype);
  const int64_t n = out.numel();
  if (n == 0) return out;

  WalkDims<3> w;  // operands: out, self, mask
  w.sizes = shape;
  w.strides = {out.strides, broadcast_to(self, shape), broadcast_to(mask, shape)};
  w = merged(w);
  const bool split = n >= kParallelElements && omp_get_max_threads() > 1;
  const int64_t chunks = split ? std::min<int64_t>(int64_t{omp_get_max_threads()} * 4, n / kChunkElements) : 1;
  const char* mb = static_cast<const char*>(mask.data());
  std::vector<int64_t> start(static_cast<size_t>(chunks) + 1, 0);
  for_range(chunks > 1, chunks, [&](int64_t c) {
    int64_t k = 0;
    for_each_run(w, n * c / chunks, n * (c + 1) / chunks,
                 [&](const std::array<int64_t, 3>& off, int64_t len, const std::array<int64_t, 3>& step) {
                   const char* m = mb + off[2];
                   if (step[2] == 0) {  // a mask broadcast along the row (a token's hidden dim)
                     k += m[0] != 0 ? len : 0;
                   } else if (step[2] == 1) {
                     for (int64_t q = 0; q < len; ++q) k += m[q] != 0;
                   } else {
                     for (int64_t q = 0; q < len; ++q) k += m[q * step[2]] != 0;
                   }
                 });
    start[c + 1] = k;
  });
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  const int64_t trues = start[chunks];
  if (trues > source.numel()) {
    fail_arg(op, "source",
             "has " + std::to_string(source.numel()) + " elements, fewer than the " + std::to_string(trues) +
                 " true positions of 'mask' (broadcast with 'self')");
  }

  const size_t item = self.itemsize();
  const char* sb = static_cast<const char*>(self.data());
  char* ob = static_cast<char*>(out.data());
  with_element_bytes(item, [&](auto tag) {
    using T = decltype(tag);
    // source's first `trues` elements in row-major order, copied only when
    // they are not already so in memory.
    Tensor flat;
    const char* from = trues > 0 ? static_cast<const char*>(source.data()) : nullptr;
    if (trues > 0 && !source.is_contiguous()) {
      flat = empty_contiguous({trues}, source.dtype);
      char* fb = static_cast<char*>(flat.data());
      WalkDims<1> sw;
      sw.sizes = source.sizes;
      sw.strides[0] = source.strides;
      int64_t at = 0;
      for_each_run(merged(sw), 0, trues,
                   [&](const std::array<int64_t, 1>& off, int64_t len, const std::array<int64_t, 1>& step) {
                     for (int64_t q = 0; q < len; ++q, ++at)
                       store_elem<T>(fb, at, load_elem<T>(from, off[0] + q * step[0]));
                   });
      from = fb;
    }
    constexpr int64_t W = sizeof(T);
    // len elements from a (stride sa) to b (stride 1: out is contiguous).
    auto copy_run = [](char* b, const char* a, int64_t sa, int64_t len) {
      if (sa == 1) {
        std::memcpy(b, a, static_cast<size_t>(len * W));
      } else {
        for (int64_t q = 0; q < len; ++q) store_elem<T>(b, q, load_elem<T>(a, q * sa));
      }
    };
    for_range(chunks > 1, chunks, [&](int64_t c) {
      int64_t k = start[c];
      for_each_run(w, n * c / chunks, n * (c + 1) / chunks,
                   [&](const std::array<int64_t, 3>& off, int64_t len, const std::array<int64_t, 3>& step) {
                     char* o = ob + off[0] * W;  // step[0] == 1
                     const char* a = sb + off[1] * W;
                     const char* m = mb + off[2];
                     if (step[2] == 0 || trues == 0) {  // one mask value for the whole run
                       if (m[0] != 0) {
                         copy_run(o, from + k * W, 1, len);
                         k += len;
                       } else {
                         copy_run(o, a, step[1], len);
                       }
                       return;
                     }
                     // Without branches on the mask: source's next element is
                     // read either way, clamped to the last one used.
                     const int64_t last = trues - 1;
                     for (int64_t q = 0; q < len; ++q) {
                       const bool take = m[q * step[2]] != 0;
                       const T from_self = load_elem<T>(a, q * step[1]);
                       const T from_source = load_elem<T>(from, std::min(k, last));
                       store_elem<T>(o, q, pick(take, from_source, from_self));
                       k += take;
                     }
                   });
    });
  });
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask,
                                                        AtenTensorHandle source, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_masked_scatter";
    if (ret0 == nullptr) kernels::fail_arg(op, "ret0", "is null");
    if (self == nullptr) kernels::fail_arg(op, "self", "is a null tensor handle");
    if (mask == nullptr) kernels::fail_arg(op, "mask", "is a null tensor handle");
    if (source == nullptr) kernels::fail_arg(op, "source", "is a null tensor handle");
    *ret0 = new_handle(
        kernels::masked_scatter(as_tensor(self, "self"), as_tensor(mask, "mask"), as_tensor(source, "source"), op));
  });
}
