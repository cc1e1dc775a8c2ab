#!/usr/bin/env bash
# CUDA .pt2 on aotrun's shim, on a GPU machine (issue #27): exports the
# fixtures with the machine's torch, runs pt2_shim_cuda_tests (the model's
# own container on the shim, against eager PyTorch) and pt2_runner_cuda_tests
# (libaotrun's C API: every mode, async, caller capture, run_alloc, graph
# cache, pools, against eager) with no libtorch on the library path
# (aotrun's stand-ins instead), both under compute-sanitizer memcheck, then
# PyTorch's own figures for the transformer block: its loader (a), PR
# #148601's recipe (b), torch.compile (c) and eager (d).
#
#   tests/gpu/pt2/run.sh LIBDIR BINDIR [OUT] [FIXTURES]
# LIBDIR holds libaotrun.so.1, libaotrun_shim.so.1, libaotrun_shim_cuda.so.1,
# aotrun/torch-standins/ (and libsleef.so.3, libzip.so.4, libdeflate.so.0, libdnnl.so.2 and,
# since aotrun-shim 1.4's FFT, libkissfft-float.so.131 when the machine has
# none: build/c_api of a Release build, CUDA_ARCHS=90, plus those);
# BINDIR holds the two test programs. OUT (default $OUT or ./pt2-gpu-results)
# receives summary.txt, export.log, tests.log, runner.log, memcheck.log,
# bench.log and fixtures.tar (the exported fixtures, for a rerun). FIXTURES:
# such a fixtures.tar from an earlier run, used instead of exporting again.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$1" && pwd); bin=$2/pt2_shim_cuda_tests; runner=$2/pt2_runner_cuda_tests
out=${3:-${OUT:-$PWD/pt2-gpu-results}}
mkdir -p "$out"; work=$(mktemp -d); status=0
say() { echo "pt2/run.sh: $*" | tee -a "$out/summary.txt"; }
export PYTHONUNBUFFERED=1 AOTRUN_SHIM_QUIET=1
names="mlp block block_math convnet llama"
say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if [ -n "${4:-}" ]; then
  tar xf "$4" -C "$work" && say "fixtures from $4 (not exported again)" || { say "unpacking $4 FAILED"; status=1; }
else
  # One process per fixture: each export is a CPU-bound Inductor compile of
  # about 70 s, and a GPU machine has cores to spare.
  pids=""
  for n in $names; do
    python3 "$here/export_cuda_fixtures.py" "$work" "$n" > "$out/export-$n.log" 2>&1 & pids="$pids $!"
  done
  for p in $pids; do wait "$p" || { say "export FAILED (export-*.log)"; status=1; }; done
  cat "$out"/export-*.log > "$out/export.log"; rm -f "$out"/export-*.log
  grep -h "exported in" "$out/export.log" | tee -a "$out/summary.txt"
  (cd "$work" && tar cf "$out/fixtures.tar" *.pt2 *.npy *.json)
fi
for n in $names; do
  [ -f "$work/$n.pt2" ] || continue
  python3 - "$work/$n.pt2" "$work/$n" <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); os.makedirs(sys.argv[2], exist_ok=True)
for m in z.namelist():
    if "/data/aotinductor/model/" in m and not m.endswith("/"):
        open(os.path.join(sys.argv[2], os.path.basename(m)), "wb").write(z.read(m))
PY
done
export LD_LIBRARY_PATH="$lib/aotrun/torch-standins:$lib:/usr/local/cuda/lib64"
export AOTRUN_CUDA_PT2_DIR=$work
timeout 200 "$bin" > "$out/tests.log" 2>&1; rc=$?
grep -E "^\[ (graph|timing) " "$out/tests.log" >> "$out/summary.txt"
say "pt2_shim_cuda_tests: exit $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \]' "$out/tests.log" | grep -v '\] [A-Z]' | tr '\n' ' ')"
grep -E '^\[  FAILED  \] [A-Z]' "$out/tests.log" >> "$out/summary.txt"
[ $rc -eq 0 ] && ! grep -q "SKIPPED \]" "$out/tests.log" || status=1
timeout 200 "$runner" > "$out/runner.log" 2>&1; rc=$?
grep -E "^\[ (runner|async|caller|pools|constants|timing)" "$out/runner.log" >> "$out/summary.txt"
say "pt2_runner_cuda_tests: exit $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \]' "$out/runner.log" | grep -v '\] [A-Z]' | tr '\n' ' ')"
grep -E '^\[  FAILED  \] [A-Z]' "$out/runner.log" >> "$out/summary.txt"
[ $rc -eq 0 ] && ! grep -q "SKIPPED \]" "$out/runner.log" || status=1
LD_PRELOAD= ldd "$(ls $work/block/*.so)" | grep -E "torch|c10|aotrun|cudart|cublas" >> "$out/summary.txt"
memcheck_runner='*CudaPt2Runner.*block_*:*CudaPt2Runner.*llama_graph:*CudaPt2CallerCapture.*:*CudaPt2RunAlloc.*:CudaPt2Pools.*:CudaPt2GraphCache.Evict*:*CudaPt2Async.*graph:CudaPt2Refusals.*:*CudaPt2IndexChecks.*:*CudaPt2Constants.*'
{ AOTRUN_PT2_TIMING_ITERS=2 timeout 150 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 9 "$bin" \
    --gtest_filter='*/1:*/3:CudaShimPools.*' && timeout 150 compute-sanitizer --tool memcheck --leak-check no \
    --error-exitcode 9 "$runner" --gtest_filter="$memcheck_runner"; } > "$out/memcheck.log" 2>&1; rc=$?
say "compute-sanitizer memcheck (block and llama on the shim, pools; runner: $memcheck_runner): exit $rc, $(grep -E 'ERROR SUMMARY|PASSED|FAILED  \]' "$out/memcheck.log" | tr '\n' ' ')"
[ $rc -eq 0 ] || status=1
# PyTorch's figures, the transformer block only (AOTRUN_PT2_BENCH=0: none):
# its loader in a process of its own first (it crashed before; faulthandler
# says where).
if [ "${AOTRUN_PT2_BENCH:-1}" = 1 ]; then
  env -u LD_LIBRARY_PATH timeout 100 python3 "$here/bench_torch_aoti.py" "$work" block >> "$out/bench.log" 2>&1 || {
    say "bench_torch_aoti block: exit $?; again with PyTorch's container runner"
    env -u LD_LIBRARY_PATH AOTRUN_BENCH_CONTAINER_RUNNER=1 timeout 100 python3 "$here/bench_torch_aoti.py" "$work" block \
      >> "$out/bench.log" 2>&1 || say "bench_torch_aoti block (container runner): exit $?"
  }
  env -u LD_LIBRARY_PATH timeout 150 python3 -X faulthandler "$here/bench_torch.py" "$work" block >> "$out/bench.log" 2>&1 || say "bench_torch block: exit $?"
  grep "^\[ torch" "$out/bench.log" >> "$out/summary.txt"
fi
say "overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
