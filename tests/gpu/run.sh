#!/usr/bin/env bash
# Builds aotrun (Release) with the CUDA backend on a GPU machine and runs the
# GPU suites and the CUDA benchmark.
#
#   tests/gpu/run.sh [BUILD_DIR]          default BUILD_DIR: <repo>/build-gpu
#
# Environment:
#   OUT         where results go (default BUILD_DIR/gpu-results): summary.txt,
#               nvidia-smi.txt, configure.log, build.log, gpu_tests.{log,xml},
#               cuda_backend_tests.{log,xml}, link_check.log, bench_cuda_mlp.txt
#   JOBS        build parallelism (default: nproc)
#   CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES (default "80-real;90": A100, H100/H200)
#   PREBUILT=1  BUILD_DIR was built elsewhere (same absolute path, e.g. on a
#               machine that has the Debian build dependencies the GPU machine
#               lacks): skip configure and build, only run
# Exit status: 0 when everything passed (skips count as failures here: on a GPU
# machine nothing may skip), 1 otherwise. The benchmark's speedup target is
# reported in summary.txt and counted as a failure when missed.
set -u -o pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
out=${OUT:-$build/gpu-results}
jobs=${JOBS:-$(nproc)}
archs=${CUDA_ARCHS:-80-real;90}
mkdir -p "$out" "$build"
: > "$out/summary.txt"
status=0
say() { echo "run.sh: $*" | tee -a "$out/summary.txt"; }

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
  say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
else
  say "nvidia-smi not found (no driver?); the GPU tests will skip and count as failures"
fi
for tool in cmake nvcc; do
  command -v "$tool" >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || { say "missing tool: $tool"; exit 1; }
done
export PATH="/usr/local/cuda/bin:$PATH"


if [ "${PREBUILT:-0}" = 1 ]; then
  say "prebuilt build directory $build: not configuring or building"
elif ! { say "configure (Release, CUDA archs $archs)"; cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DAOTRUN_ENABLE_CUDA=ON \
     "-DCMAKE_CUDA_ARCHITECTURES=$archs" -DAOTRUN_BUILD_RUST=OFF -DAOTRUN_BUILD_COMPAT=OFF \
     -DAOTRUN_BUILD_BENCH=OFF -DAOTRUN_BUILD_TOOLS=OFF > "$out/configure.log" 2>&1; }; then
  say "configure FAILED (see configure.log)"; tail -20 "$out/configure.log"; exit 1
elif ! { say "build (-j$jobs)"; cmake --build "$build" -j "$jobs" --target gpu_tests cuda_backend_tests \
     bench_cuda_mlp aotrun_cuda_link_check cuda_mlp_package > "$out/build.log" 2>&1; }; then
  say "build FAILED (see build.log)"; tail -30 "$out/build.log"; exit 1
fi

find_bin() { find "$build" -name "$1" -type f -perm -u+x -not -path '*/CMakeFiles/*' | head -1; }

run_suite() {
  local name=$1 bin
  bin=$(find_bin "$name")
  if [ -z "$bin" ]; then say "$name: binary not found"; status=1; return; fi
  # *NoDevice* tests cover machines without a GPU: they skip here by design.
  "$bin" "--gtest_output=xml:$out/$name.xml" --gtest_filter='-*NoDevice*' > "$out/$name.log" 2>&1
  local rc=$?
  local passed skipped failed
  passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$out/$name.log" | tail -1)
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?,.*/\1/p' "$out/$name.log" | tail -1)
  failed=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?,.*/\1/p' "$out/$name.log" | tail -1)
  say "$name: exit $rc, passed ${passed:-0}, failed ${failed:-0}, skipped ${skipped:-0}"
  if [ "$rc" -ne 0 ] || [ "${skipped:-0}" -ne 0 ]; then status=1; fi
}
run_suite cuda_backend_tests
run_suite gpu_tests

# The check script directly, not through ctest: a prebuilt build directory
# names the cmake of the machine that configured it.
link_ok=1
: > "$out/link_check.log"
for lib in "$(find_bin "libaotrun.so.1.*")" "$(find_bin libaotrun_cuda_link_check.so)"; do
  [ -n "$lib" ] || { echo "library not found" >> "$out/link_check.log"; link_ok=0; continue; }
  cmake -DLIB="$lib" -DREADELF="$(command -v readelf)" -P "$root/tests/gpu/check_no_driver_link.cmake" \
    >> "$out/link_check.log" 2>&1 || link_ok=0
done
[ "$link_ok" = 1 ] && say "link check (no libcuda/libcudart NEEDED): passed" \
  || { say "link check FAILED (see link_check.log)"; status=1; }

bench=$(find_bin bench_cuda_mlp)
if [ -n "$bench" ]; then
  "$bench" --require-speedup > "$out/bench_cuda_mlp.txt" 2>&1
  rc=$?
  cat "$out/bench_cuda_mlp.txt"
  case $rc in
    0) if grep -q speedup "$out/bench_cuda_mlp.txt"; then
         say "bench_cuda_mlp: $(grep speedup "$out/bench_cuda_mlp.txt")"
       else
         say "bench_cuda_mlp: nothing measured (no device)"; status=1
       fi ;;
    3) say "bench_cuda_mlp: BELOW TARGET: $(grep speedup "$out/bench_cuda_mlp.txt")"; status=1 ;;
    *) say "bench_cuda_mlp: FAILED (exit $rc)"; status=1 ;;
  esac
else
  say "bench_cuda_mlp: binary not found"; status=1
fi

say "overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
