// aoti_torch_cpu__weight_int4pack_mm_cpu_tensor: int4 weight-only linear as
// libtorch 2.15 computes it on the CPU (_weight_int4pack_mm_for_cpu, which
// AOTInductor calls with the group size as a 0-d int64 constant):
//
//   out[m, n] = Σ_k x[m, k] * ((q[n, k] - 8) * s[k / G, n] + z[k / G, n])
//
// x [M, K] float32, bfloat16 or float16 (contiguous), q the 4-bit weights
// (0..15) packed two to a byte in w [N, K / 2] uint8, qScaleAndZeros [K / G,
// N, 2] of x's dtype holding (s, z) pairs, G the group size (32, 64, 128 or
// 256, dividing K), N a multiple of 16.
//
// How the nibbles sit in w is libtorch's _convert_weight_to_int4pack_for_cpu,
// which depends on the CPU capability libtorch picked (ATEN_CPU_CAPABILITY,
// else the CPU): the columns go in blocks of BN (64 for AVX512, 32 for AVX2
// and the default), block b at byte b * BN * K / 2, and within a block of nbs
// columns row k takes nbs / 2 bytes at k * nbs / 2:
//  - default, and any block shorter than BN: column r in byte r / 2, the low
//    nibble for even r;
//  - AVX2, a full block of 32: column r in byte r % 16, low nibble r < 16;
//  - AVX512, a full block of 64: byte r % 16 for r in [0, 16) and [32, 48),
//    byte 16 + r % 16 for the others, low nibble for r < 32.
// A weight packed under one capability reads differently under another, in
// libtorch as here: the shim takes the layout of the capability libtorch
// would pick in this process (int4pack_capability).
//
// The arithmetic is libtorch's too, in float32, each (m, n) summed in order
// of k from 0, so that results agree bit for bit with libtorch on the same
// capability (compared with libtorch 2.15 under the default and AVX2
// capabilities; AVX512's arithmetic is read from libtorch's kernel, its
// packing compared with libtorch's): the default kernel rounds each product
// and sum (b = (q - 8) * s + z, c = c + x * b); the AVX2 and AVX512 kernels
// fuse them (b = fma(q - 8, s, z), c = fma(x, b, c)), and AVX2's bfloat16
// kernel folds the offset into the zero first (b = fma(q, s, fma(s, -8, z)),
// the same numbers for 16-bit scales and zeros). A 16-bit result is rounded
// once, to nearest even. x (16-bit) is widened to float32 per call into a
// per-thread buffer that is kept, as is the 16-bit outputs' tile of sums.
//
// The loops: per 16 output columns and per group, the group's weights are
// dequantized once into a [G, 16] tile, which then serves every row of x.
// The sums live in the output (float32) or a per-thread buffer (16-bit).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "compute/scratch.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

namespace {

constexpr int kTile = 16;  // output columns per tile

Int4PackCapability compute_capability() {
  // ATEN_CPU_CAPABILITY is read as libtorch reads it (exact values; others
  // are ignored, as libtorch does after a warning).
  if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
    if (std::strcmp(env, "avx512") == 0) return Int4PackCapability::kAvx512;
    if (std::strcmp(env, "avx2") == 0) return Int4PackCapability::kAvx2;
    if (std::strcmp(env, "default") == 0) return Int4PackCapability::kDefault;
  }
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("fma")) {
    return Int4PackCapability::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Int4PackCapability::kAvx2;
#endif
  return Int4PackCapability::kDefault;
}

// How b is formed from a nibble and the group's (s, z); see the top.
enum class Arith { kRounded, kFused, kFusedFoldedZero };

// Where the 16 nibbles of a tile's row k are: 16 bytes from `row(k)` at
// nibble `shift` (0 or 4), or (pairs) 8 bytes holding two columns each.
struct TileSource {
  const uint8_t* base;  // row k = 0
  int64_t row_bytes;    // bytes between rows k and k + 1
  bool pairs;
  int shift;
};

TileSource tile_source(const uint8_t* w, int64_t n_cols, int64_t k_dim, int64_t n0, Int4PackCapability cap) {
  const int64_t bn = cap == Int4PackCapability::kAvx512 ? 64 : 32;
  const int64_t block = n0 / bn, block_start = block * bn;
  const int64_t nbs = std::min(bn, n_cols - block_start);
  const uint8_t* b = w + block_start * k_dim / 2;
  const int64_t t = n0 - block_start;  // a multiple of 16
  if (cap == Int4PackCapability::kDefault || nbs != bn) return {b + t / 2, nbs / 2, true, 0};
  if (cap == Int4PackCapability::kAvx2) return {b, 16, false, t == 0 ? 0 : 4};
  return {b + (t == 16 || t == 48 ? 16 : 0), 32, false, t < 32 ? 0 : 4};
}

