#!/usr/bin/env bash
# The shim exports only aoti_torch_* and aotrun_shim_* functions (its version
# script), and, when AOTRUN_LIBTORCH names a libtorch, no aoti_torch_* name
# that libtorch does not export too (so no guessed ABI is offered), and the
# libsleef the stand-ins bring exports every Sleef_* function libtorch does
# (a model may import any of them).
#   check_exports.sh <libaotrun_shim.so.1> <libsleef.so>
set -euo pipefail
lib=$1 sleef=$2
mapfile -t syms < <(nm -D --defined-only "$lib" | awk '{print $3}')
((${#syms[@]} > 0)) || { echo "no exported symbols in $lib" >&2; exit 1; }
bad=$(printf '%s\n' "${syms[@]}" | grep -v -e '^aoti_torch_' -e '^aotrun_shim_' || true)
if [ -n "$bad" ]; then
  echo "exported beyond aoti_torch_*/aotrun_shim_*:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "$lib: ${#syms[@]} exports, all aoti_torch_* or aotrun_shim_*"
if [ -n "${AOTRUN_LIBTORCH:-}" ]; then
  torch=$(nm -D --defined-only "$AOTRUN_LIBTORCH/libtorch_cpu.so" | awk '{print $3}' | grep '^aoti_torch_' | sort)
  extra=$(comm -23 <(printf '%s\n' "${syms[@]}" | grep '^aoti_torch_' | sort) <(echo "$torch"))
  if [ -n "$extra" ]; then
    echo "exported by the shim but not by libtorch ($AOTRUN_LIBTORCH):" >&2
    echo "$extra" >&2
    exit 1
  fi
  echo "every aoti_torch_* export is one libtorch ($AOTRUN_LIBTORCH) has"
  missing=$(comm -23 <(nm -D --defined-only "$AOTRUN_LIBTORCH/libtorch_cpu.so" | awk '{print $3}' | grep '^Sleef_' | sort) \
                     <(nm -D --defined-only "$sleef" | awk '{print $3}' | grep '^Sleef_' | sort))
  if [ -n "$missing" ]; then
    echo "Sleef functions libtorch exports but $sleef lacks:" >&2
    echo "$missing" >&2
    exit 1
  fi
  echo "$sleef exports every Sleef_* function libtorch does"
fi
