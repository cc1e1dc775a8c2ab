#include "batch_probe.hpp"

#include <vector>

#include "dtypes.hpp"

namespace aotrun_triton {
namespace {

// Whether the package accepts every input with dim 0 = rows (the output
// shape query: no data is read, nothing is run for shapes seen before);
// *shapes (when given) receives the outputs' dims, concatenated.
bool accepts(aotrun::cxx::Runner& runner, const PackageSpecs& specs, int64_t rows, std::string* why,
             std::vector<int64_t>* shapes_out = nullptr) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLDataType> dtypes;
  size_t out_dims = 0;
  for (const Spec& s : specs.inputs) {
    std::vector<int64_t> shape = s.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0) shape[d] = d == 0 ? rows : 2;
    }
    shapes.push_back(std::move(shape));
    dtypes.push_back(to_dlpack(s.dtype));
  }
  for (const Spec& s : specs.outputs) out_dims += static_cast<size_t>(s.ndim);
  try {
    return runner.accepts(dtypes, shapes, out_dims, shapes_out, why);
  } catch (const aotrun::cxx::Error& e) {  // any refusal means: not this batch
    *why = e.what();
    return false;
  }
}

}  // namespace

ServedBatches served_batches(const aotrun::cxx::Package& package, const PackageSpecs& specs, int32_t want) {
  ServedBatches r;
  aotrun::cxx::Runner runner(package);
  std::string why;
  std::vector<int64_t> at1, at2;
  if (!accepts(runner, specs, 1, &why, &at1)) {
    r.reason = "a batch of 1 is refused (" + why + ")";
    return r;
  }
  // Stacking requests is right only if each output's rows are the inputs'
  // rows and nothing else grows with them: an output dim besides dim 0 that
  // follows the batch (CLIP's logits: [images, texts]) would mix requests.
  if (want >= 2 && accepts(runner, specs, 2, &why, &at2) && at2.size() == at1.size()) {
    size_t at = 0;
    for (size_t o = 0; o < specs.outputs.size(); ++o) {
      for (int32_t d = 0; d < specs.outputs[o].ndim; ++d, ++at) {
        const bool row = d == 0 && at1[at] == 1 && at2[at] == 2;
        if ((d == 0 && !row) || (d > 0 && at1[at] != at2[at])) {
          r.reason = "output " + std::to_string(o) + " dim " + std::to_string(d) + " is " + std::to_string(at1[at]) +
                     " for a batch of 1 and " + std::to_string(at2[at]) + " for 2: stacked requests would mix in it";
          return r;
        }
      }
    }
  }
  // Batches between two served ones are served (the model's dims are ranges).
  int32_t lo = 1, hi = want;
  if (accepts(runner, specs, want, &why)) {
    r.max = want;
    return r;
  }
  const std::string top = why;
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    (accepts(runner, specs, mid, &why) ? lo : hi) = mid;
  }
  r.max = lo;
  r.reason = "a batch of " + std::to_string(want) + " is refused (" + top + ")";
  return r;
}

}  // namespace aotrun_triton
