#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (address + undefined + coverage) in
# <build>/fuzz, separately from the normal g++ build, then runs each target
# for a bounded time on its committed seed corpus. Fails on any crash,
# sanitizer report, leak, timeout or broken invariant.
#
#   tests/fuzz/run.sh [--build-dir DIR] [--seconds N] [--total N] [--jobs N] [--targets "a b"]
#
#   --build-dir  the normal build directory (its packages/ are loaded by
#                fuzz_capi; the fuzz build goes to DIR/fuzz). Default: ./build
#   --seconds    time per target (default 20)
#   --total      cap on the sum over all targets (default 60)
#   --jobs       build parallelism (default 2)
#   --targets    subset of: manifest safetensors capi pt2 pickle elf
#
# Exit status: 0 all clean, 1 a finding (artifacts under DIR/fuzz/artifacts),
# 2 usage / build failure, 77 clang or libFuzzer unavailable (ctest: skipped).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
build="$src/build"
seconds=20
total=60
jobs=2
targets="manifest safetensors capi pt2 pickle elf"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --total) total="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

build="$(cd "$build" && pwd)"
fuzz="$build/fuzz"
# Exploring past reported findings needs recoverable UBSan checks (runtime
# suppressions do not apply to -fno-sanitize-recover): a separate build.
ubsan_recover="-fno-sanitize-recover=all"
if [[ -n "${AOTRUN_FUZZ_ALLOW_KNOWN:-}" ]]; then
  fuzz="$build/fuzz-explore"
  ubsan_recover="-fsanitize-recover=undefined"
fi
n_targets=$(wc -w <<<"$targets")
if (( seconds * n_targets > total )); then
  seconds=$(( total / n_targets ))
  (( seconds >= 1 )) || seconds=1
fi

cxx="${AOTRUN_FUZZ_CXX:-clang++}"
cc="${AOTRUN_FUZZ_CC:-clang}"
if ! command -v "$cxx" >/dev/null || ! command -v "$cc" >/dev/null; then
  echo "run.sh: $cxx / $cc not found; fuzzing skipped" >&2
  exit 77
fi
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "run.sh: $cxx cannot link libFuzzer (install libclang-rt-dev); fuzzing skipped:" >&2
  cat "$probe/err" >&2
  exit 77
fi

if [[ " $targets " == *" capi "* && ! -f "$build/packages/libcounting.so" ]]; then
  echo "run.sh: $build/packages/libcounting.so missing: build the normal tree first (target aotrun_packages)" >&2
  exit 2
fi

flags="-fsanitize=fuzzer-no-link,address,undefined $ubsan_recover -fno-omit-frame-pointer -g -O1"
echo "== configuring $fuzz (clang, $flags)"
cmake -S "$here/standalone" -B "$fuzz" -DAOTRUN_SOURCE_DIR="$src" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >"$fuzz.configure.log" 2>&1 || {
  cat "$fuzz.configure.log" >&2; exit 2; }
echo "== building fuzz targets: $targets"
build_targets=()
for t in $targets; do build_targets+=("fuzz_$t"); done
cmake --build "$fuzz" -j "$jobs" --target "${build_targets[@]}" >"$fuzz/build.log" 2>&1 || {
  tail -50 "$fuzz/build.log" >&2; exit 2; }

export AOTRUN_FUZZ_PACKAGES_DIR="$build/packages"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Exploring past findings already reported (docs/RELIABILITY.md): the targets
# let the named ones through, and UBSan skips the reports listed for them.
if [[ -n "${AOTRUN_FUZZ_ALLOW_KNOWN:-}" ]]; then
  echo "== letting known findings through: $AOTRUN_FUZZ_ALLOW_KNOWN"
  export UBSAN_OPTIONS="$UBSAN_OPTIONS:suppressions=$here/known_ubsan.supp"
fi

status=0
summary=()
for t in $targets; do
  seeds="$here/corpus/$t"
  work="$fuzz/corpus/$t"
  artifacts="$fuzz/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  rm -f "$artifacts"/*  # only this run's findings are reported
  dict=()
  [[ -f "$here/$t.dict" ]] && dict=("-dict=$here/$t.dict")
  log="$fuzz/$t.log"
  echo "== fuzz_$t for ${seconds}s (seeds: $seeds, log: $log)"
  set +e
  # A fixed seed by default, so a CI run is repeatable; AOTRUN_FUZZ_SEED=0
  # lets libFuzzer pick one (exploration).
  "$fuzz/fuzz_$t" -seed="${AOTRUN_FUZZ_SEED:-20261122}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$work" "$seeds" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [[ -n "$execs" ]] || execs=$(grep -o '#[0-9]*' "$log" | tail -1 | tr -d '#')
  if (( rc != 0 )); then
    status=1
    summary+=("fuzz_$t: FINDING (exit $rc) after ${execs:-?} executions; artifacts: $(ls "$artifacts" | tr '\n' ' ')")
    echo "---- fuzz_$t output (tail) ----" >&2
    grep -E "FINDING|ERROR|runtime error|SUMMARY|==[0-9]+==|#[0-9]+ 0x" "$log" | head -40 >&2 || tail -40 "$log" >&2
  else
    summary+=("fuzz_$t: clean, ${execs:-?} executions in ${seconds}s")
  fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
