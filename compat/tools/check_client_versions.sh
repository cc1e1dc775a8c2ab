#!/usr/bin/env bash
# A program linked with -laotrun records, for every aotrun symbol it uses,
# the version node it bound to. That record is what lets a future
# libaotrun.so.1 keep serving it: check that every aotrun_* reference of the
# program names the expected node.
#
# usage: check_client_versions.sh PROGRAM NODE
set -u -o pipefail
prog=${1:?usage: check_client_versions.sh PROGRAM NODE}
node=${2:?usage: check_client_versions.sh PROGRAM NODE}
refs=$(readelf --dyn-syms -W "$prog" | awk '$7 == "UND" && $8 ~ /^aotrun_/ { print $8 }') ||
  { echo "cannot read $prog" >&2; exit 2; }
total=$(grep -c . <<<"$refs")
bad=$(grep -v "@${node}\$" <<<"$refs" | grep -v '^$')
if ((total == 0)); then
  echo "FAIL: $prog references no aotrun_* symbol (not linked with -laotrun?)"
  exit 1
fi
if [[ -n "$bad" ]]; then
  echo "FAIL: references of $prog not bound to $node:"
  sed 's/^/  /' <<<"$bad"
  exit 1
fi
echo "$total aotrun_* references of $(basename "$prog"), all bound to $node"
