// Weight-packed float32 GEMM (packed_gemm.hpp): panel_gemm.hpp's panels, or
// oneDNN's pack API.
//
// oneDNN's API is Fortran-style (column-major). A row-major out [M, N] =
// x [M, K] @ wᵀ is, read column-major, outᵀ [N, M] = w' [N, K] @ xᵀ [K, M]:
// the weight is the first ("A") operand, packed once; x is the second, as is.
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compute/onednn.hpp"
#include "compute/packed_gemm.hpp"
#include "compute/packed_memory.hpp"
#include "compute/panel_gemm.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"
#include "mkldnn_blob.hpp"

namespace aotrun::shim::kernels {
namespace {

// The signatures libdnnl 2.x exports them with (dim_t is int64_t).
using PackGetSize = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb, const int64_t* m,
                                      const int64_t* n, const int64_t* k, const int64_t* lda, const int64_t* ldb,
                                      size_t* size, bool* pack);
using Pack = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb, const int64_t* m,
                               const int64_t* n, const int64_t* k, const int64_t* lda, const int64_t* ldb,
                               const float* src, float* dst);
using Compute = dnnl_status_t (*)(const char* transa, const char* transb, const int64_t* m, const int64_t* n,
                                  const int64_t* k, const float* a, const int64_t* lda, const float* b,
                                  const int64_t* ldb, const float* beta, float* c, const int64_t* ldc);

struct PackApi {
  PackGetSize get_size = nullptr;
  Pack pack = nullptr;
  Compute compute = nullptr;
  bool ok() const { return get_size != nullptr && pack != nullptr && compute != nullptr; }
};

// AOTRUN_SHIM_PACKED_GEMM: "0" none, "onednn" oneDNN's only, else both.
bool packing_env_is(const char* value) {
  const char* env = std::getenv("AOTRUN_SHIM_PACKED_GEMM");
  return env != nullptr && std::strcmp(env, value) == 0;
}

bool panels_enabled() {
  static const bool on = panel_gemm_supported() && !packing_env_is("0") && !packing_env_is("onednn");
  return on;
}

// Looked up in the libdnnl that defines dnnl_sgemm (the one the shim was
// linked with), not in the global scope: the shim may be loaded RTLD_LOCAL.
PackApi find_api() {
  PackApi api;
  if (packing_env_is("0")) return api;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&dnnl_sgemm), &info) == 0 || info.dli_fname == nullptr) return api;
  void* lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) return api;
  // The handle is kept (the library is the shim's own dependency anyway).
  api.get_size =
      reinterpret_cast<PackGetSize>(dlsym(lib, "_ZN4dnnl4impl3cpu19sgemm_pack_get_sizeEPKcS3_S3_PKlS5_S5_S5_S5_PmPb"));
  api.pack = reinterpret_cast<Pack>(dlsym(lib, "_ZN4dnnl4impl3cpu10sgemm_packEPKcS3_S3_PKlS5_S5_S5_S5_PKfPf"));
  api.compute =
      reinterpret_cast<Compute>(dlsym(lib, "_ZN4dnnl4impl3cpu13sgemm_computeEPKcS3_PKlS5_S5_PKfS5_S7_S5_S7_PfS5_"));
  return api;
}

const PackApi& api() {
  static const PackApi a = find_api();
  return a;
}

// A weight packed for one OpenMP team size; empty when oneDNN said packing
// does not pay for it (remembered so it is asked once). Its transa and lda
// follow from the weight's strides, which are part of its key. The buffer
// is not zero-filled first: oneDNN's pack writes every element its compute
// reads, padding included (the shim and pt2 suites and the real tier's
// outputs were unchanged with the buffer filled with NaNs before packing,
// at each ISA cap), and a std::vector's fill was a second pass over tens of
// MB in a convolution net's first call.
struct PackedWeight {
  std::shared_ptr<float> data;  // packed_memory.hpp's
  bool empty() const { return data == nullptr; }
};

