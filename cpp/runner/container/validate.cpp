#include "runner/container/validate.hpp"

#include <cstring>

#include "base/checked_math.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

// Names a tensor in messages. Built only on failure: the checks run on every
// call and must not allocate.
struct Name {
  const char* kind;
  size_t index;
  const TensorSpec& spec;
  std::string str() const { return std::string(kind) + " " + std::to_string(index) + " ('" + spec.name + "')"; }
};
std::string operator+(const Name& n, const char* s) { return n.str() + s; }

bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

void check_device(const DLTensor& t, DLDevice device, const Name& what) {
  const int32_t type = device_type_of(t.device), want = device_type_of(device);
  if (type != want || t.device.device_id != device.device_id) {
    fail(Code::InvalidArgument, what + " is on device (" + std::to_string(type) + ", " +
                                    std::to_string(t.device.device_id) + ") but the runner runs on (" +
                                    std::to_string(want) + ", " + std::to_string(device.device_id) + ")");
  }
}

// The byte size of the tensor must be representable: a shape whose element
// count wraps would pass "NULL data with 0 elements" and reach the package.
// Returns it, for check_layout (computed once per tensor: this is the hot path).
uint64_t check_extent(const DLTensor& t, const Name& what) {
  uint64_t bytes = 0;
  if (!checked_bytes(t, &bytes)) {
    fail(Code::InvalidArgument, what + " has shape " + shape_string(t.shape, t.ndim) + ", too large to address");
  }
  return bytes;
}

// Whether `t` has exactly the strides `layout` (an input's spec: the layout
// its model was compiled for), dims of size 1 aside (their stride is never
// used). Such a layout is dense: the same bytes as compact, in another order.
bool has_layout(const DLTensor& t, const std::vector<int64_t>& layout) {
  if (layout.empty() || t.strides == nullptr || layout.size() != static_cast<size_t>(t.ndim)) return false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] != 1 && t.strides[d] != layout[static_cast<size_t>(d)]) return false;
  }
  return true;
}

// `bytes` is check_extent's answer for `t`; `layout` the strides an input
// may have besides compact (its spec's; empty: none).
void check_layout(const DLTensor& t, uint64_t bytes, const Name& what, const std::vector<int64_t>& layout = {}) {
  if (!is_compact(t) && !has_layout(t, layout)) {
    if (!layout.empty()) {
      fail(Code::InvalidArgument, what + " has strides " + shape_string(t.strides, t.ndim) +
                                      "; its model was compiled for strides " +
                                      shape_string(layout.data(), int(layout.size())) +
                                      " (give those, or a compact row-major tensor, which is converted)");
    }
    fail(Code::InvalidArgument, what + " is not contiguous (strides " + shape_string(t.strides, t.ndim) + ")");
  }
  if (t.data == nullptr && numel(t) != 0) fail(Code::InvalidArgument, what + " has a NULL data pointer");
  if (t.data == nullptr) return;  // empty: the offset is never applied
  // data + byte_offset + the tensor's bytes must stay inside the address
  // space: the runner folds the offset into the pointer the package sees,
  // and a wrapped pointer lands anywhere.
  static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "64-bit address space assumed");
  uint64_t end = 0, last = 0;
  if (!checked_add<uint64_t>(t.byte_offset, bytes, &end) ||
      !checked_add<uint64_t>(reinterpret_cast<uintptr_t>(t.data), end, &last)) {
    fail(Code::InvalidArgument, what + " has byte_offset " + std::to_string(t.byte_offset) + ", which with its " +
                                    std::to_string(bytes) + " bytes runs past the end of the address space");
  }
}

void check_input_shape(const TensorSpec& spec, const DLTensor& t, const Name& what) {
  if (!spec.known) {  // a .pt2 without input checks: nothing to compare with
    // Rank bounded like every spec's (32): the dims are read below.
    if (t.ndim < 0 || t.ndim > 32 || (t.ndim > 0 && t.shape == nullptr)) {
      fail(Code::InvalidArgument, what + " has an invalid shape");
    }
    for (int d = 0; d < t.ndim; ++d) {
      if (t.shape[d] < 0) fail(Code::InvalidArgument, what + " has shape " + shape_string(t.shape, t.ndim));
    }
    return;
  }
  if (!same_dtype(t.dtype, spec.dtype)) {
    fail(Code::InvalidArgument, what + " has dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(spec.dtype));
  }
  if (t.ndim != static_cast<int>(spec.shape.size())) {
    fail(Code::InvalidArgument, what + " has rank " + std::to_string(t.ndim) + ", expected " +
                                    std::to_string(spec.shape.size()) + " " +
                                    shape_string(spec.shape.data(), int(spec.shape.size())));
  }
  if (t.ndim > 0 && t.shape == nullptr) fail(Code::InvalidArgument, what + " has a NULL shape");
  for (int d = 0; d < t.ndim; ++d) {
    const int64_t want = spec.shape[d];
    if (t.shape[d] < 0 || (want >= 0 && t.shape[d] != want)) {
      fail(Code::InvalidArgument, what + " has shape " + shape_string(t.shape, t.ndim) + ", expected " +
                                      shape_string(spec.shape.data(), int(spec.shape.size())) + " (-1 = any)");
    }
  }
}

}  // namespace

