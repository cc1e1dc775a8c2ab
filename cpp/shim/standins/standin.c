/* A stand-in for one of libtorch's libraries (libtorch.so, libtorch_cpu.so,
 * libc10.so). It defines nothing: its soname satisfies a model library's
 * DT_NEEDED entry, and its own DT_NEEDED entries (libaotrun_shim.so.1,
 * libsleef.so.3, libgomp.so.1) bring in what the model imports. */
int aotrun_shim_standin_unused_ = 0;