void check(dnnl_status_t st, const char* what, const char* op) {
  if (st != dnnl_success) {
    throw ShimError(std::string(op) + ": oneDNN's " + what + " failed with status " +
                    std::to_string(static_cast<int>(st)));
  }
}

}  // namespace

bool packed_gemm_available() { return api().ok(); }

namespace {

// The packed weight kept with `owner` under `key` (+ the team size), packed
// from the [N, K] weight (transa/lda as the pack API takes them) that `fill`
// returns on first use (held by the pointer it returns, released after
// packing); null when oneDNN says packing does not pay.
std::shared_ptr<PackedWeight> packed_weight(Storage& owner, std::vector<int64_t> key, const char* transa, int64_t n,
                                            int64_t m, int64_t k, int64_t lda, int64_t ldb,
                                            const std::function<std::shared_ptr<const void>()>& fill, const char* op) {
  key.push_back(onednn::team_size());
  const auto packed = std::static_pointer_cast<PackedWeight>(owner.derived(key, [&] {
    auto p = std::make_shared<PackedWeight>();
    // The pack's blocking is chosen for the M it is given, and the packed
    // weight then serves every M (its layout is recorded in it). Packed
    // for M = 1 it is a gemv layout, larger and slower for every other M
    // (measured, docs/PERFORMANCE.md section 16); packed for M >= 16 it
    // was as fast as or faster than the per-call GEMM from M = 1 to 394.
    const int64_t mp = std::max<int64_t>(m, 16);
    size_t bytes = 0;
    bool worth = false;
    check(api().get_size("A", transa, "N", &n, &mp, &k, &lda, &ldb, &bytes, &worth), "sgemm_pack_get_size", op);
    if (!worth || bytes == 0) return std::shared_ptr<void>(p);
    const std::shared_ptr<const void> held = fill();
    const float* w = static_cast<const float*>(held.get());
    p->data = packed_floats(static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float)));
    check(api().pack("A", transa, "N", &n, &mp, &k, &lda, &ldb, w, p->data.get()), "sgemm_pack", op);
    return std::shared_ptr<void>(p);
  }));
  return packed->empty() ? nullptr : packed;
}

void compute(const PackedWeight& packed, const Tensor& out, const Tensor& x, int64_t n, int64_t m, int64_t k,
             int64_t lda, int64_t ldb, int64_t ldc, float beta, const char* op) {
  check(api().compute("P", "N", &n, &m, &k, packed.data.get(), &lda, static_cast<const float*>(x.data()), &ldb, &beta,
                      static_cast<float*>(out.data()), &ldc),
        "sgemm_compute", op);
}

// oneDNN's packed compute opens an OpenMP team whatever the size (its sgemm
// does not for small ones): below kSerialGemmMacs (panel_gemm.hpp) the
// team is set to one thread for the call, the pack included, whose layout
// follows the team size. M counts as at least 16, the rows oneDNN's pack
// is made for.
class SerialIfSmall {
 public:
  SerialIfSmall(int64_t m, int64_t n, int64_t k) : saved_(omp_get_max_threads()) {
    on_ = std::max<int64_t>(m, 16) * n * k < kSerialGemmMacs && saved_ > 1;
    if (on_) omp_set_num_threads(1);
  }
  ~SerialIfSmall() {
    if (on_) omp_set_num_threads(saved_);
  }
  SerialIfSmall(const SerialIfSmall&) = delete;
  SerialIfSmall& operator=(const SerialIfSmall&) = delete;

 private:
  int saved_;
  bool on_ = false;
};

// x [M, K] and out [M, N], float32 with unit column strides: their row
// strides (as the pack API reads them), or false.
bool rows_of(const Tensor& out, const Tensor& x, int64_t m, int64_t n, int64_t k, int64_t* ldb, int64_t* ldc) {
  if (x.dtype != kFloat32 || out.dtype != kFloat32 || x.dim() != 2 || out.dim() != 2) return false;
  if (x.sizes[0] != m || x.sizes[1] != k || out.sizes[0] != m || out.sizes[1] != n || m == 0 || n == 0 || k == 0) {
    return false;
  }
  if ((x.strides[1] != 1 && k > 1) || (out.strides[1] != 1 && n > 1)) return false;
  *ldb = m > 1 ? x.strides[0] : k;
  *ldc = m > 1 ? out.strides[0] : n;
  return *ldb >= k && *ldc >= n;
}

