/* A stand-in for libtorch_cpu.so: exports a few functions of the C shim,
 * not aoti_torch_from_a_future_release. Loaded by the test; never called. */
int aoti_torch_delete_tensor_object(void* p) { return p == 0; }
int aoti_torch_get_dim(void* p, long* out) {
  *out = 0;
  return p == 0;
}
