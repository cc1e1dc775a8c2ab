#!/usr/bin/env bash
# Self-test of abi/tools/check_abi.sh: a gate that never fails proves
# nothing. Builds a small fixture library in several variants, takes the
# first as the released baseline, and checks that the gate passes the
# compatible variants and fails each kind of break.
#
# usage: check_abi_selftest.sh [C_COMPILER]
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check="$here/../tools/check_abi.sh"
cc=${1:-cc}
work=$(mktemp -d)
[[ -n "${ABI_SELFTEST_KEEP:-}" ]] && echo "keeping $work" || trap 'rm -rf "$work"' EXIT

# Fixture sources ------------------------------------------------------------
write_header() { # $1 dir, $2 info fields, $3 extra declarations
  mkdir -p "$1/include"
  cat >"$1/include/fx.h" <<EOF
#include <stddef.h>
#define AOTRUN_API __attribute__((visibility("default")))
typedef struct fx_handle fx_handle; /* opaque */
typedef struct fx_info { size_t struct_size; $2 } fx_info;
AOTRUN_API fx_handle* fx_open(int code);
AOTRUN_API int fx_code(const fx_handle* h);
AOTRUN_API int fx_info_get(const fx_handle* h, fx_info* info);
/* A table reaching fx_info too: abidiff reports a change of fx_info once and
 * counts the other paths as "filtered out" (redundant). */
typedef struct fx_table { int (*info_get)(const fx_handle*, fx_info*); int (*code)(const fx_handle*); } fx_table;
AOTRUN_API const fx_table* fx_get_table(void);
$3
EOF
}
write_source() { # $1 dir, $2 handle fields, $3 extra definitions
  cat >"$1/fx.c" <<EOF
#include "fx.h"
#include <stdlib.h>
struct fx_handle { $2 };
fx_handle* fx_open(int code) { fx_handle* h = calloc(1, sizeof *h); h->code = code; return h; }
int fx_code(const fx_handle* h) { return h->code; }
int fx_info_get(const fx_handle* h, fx_info* info) { info->a = h->code; return 0; }
static const fx_table k_table = {fx_info_get, fx_code};
const fx_table* fx_get_table(void) { return &k_table; }
$3
EOF
}
write_map() { # $1 dir, $2 1.0 names, $3 1.1 names ("" = no node)
  {
    echo "FX_1.0 { global: $2 local: *; };"
    [[ -n "$3" ]] && echo "FX_1.1 { global: $3 } FX_1.0;"
  } >"$1/fx.map"
}
build() { # $1 dir [$2 "nomap"]
  local map=(-Wl,--version-script="$1/fx.map")
  [[ "${2:-}" == nomap ]] && map=()
  "$cc" -g -O0 -fPIC -shared -fvisibility=hidden -I"$1/include" "${map[@]}" -Wl,-soname,libfx.so.1 \
    "$1/fx.c" -o "$1/libfx.so.1" || { echo "selftest: cannot build fixture $1" >&2; exit 2; }
}
variant() { # $1 name, header fields, header extra, source fields, source extra, map 1.0, map 1.1
  local d="$work/$1"
  mkdir -p "$d"
  write_header "$d" "$2" "$3"
  write_source "$d" "$4" "$5"
  write_map "$d" "$6" "$7"
}

fields="int a; int b;"
handle="int code;"
syms="fx_open; fx_code; fx_info_get; fx_get_table;"

variant base "$fields" "" "$handle" "" "$syms" ""
build "$work/base"

# The released state: baseline XML and symbol list from the base variant.
mkdir -p "$work/released/symbols"
printf 'fx_code\nfx_get_table\nfx_info_get\nfx_open\n' >"$work/released/symbols/FX_1.0.txt"
abidw --no-corpus-path --no-comp-dir-path --short-locs --no-architecture --exported-interfaces-only --drop-private-types \
  --headers-dir "$work/base/include" --out-file "$work/released/base.abi" "$work/base/libfx.so.1" ||
  { echo "selftest: abidw failed" >&2; exit 2; }
printf '# changelog\n## FX_1.1\n- `fx_new` (documented)\n' >"$work/released/ABI.md"
printf '# changelog\n## FX_1.1\n(nothing yet)\n' >"$work/released/ABI-empty.md"


