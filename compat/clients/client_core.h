/*
 * The compatibility client: the part shared by the client linked with
 * -laotrun and the one that dlopens libaotrun.so.1. Both are compiled against
 * a frozen host header (compat/abi/<version>/aotrun/aotrun.h) and talk to the
 * library only through an aotrun_api table: the linked one fills it from its
 * own (versioned) symbol references, the dlopen one gets it from
 * aotrun_get_api().
 */
#ifndef COMPAT_CLIENT_CORE_H_
#define COMPAT_CLIENT_CORE_H_

#include <aotrun/aotrun.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the client for argv (see client_core.c for the options) and prints one
 * RESULT line. `kind` is "linked" or "dlopen". Returns the process exit code:
 * 0 when the scenario ran to its end, whatever its outcome; 2 on a usage error
 * or an unusable API table. */
int compat_client_main(const aotrun_api* api, const char* kind, int argc, char** argv);

/* Prints the usage text to stderr. */
void compat_client_usage(const char* prog);

#ifdef __cplusplus
}
#endif

#endif /* COMPAT_CLIENT_CORE_H_ */
