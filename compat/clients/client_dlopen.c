/*
 * Compatibility client that never links libaotrun: it dlopens
 * libaotrun.so.1 (or --lib PATH) and resolves exactly one symbol,
 * aotrun_get_api, asking for the API version of the header it was built
 * against.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "client_core.h"

typedef const aotrun_api* (*get_api_fn)(uint32_t version);

int main(int argc, char** argv) {
  const char* lib = "libaotrun.so.1";
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "--lib")) lib = argv[i + 1];
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    fprintf(stderr, "%s: dlopen(%s) failed: %s\n", argv[0], lib, dlerror());
    return 2;
  }
  get_api_fn get_api;
  /* ISO C forbids casting void* to a function pointer; POSIX allows this. */
  *(void**)&get_api = dlsym(handle, "aotrun_get_api");
  if (!get_api) {
    fprintf(stderr, "%s: %s has no aotrun_get_api: %s\n", argv[0], lib, dlerror());
    return 2;
  }
  const aotrun_api* api = get_api(AOTRUN_API_VERSION);
  if (!api || api->version < AOTRUN_API_VERSION) {
    fprintf(stderr, "%s: %s does not provide API 0x%x (got %p, version 0x%x)\n", argv[0], lib,
            (unsigned)AOTRUN_API_VERSION, (const void*)api, api ? (unsigned)api->version : 0u);
    return 2;
  }
  int rc = compat_client_main(api, "dlopen", argc, argv);
  /* The library stays loaded: its worker threads may still be winding down,
   * and unloading is not part of what this client checks. */
  return rc;
}