failures=0
expect() { # $1 expected status (0 pass, 1 break), $2 variant, $3 description, [$4 ABI.md]
  local d="$work/$2" md=${4:-$work/released/ABI.md}
  bash "$check" --lib "$d/libfx.so.1" --baseline "$work/released/base.abi" --map "$d/fx.map" \
    --symbols "$work/released/symbols" --abi-md "$md" --header "$d/include/fx.h" \
    --headers-dir "$d/include" --extra-header "" --table fx_table:fx_get_table >"$work/$2.log" 2>&1
  local rc=$?
  if ((rc == $1)); then
    printf '  ok    %-16s %s (status %d)\n' "$2" "$3" "$rc"
  else
    printf '  WRONG %-16s %s: status %d, expected %d\n' "$2" "$3" "$rc" "$1"
    sed 's/^/        | /' "$work/$2.log"
    failures=$((failures + 1))
  fi
}

echo "check_abi.sh self-test:"
expect 0 base "unchanged library passes"

variant private "$fields" "" "long pad; int code; char* note;" "" "$syms" ""
build "$work/private"
expect 0 private "opaque handle's private layout changed: passes"

variant removed "$fields" "" "$handle" "" "fx_open; fx_info_get; fx_get_table;" ""
sed -i '/^AOTRUN_API int fx_code/d; /^int fx_code/d; s/fx_info_get, fx_code}/fx_info_get, 0}/' \
  "$work/removed/include/fx.h" "$work/removed/fx.c"
build "$work/removed"
expect 1 removed "function removed: fails"

variant reordered "int b; int a;" "" "$handle" "" "$syms" ""
build "$work/reordered"
expect 1 reordered "public struct fields reordered: fails"

variant grown "int a; int b; int c;" "" "$handle" "" "$syms" ""
build "$work/grown"
expect 1 grown "public struct grew (size change): fails"

variant signature "$fields" "" "$handle" "" "$syms" ""
sed -i 's/fx_open(int code)/fx_open(long code)/' "$work/signature/include/fx.h" "$work/signature/fx.c"
build "$work/signature"
expect 1 signature "parameter type changed: fails"

variant added "$fields" "AOTRUN_API int fx_new(int x);" "$handle" "int fx_new(int x) { return x; }" "$syms" "fx_new;"
build "$work/added"
expect 0 added "addition in a new node, in the changelog: passes"
expect 1 added "addition missing from the changelog: fails" "$work/released/ABI-empty.md"

variant added_old "$fields" "AOTRUN_API int fx_new(int x);" "$handle" "int fx_new(int x) { return x; }" \
  "$syms fx_new;" ""
build "$work/added_old"
expect 1 added_old "addition in the released node: fails"

variant table_appended "$fields" "AOTRUN_API int fx_new(int x);" "$handle" "int fx_new(int x) { return x; }" "$syms" "fx_new;"
sed -i 's/int (\*code)(const fx_handle\*); } fx_table;/int (*code)(const fx_handle*); int (*added)(int); } fx_table;/; s/{fx_info_get, fx_code}/{fx_info_get, fx_code, fx_new}/' \
  "$work/table_appended/include/fx.h" "$work/table_appended/fx.c"
sed -i 's/^const fx_table\* fx_get_table/int fx_new(int x);\nconst fx_table* fx_get_table/' "$work/table_appended/fx.c"
build "$work/table_appended"
expect 0 table_appended "slot appended to the function table (new node, changelog): passes"

variant table_moved "$fields" "" "$handle" "" "$syms" ""
sed -i 's/{ int (\*info_get)(const fx_handle\*, fx_info\*); int (\*code)(const fx_handle\*); }/{ int (*code)(const fx_handle*); int (*info_get)(const fx_handle*, fx_info*); }/; s/{fx_info_get, fx_code}/{fx_code, fx_info_get}/' \
  "$work/table_moved/include/fx.h" "$work/table_moved/fx.c"
build "$work/table_moved"
expect 1 table_moved "function-table slots swapped: fails"

variant unversioned "$fields" "" "$handle" "" "$syms" ""
build "$work/unversioned" nomap
expect 1 unversioned "exports without a version node: fails"

variant unmapped "$fields" "AOTRUN_API int fx_new(int x);" "$handle" "int fx_new(int x) { return x; }" "$syms" ""
sed -i 's/local: \*;/local: fx_hidden_*;/' "$work/unmapped/fx.map"
build "$work/unmapped"
expect 1 unmapped "export the map does not list: fails"

variant undeclared "$fields" "AOTRUN_API int fx_missing(void);" "$handle" "" "$syms" ""
build "$work/undeclared"
expect 1 undeclared "header declares a function the library lacks: fails"

if ((failures > 0)); then
  echo "check_abi.sh self-test: $failures case(s) WRONG"
  exit 1
fi
echo "check_abi.sh self-test: all cases as expected"