// The 16 nibbles of row k as values 0..15.
inline void nibbles(const TileSource& src, int64_t k, uint8_t* q) {
  const uint8_t* row = src.base + k * src.row_bytes;
  if (src.pairs) {
    for (int j = 0; j < kTile / 2; ++j) {
      q[2 * j] = row[j] & 0x0f;
      q[2 * j + 1] = row[j] >> 4;
    }
  } else {
    for (int j = 0; j < kTile; ++j) q[j] = (row[j] >> src.shift) & 0x0f;
  }
}

float load_float(const void* p, int64_t i, int32_t dt) {
  if (dt == kFloat32) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return dt == kBFloat16 ? bf16_to_float(h) : half_to_float(h);
}

// What one tile's loops need.
struct Problem {
  const float* x;  // [M, K] float32 (x itself, or x converted)
  int64_t ldacc;   // row stride of the sums (the output's, or the buffer's)
  int64_t m, k, n, group;
  const void* sz;  // [>= K / G, N, 2] of sz_dtype, contiguous
  int32_t sz_dtype;
  const uint8_t* w;
  Int4PackCapability cap;
};

// The portable loops: rounded arithmetic (default capability), or the fused
// forms through std::fma where the CPU has no FMA unit.
template <Arith A>
void tiles_portable(const Problem& p, int64_t n0, float* acc) {
  float wt[256 * kTile];
  float s[kTile], z[kTile];
  uint8_t q[kTile];
  const TileSource src = tile_source(p.w, p.n, p.k, n0, p.cap);
  for (int64_t g = 0; g < p.k / p.group; ++g) {
    for (int j = 0; j < kTile; ++j) {
      s[j] = load_float(p.sz, (g * p.n + n0 + j) * 2, p.sz_dtype);
      z[j] = load_float(p.sz, (g * p.n + n0 + j) * 2 + 1, p.sz_dtype);
    }
    for (int64_t kk = 0; kk < p.group; ++kk) {
      nibbles(src, g * p.group + kk, q);
      float* row = wt + kk * kTile;
      for (int j = 0; j < kTile; ++j) {
        if constexpr (A == Arith::kRounded) {
          const float scaled = static_cast<float>(q[j] - 8) * s[j];
          row[j] = scaled + z[j];
        } else if constexpr (A == Arith::kFused) {
          row[j] = std::fma(static_cast<float>(q[j] - 8), s[j], z[j]);
        } else {
          row[j] = std::fma(static_cast<float>(q[j]), s[j], std::fma(s[j], -8.0f, z[j]));
        }
      }
    }
    for (int64_t i = 0; i < p.m; ++i) {
      const float* xr = p.x + i * p.k + g * p.group;
      float* c = acc + i * p.ldacc;
      for (int64_t kk = 0; kk < p.group; ++kk) {
        const float a = xr[kk];
        const float* row = wt + kk * kTile;
        for (int j = 0; j < kTile; ++j) {
          if constexpr (A == Arith::kRounded) {
            const float prod = a * row[j];
            c[j] = c[j] + prod;
          } else {
            c[j] = std::fma(a, row[j], c[j]);
          }
        }
      }
    }
  }
}

