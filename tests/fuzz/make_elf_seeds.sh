#!/usr/bin/env bash
# Writes the seed corpus of fuzz_elf (tests/fuzz/corpus/elf/): three small
# stripped shared objects (under 8 KiB, run.sh's -max_len; named without
# .so, which .gitignore ignores) with what the ELF readers look at: dynamic
# symbols (an undefined aoti_* call, a weak one), version definitions, and
# version needs on libc and libstdc++.
#
#   tests/fuzz/make_elf_seeds.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/corpus/elf}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
small=(-shared -fPIC -Os -s -Wl,-z,noseparate-code -Wl,--build-id=none)
cat >"$tmp/versions.c" <<'C'
#include <string.h>
extern int aoti_torch_probe_function(void*);
__attribute__((weak)) extern int aoti_torch_weak_one(void);
int aotrun_seed_entry(void* d, const void* s, unsigned long n) { memcpy(d, s, n); return aoti_torch_probe_function(d); }
C
printf 'SEED_1.0 { global: aotrun_seed_entry; local: *; };\n' >"$tmp/v.map"
gcc "${small[@]}" -Wl,--version-script="$tmp/v.map" -o "$out/versions" "$tmp/versions.c"
printf 'int aotrun_seed_plain(int x) { return x + 1; }\n' >"$tmp/plain.c"
gcc "${small[@]}" -nostdlib -o "$out/plain" "$tmp/plain.c"
printf '#include <string>\nextern "C" int aoti_torch_x(void*);\nint f(const char* s) { std::string a(s); return aoti_torch_x(&a) + (int)a.size(); }\n' >"$tmp/cxx.cpp"
g++ "${small[@]}" -o "$out/cxx" "$tmp/cxx.cpp"
ls -l "$out"
