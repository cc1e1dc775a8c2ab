/*
 * Compatibility client linked with -laotrun. Every function is referenced by
 * name, so the executable records the symbol versions (AOTRUN_1.0) it was
 * built against, which is what a 1.0 program carries into the future.
 */
#include <stdio.h>

#include "client_core.h"

/* The table a 1.0 program effectively uses: its direct symbol references. */
static const aotrun_api k_linked = {
    .version = AOTRUN_API_VERSION,
/* ".<slot> = aotrun_<slot>," for every slot of the frozen header, generated
 * by compat/CMakeLists.txt (compat/cmake/ApiSlots.cmake). */
#include "linked_table.inc"
};

int main(int argc, char** argv) {
  /* Header/library skew is allowed within a major, never across it. */
  if ((aotrun_version() >> 16) != AOTRUN_VERSION_MAJOR) {
    fprintf(stderr, "%s: library %s has another major than the header (%d)\n", argv[0], aotrun_version_string(),
            AOTRUN_VERSION_MAJOR);
    return 2;
  }
  if (!aotrun_get_api(AOTRUN_API_VERSION)) {
    fprintf(stderr, "%s: aotrun_get_api(0x%x) returned NULL\n", argv[0], (unsigned)AOTRUN_API_VERSION);
    return 2;
  }
  return compat_client_main(&k_linked, "linked", argc, argv);
}