// addend as [M, N] rows with unit column stride (packed_linear's form):
// its row stride, or false.
bool addend_rows(const Tensor& a, int64_t m, int64_t n, int64_t* ld) {
  if (a.dtype != kFloat32 || a.dim() != 2 || a.sizes[0] != m || a.sizes[1] != n) return false;
  if (a.strides[1] != 1 && n > 1) return false;
  *ld = m > 1 ? a.strides[0] : n;
  return *ld >= n;
}

// out += addend, when there is one: after oneDNN's compute, which has no
// such epilogue, by the same pass the unpacked GEMM's residual takes.
void add_after(const Tensor& out, const Tensor* addend, const char* op) {
  if (addend != nullptr) apply_binary(out, out, *addend, BinaryOp::kAdd, Unary{}, op);
}

}  // namespace

namespace {

// The weight [N, K] at w[j * sn + p * sk] in panels, made once per storage
// (panel_gemm's layout does not depend on the team size). With AVX-512, a
// frozen linear's blob already in panel rows is read where the model
// keeps it: no packed copy beside the model's own (mkldnn_blob.hpp's
// blob_as_panels). The AVX2 kernel, 16 columns of such a block at a time,
// ran frozen GPT-2 and ViT 7-40% slower in place than on panels of its own
// (docs/PERFORMANCE.md section 26): there the blob is packed like any
// other weight.
std::shared_ptr<PanelWeight> panel_weight(const Tensor& w, int64_t n, int64_t k, int64_t sn, int64_t sk) {
  return std::static_pointer_cast<PanelWeight>(w.storage->derived({-8, w.storage_offset, n, k, sn, sk}, [&] {
    int64_t width = 0, block_stride = 0;
    const float* blob =
        panel_width() == kPanelWidthAvx512 ? blob_as_panels(w, panel_width(), &width, &block_stride) : nullptr;
    if (blob != nullptr) {
      return std::shared_ptr<void>(panels_over(blob, n, k, width, block_stride));
    }
    const std::shared_ptr<const void> held = w.read();
    return std::shared_ptr<void>(pack_panels(static_cast<const float*>(held.get()), n, k, sn, sk));
  }));
}

}  // namespace

