#include "outputs.hpp"

#include <cstring>

#include "error.hpp"

namespace aotrun::cli {

std::vector<HostTensor> allocate_outputs(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                         const std::vector<TensorSpec>& specs) {
  size_t capacity = 0;
  for (const TensorSpec& spec : specs) capacity += spec.shape.size();
  // One spare element keeps data() non-null when every output is a scalar.
  std::vector<int64_t> shapes(capacity + 1, 0);
  check(aotrun_runner_get_output_shapes(runner, inputs.data(), inputs.size(), shapes.data(), capacity),
        "computing output shapes");
  std::vector<HostTensor> outputs;
  outputs.reserve(specs.size());
  size_t offset = 0;
  for (const TensorSpec& spec : specs) {
    std::vector<int64_t> shape(shapes.begin() + static_cast<std::ptrdiff_t>(offset),
                               shapes.begin() + static_cast<std::ptrdiff_t>(offset + spec.shape.size()));
    offset += spec.shape.size();
    outputs.emplace_back(spec.name, spec.dtype, std::move(shape));
  }
  return outputs;
}

std::vector<HostTensor> run_allocating(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                       const std::vector<TensorSpec>& specs, const std::string& what) {
  std::vector<DLManagedTensor*> raw(specs.size(), nullptr);
  check(aotrun_runner_run_alloc(runner, inputs.data(), inputs.size(), raw.data(), raw.size()), what);
  // Released on every path, also when a copy below throws.
  struct Release {
    std::vector<DLManagedTensor*>& all;
    ~Release() {
      for (DLManagedTensor* m : all) {
        if (m != nullptr && m->deleter != nullptr) m->deleter(m);
      }
    }
  } release{raw};
  std::vector<HostTensor> outputs;
  outputs.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const DLTensor& t = raw[i]->dl_tensor;
    outputs.emplace_back(specs[i].name, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.ndim));
    if (outputs.back().nbytes() != 0) std::memcpy(outputs.back().data(), t.data, outputs.back().nbytes());
  }
  return outputs;
}

}  // namespace aotrun::cli
