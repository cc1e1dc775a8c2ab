/*
 * Checks the dlopen function table of the library it is given against the
 * library's versioned symbols: for every slot of every API version, the
 * pointer aotrun_get_api() hands out must be the function exported under
 * that name in that version node (found with dlvsym). This catches a table
 * whose slots were reordered or mis-filled, which the layout pins (they only
 * see the struct) cannot. Also checks which versions get_api refuses.
 *
 * usage: api_table_test PATH/TO/libaotrun.so.1
 */
#define _GNU_SOURCE /* dlvsym */
#include <aotrun/aotrun.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef const aotrun_api* (*get_api_fn)(uint32_t version);

typedef struct slot {
  const char* field;
  size_t offset;
  const char* symbol;
  const char* node; /* version node that exports it */
} slot;

#define SLOT(field, symbol, node) \
  { #field, offsetof(aotrun_api, field), symbol, node }

/* Every slot, in table order, with the symbol and version node behind it,
 * generated from the header's aotrun_api (compat/cmake/ApiSlots.cmake): a
 * slot <name> holds aotrun_<name> (version_number: aotrun_version), from the
 * node of the version group (a "1.0"-style comment) it sits in. */
static const slot k_slots[] = {
#include "api_slots.inc"
};

static int g_failures;

static void check(int ok, const char* fmt, const char* a, const char* b) {
  if (ok) return;
  printf("FAIL: ");
  printf(fmt, a, b);
  printf("\n");
  ++g_failures;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/TO/libaotrun.so.1\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("FAIL: dlopen(%s): %s\n", argv[1], dlerror());
    return 1;
  }
  get_api_fn get_api;
  *(void**)&get_api = dlvsym(lib, "aotrun_get_api", "AOTRUN_1.0");
  if (!get_api) {
    printf("FAIL: aotrun_get_api@AOTRUN_1.0 not exported: %s\n", dlerror());
    return 1;
  }

  const aotrun_api* api = get_api(AOTRUN_API_VERSION_1_0);
  if (!api) {
    printf("FAIL: aotrun_get_api(1.0) returned NULL\n");
    return 1;
  }
  printf("table version 0x%06x, library %s\n", (unsigned)api->version, api->version_string());
  check(api->version >= AOTRUN_API_VERSION_1_0 && (api->version >> 16) == 1, "%s%s",
        "table version is not a 1.x at or above 1.0", "");

  size_t n = sizeof k_slots / sizeof k_slots[0];
  check(n * sizeof(void (*)(void)) + offsetof(aotrun_api, version_number) == sizeof(aotrun_api), "%s%s",
        "k_slots does not cover every slot of aotrun_api", "");
  for (size_t i = 0; i < n; ++i) {
    void* in_table;
    memcpy(&in_table, (const char*)api + k_slots[i].offset, sizeof in_table);
    void* exported = dlvsym(lib, k_slots[i].symbol, k_slots[i].node);
    check(exported != NULL, "%s is not exported in version node %s", k_slots[i].symbol, k_slots[i].node);
    check(in_table != NULL, "slot %s%s is NULL", k_slots[i].field, "");
    check(!exported || in_table == exported, "slot %s does not hold %s", k_slots[i].field, k_slots[i].symbol);
  }

  /* Versions the table must refuse: another major, a minor the library does
   * not have (255 is far beyond any release). */
  check(get_api(AOTRUN_MAKE_VERSION(2, 0, 0)) == NULL, "%s%s", "get_api(2.0.0) did not return NULL", "");
  check(get_api(AOTRUN_MAKE_VERSION(0, 9, 0)) == NULL, "%s%s", "get_api(0.9.0) did not return NULL", "");
  check(get_api(AOTRUN_MAKE_VERSION(1, 255, 0)) == NULL, "%s%s", "get_api(1.255.0) did not return NULL", "");
  /* Asking again gives the same static table. */
  check(get_api(AOTRUN_API_VERSION_1_0) == api, "%s%s", "get_api(1.0) returned a different table", "");

  printf("%zu slots checked: %s\n", n, g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