#if defined(__x86_64__)
// The fused forms on AVX2 + FMA: the same operations, 8 columns at a time.
template <Arith A>
__attribute__((target("avx2,fma"))) void tiles_avx2(const Problem& p, int64_t n0, float* acc) {
  alignas(32) float wt[256 * kTile];
  alignas(32) float s[kTile], z[kTile];
  const TileSource src = tile_source(p.w, p.n, p.k, n0, p.cap);
  const __m128i low = _mm_set1_epi8(0x0f);
  const __m256 eight = _mm256_set1_ps(8.0f), minus8 = _mm256_set1_ps(-8.0f);
  for (int64_t g = 0; g < p.k / p.group; ++g) {
    for (int j = 0; j < kTile; ++j) {
      s[j] = load_float(p.sz, (g * p.n + n0 + j) * 2, p.sz_dtype);
      z[j] = load_float(p.sz, (g * p.n + n0 + j) * 2 + 1, p.sz_dtype);
    }
    __m256 vs[2] = {_mm256_load_ps(s), _mm256_load_ps(s + 8)};
    __m256 vz[2] = {_mm256_load_ps(z), _mm256_load_ps(z + 8)};
    if constexpr (A == Arith::kFusedFoldedZero) {
      for (int h = 0; h < 2; ++h) vz[h] = _mm256_fmadd_ps(vs[h], minus8, vz[h]);
    }
    for (int64_t kk = 0; kk < p.group; ++kk) {
      const uint8_t* row = src.base + (g * p.group + kk) * src.row_bytes;
      __m128i q;  // 16 nibbles, one per byte, in column order
      if (src.pairs) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row));
        q = _mm_unpacklo_epi8(_mm_and_si128(b, low), _mm_and_si128(_mm_srli_epi16(b, 4), low));
      } else {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row));
        q = _mm_and_si128(src.shift == 0 ? b : _mm_srli_epi16(b, 4), low);
      }
      const __m256 qf[2] = {_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(q)),
                            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(q, 8)))};
      for (int h = 0; h < 2; ++h) {
        const __m256 b = A == Arith::kFusedFoldedZero ? _mm256_fmadd_ps(qf[h], vs[h], vz[h])
                                                      : _mm256_fmadd_ps(_mm256_sub_ps(qf[h], eight), vs[h], vz[h]);
        _mm256_store_ps(wt + kk * kTile + 8 * h, b);
      }
    }
    int64_t i = 0;
    for (; i + 4 <= p.m; i += 4) {
      __m256 c[4][2];
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) c[r][h] = _mm256_loadu_ps(acc + (i + r) * p.ldacc + 8 * h);
      const float* xr = p.x + i * p.k + g * p.group;
      for (int64_t kk = 0; kk < p.group; ++kk) {
        const __m256 b0 = _mm256_load_ps(wt + kk * kTile), b1 = _mm256_load_ps(wt + kk * kTile + 8);
        for (int r = 0; r < 4; ++r) {
          const __m256 a = _mm256_broadcast_ss(xr + r * p.k + kk);
          c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
          c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) _mm256_storeu_ps(acc + (i + r) * p.ldacc + 8 * h, c[r][h]);
    }
    for (; i < p.m; ++i) {
      __m256 c0 = _mm256_loadu_ps(acc + i * p.ldacc), c1 = _mm256_loadu_ps(acc + i * p.ldacc + 8);
      const float* xr = p.x + i * p.k + g * p.group;
      for (int64_t kk = 0; kk < p.group; ++kk) {
        const __m256 a = _mm256_broadcast_ss(xr + kk);
        c0 = _mm256_fmadd_ps(a, _mm256_load_ps(wt + kk * kTile), c0);
        c1 = _mm256_fmadd_ps(a, _mm256_load_ps(wt + kk * kTile + 8), c1);
      }
      _mm256_storeu_ps(acc + i * p.ldacc, c0);
      _mm256_storeu_ps(acc + i * p.ldacc + 8, c1);
    }
  }
}
#endif

using TileFn = void (*)(const Problem&, int64_t, float*);

TileFn tile_fn(Arith a) {
  if (a == Arith::kRounded) return &tiles_portable<Arith::kRounded>;
#if defined(__x86_64__)
  static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (fma) return a == Arith::kFused ? &tiles_avx2<Arith::kFused> : &tiles_avx2<Arith::kFusedFoldedZero>;
#endif
  return a == Arith::kFused ? &tiles_portable<Arith::kFused> : &tiles_portable<Arith::kFusedFoldedZero>;
}

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

Int4PackCapability int4pack_capability() {
  static const Int4PackCapability cap = compute_capability();
  return cap;
}

int64_t int4pack_group_size(const Tensor& q_group_size, const char* op) {
  expect_cpu_defined(q_group_size, op, "qGroupSize");
  if (q_group_size.numel() != 1) {
    fail_arg(op, "qGroupSize", "must hold one element (the group size), got " + str(q_group_size.numel()));
  }
  if (q_group_size.dtype != kInt64) {
    fail_arg(op, "qGroupSize", std::string("has dtype ") + dtype_name(q_group_size.dtype) + "; expected int64");
  }
  return *static_cast<const int64_t*>(q_group_size.data());
}

