// A made-up AOTInductor model library for the provider choice
// (cpp/package/pt2/provider/provider_choice.cpp): the container entry points
// of a one-input, one-output model whose run returns a copy of its input,
// and an import of aoti_torch_cpu__adaptive_avg_pool2d_backward, which
// libtorch exports and aotrun's shim (inference only) does not. It is never
// called: importing it is what makes the shim unable to serve the model.
// NEEDs libtorch_cpu.so like a real model, so its shim calls bind to the
// provider loaded first.
#include <cstddef>
#include <cstdint>

extern "C" {
struct AtenTensorOpaque;
typedef AtenTensorOpaque* AtenTensorHandle;
int32_t aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* out);
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle);
int32_t aoti_torch_cpu__adaptive_avg_pool2d_backward(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*);

#define EXPORT __attribute__((visibility("default")))

struct Container {
  int models;
};

// Referenced from an exported object, so the import stays in the table.
EXPORT void* provider_model_pool_op = reinterpret_cast<void*>(&aoti_torch_cpu__adaptive_avg_pool2d_backward);

EXPORT int32_t AOTInductorModelContainerCreateWithDevice(Container** out, size_t num_models, const char*, const char*) {
  *out = new Container{static_cast<int>(num_models)};
  return 0;
}
EXPORT int32_t AOTInductorModelContainerDelete(Container* c) {
  delete c;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetNumInputs(Container*, size_t* n) {
  *n = 1;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetNumOutputs(Container*, size_t* n) {
  *n = 1;
  return 0;
}
// Inputs are stolen (AOTInductor's contract); the output is new.
EXPORT int32_t AOTInductorModelContainerRun(Container*, AtenTensorHandle* inputs, size_t num_inputs,
                                            AtenTensorHandle* outputs, size_t num_outputs, void*, void*) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const int32_t rc = aoti_torch_clone(inputs[0], &outputs[0]);
  aoti_torch_delete_tensor_object(inputs[0]);
  return rc;
}
}
