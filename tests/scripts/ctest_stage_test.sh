#!/usr/bin/env bash
# scripts/ctest_stage.py on a tiny project (tests/scripts/stage_fixture):
# a stage that holds its floor passes and groups its skip reasons; one with
# fewer tests than the floor, or none, fails; LeakSanitizer's tracer crash is
# retried once, a leak report never; so is ThreadSanitizer's refused shadow
# memory, a data race never.
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

# A tracer crash at exit is retried once and named; a leak report is not.
cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=3 -DFLAKY=tracer_crash >/dev/null
rm -f "$scratch"/build/*.ran
out=$(stage --floor 5) || fail "a tracer crash alone failed the stage: $out"
grep -q "^stage fx: ok, 5 tests: 4 passed, 0 failed, 1 skipped (floor 5)$" <<<"$out" || fail "summary: $out"
cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=3 "-DFLAKY=tracer_crash;real_leak" >/dev/null
rm -f "$scratch"/build/*.ran
if out=$(stage --floor 6); then fail "a leak report was retried: $out"; fi
grep -q "^stage fx: FAILED, 6 tests: 4 passed, 1 failed, 1 skipped (floor 6)$" <<<"$out" || fail "summary: $out"
grep -q "retried: tracer_crash (its body passed" <<<"$out" || fail "the tracer crash was not retried: $out"
grep -q "failed: real_leak" <<<"$out" || fail "the leak report was not kept as a failure: $out"
rm -f "$scratch"/build/*.ran
echo "ok: LeakSanitizer's tracer crash is retried once, a leak report is not"

# ThreadSanitizer refused shadow memory: retried once; a data race never.
cmake -S "$scratch" -B "$scratch/build" -DN_TESTS=3 "-DFLAKY=tsan_shadow;data_race" >/dev/null
if out=$(stage --floor 6); then fail "a data race was retried: $out"; fi
grep -q "^stage fx: FAILED, 6 tests: 4 passed, 1 failed, 1 skipped (floor 6)$" <<<"$out" || fail "summary: $out"
grep -q "retried: tsan_shadow (ThreadSanitizer's runtime was refused shadow memory" <<<"$out" ||
  fail "the shadow-memory failure was not retried: $out"
grep -q "failed: data_race" <<<"$out" || fail "the data race was not kept as a failure: $out"
rm -f "$scratch"/build/*.ran
echo "ok: ThreadSanitizer's refused shadow memory is retried once, a data race is not"

[ "$(wc -l <"$scratch/summary")" -eq 6 ] || fail "one summary line per stage expected: $(cat "$scratch/summary")"
rm -rf "$scratch"
