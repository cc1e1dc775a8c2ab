#!/usr/bin/env bash
# ABI gate for libaotrun.so.1 (the host library). Fails when a released
# interface was removed or changed, or when an export is not accounted for.
#
# usage: check_abi.sh [--source DIR] [--build DIR] [--lib FILE] [--baseline FILE]
#                     [--map FILE] [--symbols DIR] [--abi-md FILE] [--header FILE]
#                     [--headers-dir DIR] [--extra-header FILE] [-- CMAKE_ARGS...]
#   --source   repository root (default: two levels above this script)
#   --build    where to configure and build the Debug (-O0 -g) library
#              (default: SOURCE/build-abi); ignored with --lib
#   --lib      check this library instead of building one (it must carry
#              DWARF: build it with -g -O0)
#   the other options override the files of the repository (for the self-test):
#   --baseline     abi/baseline/libaotrun.abi    (abidw XML)
#   --map          abi/libaotrun.map                  (GNU version script)
#   --symbols      abi/symbols/                       (<NODE>.txt per released node)
#   --abi-md       abi/ABI.md                         (changelog)
#   --header       c_api/include/aotrun/aotrun.h      (functions that must be exported)
#   --headers-dir  c_api/include                      (public types for abidw)
#   --extra-header DLPACK_INCLUDE_DIR/dlpack/dlpack.h (public types from DLPack)
#
# Checks, each reported on its own line:
#   1. every exported symbol carries a version node ("unversioned" otherwise);
#   2. that node exists in the map and lists the symbol; nothing the map
#      lists is missing from the library;
#   3. a released node (abi/symbols/<NODE>.txt exists) exports exactly the
#      released list: removals and additions both fail (additions belong in
#      a new node);
#   4. every symbol of an unreleased node is named in ABI.md's changelog;
#   5. every function aotrun.h declares is exported;
#   6. abidiff baseline vs this library: no removed or changed function or
#      variable (a changed type shows up as a changed function); added ones
#      are accepted only through checks 3-4.
# Exit status: 0 all passed, 1 an ABI check failed, 2 setup error.
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=abi_common.sh
source "$here/abi_common.sh"

src=$(cd "$here/../.." && pwd)
build="" lib="" baseline="" map="" symbols="" abi_md="" header="" hdir="" xhdr="" table="aotrun_api:aotrun_get_api"
cmake_args=()
while (($#)); do
  case "$1" in
    --source) src=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --map) map=$2; shift 2 ;;
    --symbols) symbols=$2; shift 2 ;;
    --abi-md) abi_md=$2; shift 2 ;;
    --header) header=$2; shift 2 ;;
    --headers-dir) hdir=$2; shift 2 ;;
    --extra-header) xhdr=$2; shift 2 ;;
    --table) table=$2; shift 2 ;;
    --) shift; cmake_args=("$@"); break ;;
    *) abi_die "unknown option $1 (see the header of $0)" ;;
  esac
done
: "${build:=$src/build-abi}" "${baseline:=$src/abi/baseline/libaotrun.abi}"
: "${map:=$src/abi/libaotrun.map}" "${symbols:=$src/abi/symbols}" "${abi_md:=$src/abi/ABI.md}"
: "${header:=$src/c_api/include/aotrun/aotrun.h}" "${hdir:=$src/c_api/include}"
if [[ -z "$xhdr" ]]; then
  for d in /usr/include /usr/local/include; do [[ -f $d/dlpack/dlpack.h ]] && xhdr=$d/dlpack/dlpack.h && break; done
fi
for f in "$map" "$abi_md" "$header"; do [[ -f "$f" ]] || abi_die "missing $f"; done
[[ -f "$baseline" ]] || abi_die "no baseline at $baseline: generate it with abi/tools/update_baseline.sh"
for tool in abidw abidiff readelf; do command -v $tool >/dev/null || abi_die "$tool not found (Debian: abigail-tools, binutils)"; done

if [[ -z "$lib" ]]; then
  echo "abi: building the Debug library in $build"
  lib=$(abi_build_debug_lib "$src" "$build" "${cmake_args[@]}") || exit 2
fi
[[ -f "$lib" ]] || abi_die "no library at $lib"
echo "abi: checking $lib"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "  FAIL: $*"; failures=$((failures + 1)); }

abi_exported_symbols "$lib" >"$work/exports"
abi_map_symbols "$map" >"$work/map"
abi_map_nodes "$map" >"$work/nodes"
newest=$(tail -n1 "$work/nodes")

echo "[1-2] exports vs version script ($(wc -l <"$work/exports") exported, nodes: $(tr '\n' ' ' <"$work/nodes"))"
while read -r node name; do
  if [[ "$node" == - ]]; then fail "$name is exported without a version node"; continue; fi
  grep -qx "$node" "$work/nodes" || { fail "$name@$node: node $node is not defined in $(basename "$map")"; continue; }
  grep -qx "$node $name" "$work/map" || fail "$name@$node is exported but $(basename "$map") does not list it under $node"
done <"$work/exports"
while read -r node name; do
  [[ "$name" == *'*'* || "$name" == *'?'* ]] && { fail "$node lists the pattern '$name': list exported names one by one"; continue; }
  grep -qx "$node $name" "$work/exports" || fail "$(basename "$map") lists $name under $node but the library does not export it there"
done <"$work/map"