bool packed_linear(const Tensor& out, const Tensor& x, const Tensor& w, float beta, const char* op, const Tensor* bias,
                   const Tensor* addend) {
  if (w.storage == nullptr || !w.storage->read_only()) return false;
  if (w.dtype != kFloat32 || w.dim() != 2) return false;
  const int64_t m = x.dim() == 2 ? x.sizes[0] : 0, k = w.sizes[1], n = w.sizes[0];
  int64_t ldb = 0, ldc = 0;
  if (!rows_of(out, x, m, n, k, &ldb, &ldc)) return false;
  if (bias != nullptr && (beta != 0.0f || bias->dtype != kFloat32 || bias->dim() != 1 || bias->sizes[0] != n)) {
    return false;
  }
  const bool row_major = w.strides[1] == 1 && w.strides[0] >= k, col_major = w.strides[0] == 1 && w.strides[1] >= n;
  if (!row_major && !col_major) return false;
  int64_t ld_add = 0;
  if (addend != nullptr && !addend_rows(*addend, m, n, &ld_add)) return false;
  if (panels_enabled() && (beta == 0.0f || beta == 1.0f)) {
    const auto packed = panel_weight(w, n, k, w.strides[0], w.strides[1]);
    const float* b = nullptr;
    bool accumulate = beta == 1.0f;
    if (bias != nullptr && (bias->strides[0] == 1 || n == 1)) {
      b = static_cast<const float*>(bias->data());
    } else if (bias != nullptr) {
      copy_elements(out, *bias);
      accumulate = true;
    }
    panel_gemm(*packed, m, static_cast<const float*>(x.data()), ldb, b, accumulate, static_cast<float*>(out.data()),
               ldc, addend != nullptr ? static_cast<const float*>(addend->data()) : nullptr, ld_add);
    return true;
  }
  if (!api().ok()) return false;
  const SerialIfSmall serial(m, n, k);
  if (!row_major) {
    // Stride (1, ldw): [N, K] column-major, a [K, N] row-major mat2 (GPT-2's
    // Conv1D weight). oneDNN declines to pack that form ("N": not worth it)
    // and then packs it on every call; transposed once into [N, K]
    // row-major, it is packed like the others.
    const int64_t ld = w.strides[1];
    const auto packed = packed_weight(
        *w.storage, {-4, w.storage_offset, n, k, ld}, "T", n, m, k, k, ldb,
        [&] {
          const std::shared_ptr<float[]> t(new float[static_cast<size_t>(n * k)]);
          const std::shared_ptr<const void> held = w.read();
          const float* src = static_cast<const float*>(held.get());
          for (int64_t p = 0; p < k; ++p)
            for (int64_t j = 0; j < n; ++j) t[j * k + p] = src[p * ld + j];
          return std::shared_ptr<const void>(t, t.get());
        },
        op);
    if (packed == nullptr) return false;
    if (bias != nullptr) copy_elements(out, *bias);
    compute(*packed, out, x, n, m, k, k, ldb, ldc, bias != nullptr ? 1.0f : beta, op);
    add_after(out, addend, op);
    return true;
  }
  // w [N, K] row-major (stride (ldw, 1)) is, column-major, [K, N]: "T".
  const int64_t lda = w.strides[0];
  const auto packed = packed_weight(
      *w.storage, {-2, w.storage_offset, n, k, w.strides[0], w.strides[1]}, "T", n, m, k, lda, ldb,
      [&] { return w.read(); }, op);
  if (packed == nullptr) return false;
  if (bias != nullptr) copy_elements(out, *bias);
  compute(*packed, out, x, n, m, k, lda, ldb, ldc, bias != nullptr ? 1.0f : beta, op);
  add_after(out, addend, op);
  return true;
}

bool derived_on_panels(int64_t k) { return panels_enabled() && k <= kDerivedPanelMaxK; }

std::shared_ptr<const PanelWeight> derived_panels(Storage& owner, const std::vector<int64_t>& key, int64_t n, int64_t k,
                                                  const std::function<void(float*)>& fill) {
  if (!derived_on_panels(k) || !owner.read_only()) return nullptr;
  std::vector<int64_t> panel_key = key;
  panel_key.push_back(-16);  // apart from a pack of oneDNN's under the same key
  return std::static_pointer_cast<const PanelWeight>(owner.derived(panel_key, [&] {
    const std::unique_ptr<float[]> w(new float[static_cast<size_t>(n * k)]);  // fill writes all of W
    fill(w.get());
    return std::shared_ptr<void>(pack_panels(w.get(), n, k, k, 1));
  }));
}

bool packed_gemm_derived(const Tensor& out, const Tensor& x, Storage& owner, const std::vector<int64_t>& key, int64_t n,
                         const std::function<void(float*)>& fill, float beta, const char* op) {
  if (!api().ok() || !owner.read_only()) return false;
  const int64_t m = x.dim() == 2 ? x.sizes[0] : 0, k = x.dim() == 2 ? x.sizes[1] : 0;
  int64_t ldb = 0, ldc = 0;
  if (!rows_of(out, x, m, n, k, &ldb, &ldc)) return false;
  const SerialIfSmall serial(m, n, k);
  const auto packed = packed_weight(
      owner, key, "T", n, m, k, k, ldb,
      [&] {
        // Uninitialised: fill writes all of W.
        const std::shared_ptr<float[]> w(new float[static_cast<size_t>(n * k)]);
        fill(w.get());
        return std::shared_ptr<const void>(w, w.get());
      },
      op);
  if (packed == nullptr) return false;
  compute(*packed, out, x, n, m, k, k, ldb, ldc, beta, op);
  return true;
}

}  // namespace aotrun::shim::kernels
