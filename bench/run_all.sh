#!/bin/sh
# Builds the benchmarks (Release, build-bench), runs every suite and
# regenerates the tables of docs/PERFORMANCE.md from the results.
#
#   bench/run_all.sh            full run (a few minutes on 2 cores)
#   QUICK=1 bench/run_all.sh    short run to check the pipeline (figures noisy)
#
# Environment: BUILD (build dir, default <repo>/build-bench), OUT (results,
# default $BUILD/bench-results), JOBS (build parallelism, default 2),
# DOC (the document to update, default <repo>/docs/PERFORMANCE.md; DOC=none
# leaves it alone).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
OUT=${OUT:-$BUILD/bench-results}
JOBS=${JOBS:-2}
DOC=${DOC:-$ROOT/docs/PERFORMANCE.md}
QUICK=${QUICK:-0}

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DAOTRUN_BUILD_TESTS=ON -DAOTRUN_BUILD_BENCH=ON \
  -DAOTRUN_BUILD_RUST=OFF -DAOTRUN_BUILD_COMPAT=OFF -DAOTRUN_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target aotrun_benchmarks
mkdir -p "$OUT"

# --- the machine ---------------------------------------------------------------
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
{
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores: $(nproc) online ($(lscpu | sed -n 's/^Thread(s) per core: *//p') thread(s) per core)"
  echo "hypervisor: $(lscpu | sed -n 's/^Hypervisor vendor: *//p')"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "compiler: $("$cxx" --version | head -1)"
  echo "openblas: $(pkg-config --modversion openblas 2>/dev/null || echo unknown)"
  echo "google_benchmark: $(dpkg-query -W -f '${Version}' libbenchmark-dev 2>/dev/null || echo unknown)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

# --- the suites ----------------------------------------------------------------
if [ "$QUICK" = 1 ]; then
  flags="--benchmark_min_time=0.05"
  reps_fast=1
  reps_slow=1
  rss_args="--submissions 10000"
else
  flags="--benchmark_min_time=0.5"
  reps_fast=5
  reps_slow=3
  rss_args=""
fi
# Repetitions run in random order, so drifting load on this shared machine
# spreads over every row instead of favouring some; the report uses medians.
run_suite() {  # name repetitions
  "$BUILD/bench/bench_$1" $flags --benchmark_repetitions="$2" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out="$OUT/$1.json" --benchmark_out_format=json
}
run_suite overhead "$reps_fast"
run_suite mlp "$reps_slow"
run_suite async "$reps_slow"
if [ -x "$BUILD/bench/bench_shim_kernels" ]; then  # raw results only (PERFORMANCE.md section 19)
  run_suite shim_kernels "$reps_slow"
fi
# shellcheck disable=SC2086
"$BUILD/bench/bench_async_rss" $rss_args | tee "$OUT/async_rss.md"
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

# --- the report ----------------------------------------------------------------
if [ "$DOC" != none ]; then
  python3 "$ROOT/bench/report.py" --results "$OUT" --doc "$DOC"
  echo "updated $DOC"
fi
