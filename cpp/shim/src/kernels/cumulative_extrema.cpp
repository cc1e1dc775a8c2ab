// aoti_torch_cpu_cummax and aoti_torch_cpu_cummin: the running maximum
// (minimum) along one dim and the int64 index where it was found, as two new
// contiguous tensors of self's shape (values in self's dtype). The walk is
// libtorch's CPU kernel's: an element replaces the running value when it is
// NaN or, the running value not being NaN, when it is >= (<=) it, so ties
// take the last index, a NaN sticks once seen and each later NaN moves the
// index to itself. A 0-d self gives its value and index 0; empty tensors give
// empty results. Real dtypes and bool (libtorch's set less the unsigned
// 16/32/64-bit ones, which it refuses too).
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

void cum_extremum(const Tensor& self, int64_t dim, bool max, Tensor* values, Tensor* indices, const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd, op);
  Tensor vals = empty_contiguous(self.sizes, self.dtype);
  Tensor idxs = empty_contiguous(self.sizes, kInt64);
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    if (self.numel() == 0) return;
    const void* in = self.data();
    void* vout = vals.data();
    void* iout = idxs.data();
    if (nd == 0) {
      store<S>(vout, 0, load<S>(in, 0));
      store<int64_t>(iout, 0, 0);
      return;
    }
    const std::vector<int64_t> ost = contiguous_strides(self.sizes);
    const int64_t len = self.sizes[d], ist = self.strides[d], os = ost[d];
    for_each_index(self.sizes, d, [&](const std::vector<int64_t>& idx) {
      const int64_t ibase = offset_of(idx, self.strides), obase = offset_of(idx, ost);
      S best = load<S>(in, ibase);
      K bk = Elem<S>::key(best);
      int64_t at = 0;
      for (int64_t i = 0; i < len; ++i) {
        const S cur = load<S>(in, ibase + i * ist);
        const K ck = Elem<S>::key(cur);
        if (is_nan(ck) || (!is_nan(bk) && (max ? ck >= bk : ck <= bk))) {
          best = cur;
          bk = ck;
          at = i;
        }
        store<S>(vout, obase + i * os, best);
        store<int64_t>(iout, obase + i * os, at);
      }
    });
  });
  *values = std::move(vals);
  *indices = std::move(idxs);
}

}  // namespace aotrun::shim::kernels

namespace {

AOTITorchError cum_extremum_entry(const char* fn, AtenTensorHandle self, int64_t dim, bool max, AtenTensorHandle* ret0,
                                  AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(fn, [&] {
    Tensor v, i;
    kernels::cum_extremum(as_tensor(self, "self"), dim, max, &v, &i, fn);
    AtenTensorHandle* r0 = out_arg(ret0, "ret0");
    AtenTensorHandle* r1 = out_arg(ret1, "ret1");
    *r0 = new_handle(std::move(v));
    *r1 = new_handle(std::move(i));
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                AtenTensorHandle* ret1) {
  return cum_extremum_entry("aoti_torch_cpu_cummax", self, dim, true, ret0, ret1);
}

extern "C" AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                AtenTensorHandle* ret1) {
  return cum_extremum_entry("aoti_torch_cpu_cummin", self, dim, false, ret0, ret1);
}
