#include "package/pt2/specs/input_layout.hpp"

#include <algorithm>
#include <numeric>

#include "base/checked_math.hpp"
#include "base/dltensor.hpp"

namespace aotrun::pt2 {

bool same_layout(const int64_t* shape, const int64_t* strides, const std::vector<int64_t>& expected) {
  for (size_t d = 0; d < expected.size(); ++d) {
    if (shape[d] != 1 && strides[d] != expected[d]) return false;
  }
  return true;
}

bool layout_from_checks(const InputCheck& c, std::vector<int64_t>* strides, std::string* why) {
  strides->clear();
  const size_t rank = c.dims.size();
  if (c.strides.size() != rank) return true;  // no stride stated
  // Row-major strides where every later dim is static (-1: symbolic). A
  // stated stride is static, so it can disagree only with a computable one
  // or where a later dim is dynamic.
  bool row_major = true, all_stated = true;
  int64_t step = 1;
  bool step_known = true;
  for (size_t k = rank; k-- > 0;) {
    const int64_t s = c.strides[k];
    if (s < 0) all_stated = false;
    if (s >= 0 && c.dims[k] != 1 && (!step_known || s != step)) row_major = false;
    if (c.dims[k] < 0 || !checked_mul<int64_t>(step, c.dims[k], &step)) step_known = false;
  }
  if (row_major) return true;
  const std::string stated = shape_string(c.strides.data(), static_cast<int>(rank)) + " for shape " +
                             shape_string(c.dims.data(), static_cast<int>(rank)) + " (-1: dynamic or not stated)";
  if (!all_stated) {
    *why = "it was compiled for strides " + stated +
           ", a layout other than row-major that depends on a dynamic dim, which aotrun cannot provide";
    return false;
  }
  if (!dense_permutation(c.dims.data(), c.strides.data(), rank)) {
    *why = "it was compiled for strides " + stated + ", which are not a dense layout aotrun can provide";
    return false;
  }
  *strides = c.strides;
  return true;
}

bool dense_permutation(const int64_t* dims, const int64_t* strides, size_t rank) {
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), size_t{0});
  order.erase(std::remove_if(order.begin(), order.end(), [&](size_t d) { return dims[d] == 1; }), order.end());
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t want = 1;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t d = order[k];
    const bool outermost = k + 1 == order.size();
    if (strides[d] != want || (!outermost && (dims[d] < 0 || !checked_mul<int64_t>(want, dims[d], &want)))) {
      return false;
    }
  }
  return true;
}

}  // namespace aotrun::pt2
