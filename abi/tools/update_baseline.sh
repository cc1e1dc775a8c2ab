#!/usr/bin/env bash
# Regenerates the ABI baseline of libaotrun.so.1 from a fresh Debug (-O0 -g)
# build: abi/baseline/libaotrun.abi (abidw XML, paths stripped) and
# abi/symbols/<NODE>.txt for every version node the library exports.
#
# Run it only when releasing (see abi/ABI.md, "Releasing a new version"):
# the baseline is the released ABI, and the gate (check_abi.sh) compares
# every later build against it.
#
# usage: update_baseline.sh [--source DIR] [--build DIR] [--lib FILE] [-- CMAKE_ARGS...]
#   --source  repository root (default: two levels above this script)
#   --build   where to configure and build the Debug library (default: SOURCE/build-abi)
#   --lib     take this library (built with -g -O0) instead of building one
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=abi_common.sh
source "$here/abi_common.sh"

src=$(cd "$here/../.." && pwd)
build="" lib=""
cmake_args=()
while (($#)); do
  case "$1" in
    --source) src=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --) shift; cmake_args=("$@"); break ;;
    *) abi_die "unknown option $1 (see the header of $0)" ;;
  esac
done
: "${build:=$src/build-abi}"
for tool in abidw readelf; do command -v $tool >/dev/null || abi_die "$tool not found (Debian: abigail-tools, binutils)"; done
xhdr=""
for d in /usr/include /usr/local/include; do [[ -f $d/dlpack/dlpack.h ]] && xhdr=$d/dlpack/dlpack.h && break; done

if [[ -z "$lib" ]]; then
  echo "abi: building the Debug library in $build"
  lib=$(abi_build_debug_lib "$src" "$build" "${cmake_args[@]}") || exit 2
fi

exports=$(abi_exported_symbols "$lib")
if grep -q '^- ' <<<"$exports"; then
  echo "abi: refusing to write a baseline: these symbols are exported without a version node:" >&2
  grep '^- ' <<<"$exports" | sed 's/^- /  /' >&2
  exit 1
fi

mkdir -p "$src/abi/baseline" "$src/abi/symbols"
abi_dump "$lib" "$src/abi/baseline/libaotrun.abi" "$src/c_api/include" "$xhdr"
for node in $(awk '{ print $1 }' <<<"$exports" | sort -u); do
  {
    echo "# Symbols of version node $node of libaotrun.so.1, as released."
    echo "# Written by abi/tools/update_baseline.sh; never edit by hand."
    awk -v n="$node" '$1 == n { print $2 }' <<<"$exports" | sort
  } >"$src/abi/symbols/$node.txt"
  echo "abi: abi/symbols/$node.txt ($(awk -v n="$node" '$1 == n' <<<"$exports" | wc -l) symbols)"
done
echo "abi: abi/baseline/libaotrun.abi written from $lib"
echo "abi: now run abi/tools/check_abi.sh, and record the release in abi/ABI.md"
