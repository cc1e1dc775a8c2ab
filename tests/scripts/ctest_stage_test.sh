#!/usr/bin/env bash
# scripts/ctest_stage.py on a tiny project (tests/scripts/stage_fixture):
# a stage that holds its floor passes and groups its skip reasons; one with
# fewer tests than the floor, or none, fails.
#
#   ctest_stage_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
cp -r "$src/tests/scripts/stage_fixture/." "$scratch/"
stage() { python3 "$src/scripts/ctest_stage.py" fx --source "$scratch" --summary "$scratch/summary" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=3 >/dev/null
out=$(stage) || fail "3 tests + 1 skipped, floor 4: the stage failed: $out"
grep -q "^stage fx: ok, 4 tests: 3 passed, 0 failed, 1 skipped (floor 4)$" <<<"$out" || fail "summary: $out"
grep -q "skipped 1: no frobnicator on this machine" <<<"$out" || fail "skip reason not grouped: $out"
echo "ok: a stage at its floor passes: $(grep '^stage' <<<"$out")"

cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=2 >/dev/null
if out=$(stage); then fail "3 tests, floor 4: the stage passed: $out"; fi
grep -q "fewer than the 4 this stage holds" <<<"$out" || fail "no floor message: $out"
echo "ok: a stage below its floor fails"

cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=0 >/dev/null
if out=$(stage --floor 0); then fail "no tests: the stage passed: $out"; fi
echo "ok: a stage with no tests fails even with floor 0"

[ "$(wc -l <"$scratch/summary")" -eq 3 ] || fail "one summary line per stage expected: $(cat "$scratch/summary")"
rm -rf "$scratch"
