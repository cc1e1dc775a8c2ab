#include "runner/container/container.hpp"

#include <vector>

#include "device/cpu/host_services.hpp"
#include "base/log.hpp"
#include "base/guard.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun {

Container::Container(const Package& pkg, RunnerDevice& device, DLDevice dl_device, int32_t num_models,
                     const std::vector<aotrun_pkg_constant>& constants, Code unsupported)
    : pkg_(pkg), device_(device), dl_device_(dl_device), own_stream_synchronous_(device.own_stream_synchronous()) {
  aotrun_pkg_create_args args{};
  args.struct_size = sizeof(args);
  args.num_models = num_models;
  args.device = dl_device;
  args.host = device.host();
  args.constants = constants.data();
  args.num_constants = constants.size();
  args.package_dir = pkg.dir().empty() ? nullptr : pkg.dir().c_str();
  aotrun_pkg_container* c = nullptr;
  const int32_t rc = package_call(pkg.name(), "container_create", [&] { return pkg.code().create(&c, &args); });
  if (rc != AOTRUN_PKG_OK || c == nullptr) {
    fail(rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY ? Code::OutOfMemory
         : rc == AOTRUN_PKG_ERR_UNSUPPORTED ? unsupported
                                            : Code::Package,
         pkg.package_error("container_create", rc));
  }
  c_ = c;
}

Container::~Container() {
  (void)device_.finish_own_stream();  // its failures were the runs' to report
  int32_t rc = 0;
  const Status st = guard_package_call(
      pkg_.name(), "container_destroy", [this] { return pkg_.code().fn().destroy(c_); }, &rc);
  if (!st.ok()) log_unreported(st, "while destroying a runner; its container may have leaked");
}

namespace {

bool has_offset(const DLTensor* t, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (t[i].byte_offset != 0) return true;
  return false;
}

}  // namespace

void Container::call(bool single_threaded, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                     size_t num_outputs, void* stream) {
  // Packages see byte_offset == 0 (the copy is off the common path).
  if (has_offset(inputs, num_inputs) || has_offset(outputs, num_outputs)) {
    call_folding_offsets(single_threaded, inputs, num_inputs, outputs, num_outputs, stream);
    return;
  }
  aotrun_pkg_run_args args{};
  args.struct_size = sizeof(args);
  args.inputs = inputs;
  args.num_inputs = num_inputs;
  args.outputs = outputs;
  args.num_outputs = num_outputs;
  args.stream = stream != nullptr ? stream : device_.own_stream();
  const PackageFunctions& f = pkg_.code().fn();
  const char* what = single_threaded ? "run_single_threaded" : "run";
  device_.begin_call();
  const int32_t rc = package_call(
      pkg_.name(), what, [&] { return single_threaded ? f.run_single_threaded(c_, &args) : f.run(c_, &args); });
  if (rc == AOTRUN_PKG_OK) return;
  const Status explained = device_.explain_failed_call(rc);
  if (!explained.ok()) fail(explained.code, "package '" + pkg_.name() + "': " + what + " " + explained.message);
  fail(cpu::from_pkg_code(rc), pkg_.package_error(what, rc));
}

void Container::call_folding_offsets(bool single_threaded, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                     size_t num_outputs, void* stream) {
  std::vector<DLTensor> adjusted(inputs, inputs + num_inputs);
  adjusted.insert(adjusted.end(), outputs, outputs + num_outputs);
  for (auto& t : adjusted) {
    if (t.data != nullptr) t.data = static_cast<char*>(t.data) + t.byte_offset;  // NULL only when empty
    t.byte_offset = 0;
  }
  call(single_threaded, adjusted.data(), num_inputs, adjusted.data() + num_inputs, num_outputs, stream);
}

void Container::call_sizing_outputs(bool single_threaded, const DLTensor* inputs, size_t num_inputs, OutputSink* sink) {
  std::vector<DLTensor> adjusted(inputs, inputs + num_inputs);  // packages see byte_offset == 0
  for (auto& t : adjusted) {
    if (t.data != nullptr) t.data = static_cast<char*>(t.data) + t.byte_offset;
    t.byte_offset = 0;
  }
  const char* what = single_threaded ? "run_single_threaded" : "run";
  device_.begin_call();
  const int32_t rc = package_call(pkg_.name(), what, [&] {
    return pkg_.code().run_sizing_outputs(c_, single_threaded, adjusted.data(), num_inputs, device_.own_stream(), sink);
  });
  if (rc != AOTRUN_PKG_OK) {
    const Status explained = device_.explain_failed_call(rc);
    if (!explained.ok()) fail(explained.code, "package '" + pkg_.name() + "': " + what + " " + explained.message);
    fail(cpu::from_pkg_code(rc), pkg_.package_error(what, rc));
  }
  finish_own_stream();
}

void Container::wait_own_stream() {
  const Status st = device_.finish_own_stream();
  if (!st.ok()) fail(st.code, "package '" + pkg_.name() + "': " + st.message);
}

void Container::check_input_values(const DLTensor* inputs, size_t num_inputs) {
  std::string why;
  const int32_t rc = pkg_.code().check_input_values(inputs, num_inputs, device_.own_stream(), &why);
  if (rc == AOTRUN_PKG_OK) return;
  fail(rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::InvalidArgument : Code::Package,
       "package '" + pkg_.name() + "': " + why);
}

void Container::output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity) {
  aotrun_pkg_shape_args args{};
  args.struct_size = sizeof(args);
  args.inputs = inputs;
  args.num_inputs = num_inputs;
  args.output_shapes = shapes;
  args.output_shapes_capacity = capacity;
  const int32_t rc =
      package_call(pkg_.name(), "get_output_shapes", [&] { return pkg_.code().fn().output_shapes(c_, &args); });
  if (rc != AOTRUN_PKG_OK) fail(cpu::from_pkg_code(rc), pkg_.package_error("get_output_shapes", rc));
  // The package is checked against its own declarations: a shape that
  // contradicts its output spec would blame a caller whose tensor conforms,
  // and run_alloc would hand out the wrong shape.
  const int64_t* d = shapes;
  for (const auto& spec : pkg_.outputs()) {
    const int nd = static_cast<int>(spec.shape.size());
    for (int k = 0; k < nd; ++k) {
      if (d[k] < 0) {
        fail(Code::Package, "package '" + pkg_.name() + "' reported a negative output dimension: shape " +
                                shape_string(d, nd) + " for output '" + spec.name + "'");
      }
      if (spec.shape[k] >= 0 && d[k] != spec.shape[k]) {
        fail(Code::Package, "package '" + pkg_.name() + "' reported shape " + shape_string(d, nd) + " for output '" +
                                spec.name + "', which contradicts its declared shape " +
                                shape_string(spec.shape.data(), nd) + " (dim " + std::to_string(k) +
                                " is fixed; -1 = any)");
      }
    }
    d += nd;
  }
  // An output whose byte size overflows could never be allocated or checked.
  d = shapes;
  for (const auto& spec : pkg_.outputs()) {
    DLTensor t{};
    t.ndim = static_cast<int>(spec.shape.size());
    t.shape = const_cast<int64_t*>(d);
    t.dtype = spec.dtype;
    if (!checked_bytes(t, nullptr)) {
      fail(Code::Package, "package '" + pkg_.name() + "' reported output shape " + shape_string(d, t.ndim) + " for '" +
                              spec.name + "', too large to address");
    }
    d += t.ndim;
  }
}

}  // namespace aotrun