Tensor weight_int4pack_mm(const Tensor& x, const Tensor& w, int64_t group, const Tensor& sz, const char* op) {
  expect_cpu_defined(x, op, "X");
  expect_cpu_defined(w, op, "w");
  expect_cpu_defined(sz, op, "qScaleAndZeros");
  const int32_t dt = x.dtype;
  if (dt != kFloat32 && dt != kBFloat16 && dt != kFloat16) {
    fail_arg(op, "X", std::string("has dtype ") + dtype_name(dt) + "; expected float32, bfloat16 or float16");
  }
  expect_dim(x, 2, op, "X");
  if (!x.is_contiguous()) fail_arg(op, "X", "must be contiguous");
  if (w.dtype != kUInt8) fail_arg(op, "w", std::string("has dtype ") + dtype_name(w.dtype) + "; expected uint8");
  // libtorch also takes a w of more dims whose dim 1 is K / 2 (and reads
  // N * K / 2 bytes of it): refused here.
  expect_dim(w, 2, op, "w");
  if (!w.is_contiguous()) fail_arg(op, "w", "must be contiguous");
  const int64_t m = x.sizes[0], k = x.sizes[1], n = w.sizes[0];
  if (w.sizes[1] != k / 2) fail_arg(op, "w", "has " + str(w.sizes[1]) + " columns, expected K / 2 = " + str(k / 2));
  if (group != 32 && group != 64 && group != 128 && group != 256) {
    fail_arg(op, "qGroupSize", "is " + str(group) + "; expected 32, 64, 128 or 256");
  }
  if (k % group != 0) fail_arg(op, "qGroupSize", "is " + str(group) + ", which does not divide K = " + str(k));
  if (sz.dim() != 3 || sz.sizes[1] != n || sz.sizes[2] != 2) {
    fail_arg(op, "qScaleAndZeros", "must have sizes [K / qGroupSize, " + str(n) + ", 2]");
  }
  if (sz.dtype != dt) {
    fail_arg(op, "qScaleAndZeros", std::string("has dtype ") + dtype_name(sz.dtype) + ", 'X' has " + dtype_name(dt));
  }
  // libtorch reads K / G groups whatever dim 0 says (past the end when it is
  // smaller) and reads the pairs as if contiguous: both refused here.
  if (sz.sizes[0] < k / group) {
    fail_arg(op, "qScaleAndZeros", "has " + str(sz.sizes[0]) + " groups, K / qGroupSize = " + str(k / group));
  }
  if (!sz.is_contiguous()) fail_arg(op, "qScaleAndZeros", "must be contiguous");
  // libtorch's kernels take blocks of 16, 32, 48 or 64 columns only.
  if (n % 16 != 0) fail_arg(op, "w", "has " + str(n) + " rows (N); expected a multiple of 16");

  Tensor out = empty_contiguous({m, n}, dt);
  if (m == 0 || n == 0) return out;

  const Int4PackCapability cap = int4pack_capability();
  const Arith arith = cap == Int4PackCapability::kDefault                   ? Arith::kRounded
                      : cap == Int4PackCapability::kAvx2 && dt == kBFloat16 ? Arith::kFusedFoldedZero
                                                                            : Arith::kFused;
  // Per-thread buffers, kept between calls: x in float32 (16-bit x) and the
  // sums of one tile (16-bit outputs).
  thread_local Scratch x_buf, acc_buf;
  Problem p{};
  if (dt == kFloat32) {
    p.x = static_cast<const float*>(x.data());
  } else {
    float* const xf = x_buf.floats(m * k);
    const uint16_t* src = static_cast<const uint16_t*>(x.data());
    for (int64_t i = 0; i < m * k; ++i) xf[i] = dt == kBFloat16 ? bf16_to_float(src[i]) : half_to_float(src[i]);
    p.x = xf;
  }
  p.m = m;
  p.k = k;
  p.n = n;
  p.group = group;
  p.sz = sz.data();
  p.sz_dtype = sz.dtype;
  p.w = static_cast<const uint8_t*>(w.data());
  p.cap = cap;
  const TileFn tiles = tile_fn(arith);
  if (dt == kFloat32) {
    float* o = static_cast<float*>(out.data());
    std::memset(o, 0, static_cast<size_t>(m * n) * sizeof(float));
    p.ldacc = n;
    for (int64_t n0 = 0; n0 < n; n0 += kTile) tiles(p, n0, o + n0);
    return out;
  }
  float* const acc = acc_buf.floats(m * kTile);
  p.ldacc = kTile;
  uint16_t* o = static_cast<uint16_t*>(out.data());
  for (int64_t n0 = 0; n0 < n; n0 += kTile) {
    std::memset(acc, 0, static_cast<size_t>(m * kTile) * sizeof(float));
    tiles(p, n0, acc);
    for (int64_t i = 0; i < m; ++i) {
      for (int j = 0; j < kTile; ++j) {
        const float v = acc[i * kTile + j];
        o[i * n + n0 + j] = dt == kBFloat16 ? float_to_bf16(v) : float_to_half(v);
      }
    }
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X, AtenTensorHandle w,
                                                                        AtenTensorHandle qGroupSize,
                                                                        AtenTensorHandle qScaleAndZeros,
                                                                        AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu__weight_int4pack_mm_cpu_tensor";
    const Tensor& x = as_tensor(X, "X");
    const Tensor& wt = as_tensor(w, "w");
    const Tensor& g = as_tensor(qGroupSize, "qGroupSize");
    const Tensor& sz = as_tensor(qScaleAndZeros, "qScaleAndZeros");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::weight_int4pack_mm(x, wt, kernels::int4pack_group_size(g, op), sz, op));
  });
}
