#!/usr/bin/env bash
# Per-call latency of the same .pt2 with the same inputs, in one run:
# aotrun (threaded, single_threaded, graph; `aotrun bench`, synchronous calls)
# against PyTorch's own loader (torch._inductor.aoti_load_package from Python:
# the public call and loader.run alone, bench_torch_loader.py; and C++
# torch::inductor::AOTIModelPackageLoader::run, torch_loader_bench.cpp, built
# here against that python's torch wheel with -std=c++20). One thread
# everywhere (OMP_NUM_THREADS=1, torch.set_num_threads(1)). Prints a markdown
# table of medians (p50) and p90, in microseconds.
#
#   bench/pt2/run.sh [--build DIR] [--fixtures DIR] [--python PY] [--seconds S]
#
#   --build     build directory with tools/aotrun (default: build)
#   --fixtures  directory of .pt2 files and their .in*.npy (default:
#               compat/aoti/fixtures/torch-2.15.0)
#   --python    a python with the torch the fixtures were made with (default:
#               $AOTRUN_TORCH_PYTHON; without one the PyTorch columns are empty);
#               its torch's headers and libraries build the C++ baseline
#   --seconds   measuring time per aotrun mode (default 2)
# libtorch for aotrun: $AOTRUN_LIBTORCH, else scripts/fetch-libtorch.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build fixtures=$root/compat/aoti/fixtures/torch-2.15.0 py=${AOTRUN_TORCH_PYTHON:-} seconds=2
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --fixtures) fixtures=$2; shift 2 ;;
    --python) py=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
cli=$build/tools/aotrun
[[ -x $cli ]] || { echo "run.sh: $cli not built" >&2; exit 2; }
export AOTRUN_LIBTORCH=${AOTRUN_LIBTORCH:-$(bash "$root/scripts/fetch-libtorch.sh" | tail -1)}
export OMP_NUM_THREADS=1

cpp_bench=""
if [[ -n $py ]]; then
  tdir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
  cpp_bench=$build/pt2_torch_loader_bench
  if [[ ! -x $cpp_bench || $root/bench/pt2/torch_loader_bench.cpp -nt $cpp_bench ]]; then
    echo "run.sh: building the C++ loader baseline against $tdir" >&2
    g++ -O2 -std=c++20 -I"$tdir/include" -I"$tdir/include/torch/csrc/api/include" \
      "$root/bench/pt2/torch_loader_bench.cpp" -o "$cpp_bench" -L"$tdir/lib" -ltorch -ltorch_cpu -lc10 \
      -Wl,-rpath,"$tdir/lib" || { echo "run.sh: cannot build the C++ baseline" >&2; cpp_bench=""; }
  fi
fi

us() { python3 -c 'import json,sys; d=json.load(sys.stdin)["latency_ns"]; print("%.1f %.1f" % (d["p50"]/1e3, d["p90"]/1e3))'; }

echo "| model | aotrun threaded | aotrun single_threaded | aotrun graph | PyTorch C++ AOTIModelPackageLoader::run | PyTorch call (Python) | PyTorch loader.run (Python) |"
echo "|---|---|---|---|---|---|---|"
for pt2 in "$fixtures"/*.pt2; do
  model=$(basename "$pt2" .pt2)
  names=$("$cli" inspect --json "$pt2" 2>/dev/null | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["inputs"]))')
  inputs=() i=0
  for n in $names; do inputs+=(--input "$n=$fixtures/$model.in$i.npy"); i=$((i + 1)); done
  cells=()
  for mode in threaded single_threaded graph; do
    read -r p50 p90 < <("$cli" bench --json --mode "$mode" --duration "$seconds" "${inputs[@]}" "$pt2" 2>/dev/null | us)
    cells+=("$p50 (p90 $p90)")
  done
  call="" run="" cpp="" line=""
  if [[ -n $cpp_bench ]]; then
    files=() i=0
    for n in $names; do files+=("$fixtures/$model.in$i.npy"); i=$((i + 1)); done
    # Empty when the C++ loader fails on this model (the cell says n/a).
    if read -r p50 p90 < <("$cpp_bench" "$pt2" "${files[@]}" 2>/dev/null); then cpp="$p50 (p90 $p90)"; fi
  fi
  if [[ -n $py ]]; then
    line=$("$py" "$root/bench/pt2/bench_torch_loader.py" --threads 1 "$pt2" 2>/dev/null | tail -1) || true
  fi
  if [[ -n ${line:-} ]]; then  # empty: PyTorch's loader failed on this model (the cells say n/a)
    call=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%.1f (p90 %.1f)" % (d["median_us"], d["p90_us"]))' "$line")
    run=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%.1f (p90 %.1f)" % (d["run_median_us"], d["run_p90_us"]))' "$line")
  fi
  echo "| $model | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${cpp:-n/a} | ${call:-n/a} | ${run:-n/a} |"
done