// Shapes are non-negative here (check_input_shape / validate_outputs); the
// stride product is overflow-checked anyway, since an empty tensor may have
// huge other dims.

size_t total_output_dims(const Package& pkg) {
  size_t n = 0;
  for (const auto& o : pkg.outputs()) n += o.shape.size();
  return n;
}

namespace {

void check_input_count(const Package& pkg, const DLTensor* inputs, size_t num_inputs) {
  if (num_inputs != pkg.inputs().size()) {
    fail(Code::InvalidArgument, "package '" + pkg.name() + "' takes " + std::to_string(pkg.inputs().size()) +
                                    " inputs, got " + std::to_string(num_inputs));
  }
  if (num_inputs > 0 && inputs == nullptr) fail(Code::InvalidArgument, "inputs is NULL");
}

}  // namespace

void validate_input_shapes(const Package& pkg, const DLTensor* inputs, size_t num_inputs) {
  check_input_count(pkg, inputs, num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const Name what{"input", i, pkg.inputs()[i]};
    check_input_shape(pkg.inputs()[i], inputs[i], what);
    check_extent(inputs[i], what);
  }
}

void validate_inputs(const Package& pkg, const DLTensor* inputs, size_t num_inputs, DLDevice device) {
  // One pass per tensor, in validate_input_shapes' order of checks first.
  check_input_count(pkg, inputs, num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const Name what{"input", i, pkg.inputs()[i]};
    check_input_shape(pkg.inputs()[i], inputs[i], what);
    const uint64_t bytes = check_extent(inputs[i], what);
    check_device(inputs[i], device, what);
    check_layout(inputs[i], bytes, what, pkg.inputs()[i].strides);
  }
}

namespace {

void check_output_count(const Package& pkg, const DLTensor* outputs, size_t num_outputs) {
  if (num_outputs != pkg.outputs().size()) {
    fail(Code::InvalidArgument, "package '" + pkg.name() + "' produces " + std::to_string(pkg.outputs().size()) +
                                    " outputs, got " + std::to_string(num_outputs) + " output tensors");
  }
  if (num_outputs > 0 && outputs == nullptr) fail(Code::InvalidArgument, "outputs is NULL");
}

// Where an output's memory is and whether it can be written as one block.
void check_output_memory(const DLTensor& t, DLDevice device, const Name& what) {
  check_device(t, device, what);
  check_layout(t, check_extent(t, what), what);
}

}  // namespace

void validate_outputs(const Package& pkg, const DLTensor* outputs, size_t num_outputs, const int64_t* expected,
                      DLDevice device) {
  const auto& specs = pkg.outputs();
  check_output_count(pkg, outputs, num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) {
    const DLTensor& t = outputs[i];
    const Name what{"output", i, specs[i]};
    const int rank = static_cast<int>(specs[i].shape.size());
    if (!same_dtype(t.dtype, specs[i].dtype)) {
      fail(Code::InvalidArgument,
           what + " has dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(specs[i].dtype));
    }
    if (t.ndim != rank) {
      fail(Code::InvalidArgument, what + " has rank " + std::to_string(t.ndim) + ", expected " + std::to_string(rank));
    }
    if (rank > 0 && t.shape == nullptr) fail(Code::InvalidArgument, what + " has a NULL shape");
    for (int d = 0; d < rank; ++d) {
      if (t.shape[d] != expected[d]) {
        fail(Code::InvalidArgument, what + " has shape " + shape_string(t.shape, t.ndim) + ", expected " +
                                        shape_string(expected, rank) + " for these inputs");
      }
    }
    expected += rank;
    check_output_memory(t, device, what);
  }
}

void validate_output_layout(const Package& pkg, const DLTensor* outputs, size_t num_outputs, DLDevice device) {
  check_output_count(pkg, outputs, num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) {
    const DLTensor& t = outputs[i];
    const Name what{"output", i, pkg.outputs()[i]};
    if (t.ndim < 0 || t.ndim > 32 || (t.ndim > 0 && t.shape == nullptr)) {
      fail(Code::InvalidArgument, what + " has an invalid rank or a NULL shape");
    }
    check_output_memory(t, device, what);
  }
}

}  // namespace aotrun
