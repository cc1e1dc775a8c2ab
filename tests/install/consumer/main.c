/* Opens a package with the installed library and prints its ABI version. */
#include <aotrun/aotrun.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  aotrun_package* pkg = NULL;
  aotrun_status* st = aotrun_package_open(argv[1], NULL, &pkg);
  if (st) {
    fprintf(stderr, "%s\n", aotrun_status_message(st));
    aotrun_status_free(st);
    return 1;
  }
  aotrun_package_info info = {sizeof(info)};
  aotrun_status_free(aotrun_package_get_info(pkg, &info));
  printf("%s abi %u.%u library %s\n", info.name, info.abi_version >> 16, info.abi_version & 0xFFFF,
         aotrun_version_string());
  aotrun_package_close(pkg);
  return 0;
}