echo "[3-4] version nodes vs released symbol lists and the changelog"
while read -r node; do
  list="$symbols/$node.txt"
  awk -v n="$node" '$1 == n { print $2 }' "$work/exports" | sort >"$work/node.$node"
  if [[ -f "$list" ]]; then
    grep -v '^[[:space:]]*\(#\|$\)' "$list" | sort >"$work/released.$node"
    while read -r s; do fail "$s removed from released node $node"; done < <(comm -23 "$work/released.$node" "$work/node.$node")
    while read -r s; do
      fail "$s added to released node $node: released nodes are frozen, put it in a new node (see abi/ABI.md)"
    done < <(comm -13 "$work/released.$node" "$work/node.$node")
    echo "  $node: released, $(wc -l <"$work/released.$node") symbols"
  else
    [[ "$node" == "$newest" ]] || fail "node $node has no released list $list but is not the newest node"
    while read -r s; do
      grep -qw -- "$s" "$abi_md" || fail "$s (new in unreleased node $node) is not in the changelog $(basename "$abi_md")"
    done <"$work/node.$node"
    echo "  $node: unreleased, $(wc -l <"$work/node.$node") symbols"
  fi
done <"$work/nodes"
for list in "$symbols"/*.txt; do
  [[ -f "$list" ]] || continue
  n=$(basename "$list" .txt)
  grep -qx "$n" "$work/nodes" || fail "released node $n ($list) is gone from $(basename "$map")"
done

echo "[5] functions declared in $(basename "$header")"
abi_header_functions "$header" >"$work/declared"
while read -r f; do
  awk '{ print $2 }' "$work/exports" | grep -qx -- "$f" || fail "$f is declared in $(basename "$header") but not exported"
done <"$work/declared"
echo "  $(wc -l <"$work/declared") declared"

echo "[6] abidiff $(basename "$baseline") vs this library"
abi_dump "$lib" "$work/current.abi" "$hdir" "$xhdr"
abidiff "$baseline" "$work/current.abi" >"$work/diff" 2>&1
rc=$?
if ((rc & 2)) || ((rc & 1 && !(rc & 4))); then
  cat "$work/diff"
  abi_die "abidiff failed to run (status $rc)"
fi
# Counts of a summary line ("<what> changes summary: R Removed, C Changed
# (F filtered out), A Added ..."). The counts are what abidiff reports;
# "filtered out" ones are extra (harmless, or redundant with a change already
# counted) and not part of them. Missing parts count 0.
summary() {
  perl -ne 'next unless /^\Q'"$1"'\E: /; my @n;
    for my $k ("Removed", "Changed", "Added") { push @n, /(\d+) \Q$k\E/ ? $1 : 0 }
    print "@n\n"; exit' "$work/diff"
}
read -r fr fc fa <<<"$(summary 'Functions changes summary')"
read -r vr vc va <<<"$(summary 'Variables changes summary')"
read -r sfr _ sfa <<<"$(summary 'Function symbols changes summary')"
read -r svr _ sva <<<"$(summary 'Variable symbols changes summary')"
echo "  functions: ${fr:-0} removed, ${fc:-0} changed, ${fa:-0} added; variables: ${vr:-0} removed, ${vc:-0} changed, ${va:-0} added"
((${fr:-0} + ${vr:-0} + ${sfr:-0} + ${svr:-0} > 0)) && fail "abidiff: functions or variables of the baseline were removed"
# The function table (--table TYPE:GETTER) is owned by the library and read
# through a pointer up to the slots of the version a client asked for, so it
# may grow at its end: a report of its getter consisting only of a size
# increase and members inserted at or after the old size is not a change.
# (abigail's has_data_member_inserted_at suppression also hides swapped
# members, hence this exact reading.) Anything else about it still counts.
table_appended_only() {
  perl -e '
    my ($type, $getter) = split /:/, $ARGV[0];
    open my $fh, "<", $ARGV[1] or die;
    my @lines = <$fh>;
    my ($in, $seen, $old, $ok) = (0, 0, undef, 1);
    for (@lines) {
      if (/^\s*\[C\] .function .*\b\Q$getter\E\(/) { $in = 1; $seen = 1; next; }
      next unless $in;
      last if /^\s*\[[A-Z]\] / || /^\S/;
      next if /^\s*$/;
      next if /has some indirect sub-type changes:|return type changed:|in pointed to type .const \Q$type\E.:|in unqualified underlying type .typedef \Q$type\E.|underlying type .struct \Q$type\E. .*changed:|\d+ data member insertions?:/;
      if (/type size changed from (\d+) to (\d+) \(in bits\)/) { $ok = 0 if $2 <= $1; $old = $1; next; }
      if (/^\s+\x27.*\x27, at offset (\d+) \(in bits\)/) { $ok = 0 unless defined $old && $1 >= $old; next; }
      $ok = 0;
    }
    exit(($seen && $ok) ? 0 : 1);' "$table" "$work/diff"
}
if ((${fc:-0} == 1 && ${vc:-0} == 0)) && table_appended_only; then
  echo "  ${table%%:*}: slots appended at the end only (compatible)"
  fc=0
fi
((${fc:-0} + ${vc:-0} > 0)) && fail "abidiff: functions or variables of the baseline changed (their types included)"
grep -q '^ELF SONAME changed' "$work/diff" && fail "abidiff: the SONAME changed"
if ((rc & 8)) && ((failures == 0)); then fail "abidiff reports an incompatible change"; fi
if ((rc != 0)); then
  echo "  --- abidiff report ---"
  sed 's/^/  /' "$work/diff"
fi

if ((failures > 0)); then
  echo "abi: $failures problem(s). Released interfaces must not change; see abi/ABI.md."
  exit 1
fi
echo "abi: OK"
