#!/usr/bin/env bash
# What CI does, on this machine: clone the committed HEAD (uncommitted work is
# NOT included) into a scratch directory and run `.ci/run` there with CI=true
# and no standard input. Prints the exit status, the wall time, the per-stage
# summary and where the log is. Debian packages already installed stay
# installed, so a fresh machine may also have to install them (install-deps.sh
# does, on its first run).
#
#   bash scripts/fresh-ci.sh [SCRATCH_PARENT]     (default: /tmp)
#
# The clone and its three build trees (~4.5 GB) are removed at the end, so
# repeated runs do not fill the disk that the next CI run builds on; the log
# stays. AOTRUN_FRESH_CI_KEEP=1 keeps the tree for a post-mortem.
set -uo pipefail
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel) || exit 2
sha=$(git -C "$top" rev-parse --short HEAD)
work=$(mktemp -d "${1:-/tmp}/aotrun-ci-$sha-XXXX")
git clone -q "$top" "$work/aotrun" || exit 2
cd "$work/aotrun" || exit 2
start=$(date +%s)
CI=true bash .ci/run </dev/null >"$work/ci.log" 2>&1
rc=$?
echo "rc=$rc wall=$(($(date +%s) - start))s commit=$sha log=$work/ci.log"
[ "${AOTRUN_FRESH_CI_KEEP:-0}" = 1 ] || rm -rf "$work/aotrun"
sed -n '/^=== summary ===$/,$p' "$work/ci.log"
[ $rc -eq 0 ] || tail -40 "$work/ci.log"
exit $rc
