#!/usr/bin/env bash
# Compiles the public headers on their own and together, as C11 and C++17,
# with -Wall -Wextra -pedantic -Werror, with every compiler given. A user's
# build flags must never make our headers fail.
#
# usage: check_headers.sh "C_COMPILERS" "CXX_COMPILERS" INCLUDE_DIR...
#   (compilers space-separated; the include dirs must provide
#    aotrun/aotrun.h, aotrun/package_abi.h and dlpack/dlpack.h)
set -u -o pipefail
ccs=$1 cxxs=$2; shift 2
incs=()
for d in "$@"; do incs+=(-I "$d"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tus=(aotrun package_abi both reversed)
printf '#include <aotrun/aotrun.h>\n' >"$work/aotrun.c"
printf '#include <aotrun/package_abi.h>\n' >"$work/package_abi.c"
printf '#include <aotrun/aotrun.h>\n#include <aotrun/package_abi.h>\n' >"$work/both.c"
printf '#include <aotrun/package_abi.h>\n#include <aotrun/aotrun.h>\n#include <aotrun/package_abi.h>\n' >"$work/reversed.c"
for tu in "${tus[@]}"; do
  printf 'int compat_header_check_%s(void);\nint compat_header_check_%s(void) { return 0; }\n' "$tu" "$tu" >>"$work/$tu.c"
  cp "$work/$tu.c" "$work/$tu.cpp"
done

failures=0 checks=0
run() { # lang compiler std tu
  local lang=$1 cc=$2 std=$3 tu=$4 ext=c
  [[ $lang == C++ ]] && ext=cpp
  checks=$((checks + 1))
  if ! "$cc" -std="$std" -Wall -Wextra -pedantic -Werror "${incs[@]}" -fsyntax-only "$work/$tu.$ext" \
      >"$work/log" 2>&1; then
    echo "FAIL: $cc -std=$std ($lang) on $tu:"
    sed 's/^/  /' "$work/log"
    failures=$((failures + 1))
  fi
}
for cc in $ccs; do
  command -v "$cc" >/dev/null || { echo "FAIL: C compiler $cc not found"; failures=$((failures + 1)); continue; }
  for tu in "${tus[@]}"; do run C "$cc" c11 "$tu"; done
done
for cxx in $cxxs; do
  command -v "$cxx" >/dev/null || { echo "FAIL: C++ compiler $cxx not found"; failures=$((failures + 1)); continue; }
  for tu in "${tus[@]}"; do run C++ "$cxx" c++17 "$tu"; done
done
if ((failures > 0)); then
  echo "$failures of $checks header compilations failed"
  exit 1
fi
echo "$checks header compilations clean (C11: $ccs; C++17: $cxxs; headers from: $*)"
