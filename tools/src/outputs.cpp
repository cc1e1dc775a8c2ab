#include "outputs.hpp"

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

}  // namespace aotrun::cli
