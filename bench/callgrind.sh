#!/usr/bin/env bash
# Instructions per call of the synchronous hot path, counted by callgrind
# (which this shared, noisy machine cannot disturb): the noop package called
# directly and through aotrun's single_threaded runner, and a .pt2 model
# called through AOTInductor's C entry points and through aotrun.
#
#   bench/callgrind.sh [--build DIR] [--calls N] [--out DIR] [--pt2 FILE]...
#
#   --build  a build with target bench_hotpath (default: build-bench, the
#            Release build of bench/run_all.sh; cmake --build DIR --target
#            bench_hotpath builds it)
#   --calls  counted calls per case, after 200 uncounted warm-up calls
#            (default 10000)
#   --out    where the callgrind files go (default DIR/callgrind); read one
#            with callgrind_annotate --inclusive=yes OUT/<case>.out
#   --pt2    a .pt2 with its .in*.npy next to it (default: mlp and two_io of
#            compat/aoti/fixtures/torch-2.15.0); repeatable
# libtorch: $AOTRUN_LIBTORCH, else scripts/fetch-libtorch.sh.
#
# Only the measured loop is counted: bench_hotpath switches instrumentation
# on before its warm-up and collection on around the loop (for pt2_run around
# the model call alone), so loading, libtorch's start-up and the warm-up do
# not appear. Cases (bench/hotpath.cpp says more):
#   (a)   noop_direct           the noop package's run_single_threaded, inline host
#   (b)   noop_single_threaded  aotrun_runner_run, single_threaded, noop
#   (c)   pt2_run               AOTInductorModelContainerRunSingleThreaded alone
#   (c')  pt2_c                 (c) plus one create_tensor_from_blob per input and
#                               one delete per output: a C caller's minimum
#   (c'') pt2_c_copy            (c') plus a memcpy of each output to a caller buffer
#   (d)   pt2_single_threaded   aotrun_runner_run, single_threaded, the .pt2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench calls=10000 out="" pt2s=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pt2) pt2s+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "callgrind.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=$build/bench/bench_hotpath
[[ -x $bin ]] || { echo "callgrind.sh: $bin not built (cmake --build $build --target bench_hotpath)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found" >&2; exit 2; }
out=${out:-$build/callgrind}
mkdir -p "$out"
((${#pt2s[@]})) || pt2s=("$root/compat/aoti/fixtures/torch-2.15.0/mlp.pt2" "$root/compat/aoti/fixtures/torch-2.15.0/two_io.pt2")
export AOTRUN_LIBTORCH=${AOTRUN_LIBTORCH:-$(bash "$root/scripts/fetch-libtorch.sh" | tail -1)}
export OMP_NUM_THREADS=1

# Instructions per counted call of one case; the callgrind file is kept.
count() {
  local name=$1 file=$out/$1.out
  shift
  valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --callgrind-out-file="$file" \
    "$bin" "$@" --calls "$calls" >"$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
  local total
  total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$file")
  [[ -n $total ]] || total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$file")
  python3 -c "print(round($total / $calls))"
}

printf '%s\n' "callgrind: $calls counted calls per case, $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), $(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt") build"
echo
echo "| case | instructions/call | over its floor |"
echo "|---|---:|---:|"
a=$(count noop_direct noop_direct)
b=$(count noop_single_threaded noop_single_threaded)
echo "| (a) noop, direct run_single_threaded | $a | (floor) |"
echo "| (b) noop, aotrun single_threaded | $b | +$((b - a)) over (a) |"
for pt2 in "${pt2s[@]}"; do
  m=$(basename "$pt2" .pt2)
  c=$(count "${m}_pt2_run" pt2_run --pt2 "$pt2")
  c1=$(count "${m}_pt2_c" pt2_c --pt2 "$pt2")
  c2=$(count "${m}_pt2_c_copy" pt2_c_copy --pt2 "$pt2")
  d=$(count "${m}_pt2_single_threaded" pt2_single_threaded --pt2 "$pt2")
  echo "| (c) $m, RunSingleThreaded alone | $c | (floor) |"
  echo "| (c') $m, C caller: wrap inputs + run + delete outputs | $c1 | +$((c1 - c)) over (c) |"
  echo "| (c'') $m, (c') + memcpy of the outputs | $c2 | +$((c2 - c)) over (c) |"
  echo "| (d) $m, aotrun single_threaded | $d | +$((d - c)) over (c), $(printf '%+d' $((d - c2))) over (c'') |"
done
echo
echo "callgrind files: $out (callgrind_annotate --inclusive=yes FILE)"
