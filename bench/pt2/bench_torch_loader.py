#!/usr/bin/env python3
"""Per-call latency of PyTorch's own AOTInductor loader, the baseline for aotrun.

Loads each .pt2 with torch._inductor.aoti_load_package, feeds it its reference
inputs (<stem>.in0.npy, <stem>.in1.npy, ... next to the archive, as written by
compat/aoti/export_fixtures.py), warms up, then times N calls one by one and
prints one JSON line per model:

  {"model": "mlp", "torch": "2.15.0+cu132", "threads": 1, "iters": 2000,
   "load_ms": ..., "median_us": ..., "p90_us": ..., "min_us": ..., "mean_us": ...,
   "run_median_us": ..., "run_p90_us": ..., "max_abs_diff": 0.0, ...}

median/p90 time the public call path (compiled(*inputs): pytree flatten,
loader.run/boxed_run, unflatten); run_* time loader.run(flat_list) alone
(the C++ AOTIModelPackageLoader, minus pytree), closer to what aotrun does.
Outputs are checked against <stem>.out*.npy when present (max_abs_diff).

  /opt/aotrun-venvs/torch-2.15.0/bin/python bench/pt2/bench_torch_loader.py \\
      compat/aoti/fixtures/torch-2.15.0/*.pt2 [--threads 1] [--iters 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch._inductor


def ref_files(pt2: Path, kind: str) -> list[Path]:
    files, i = [], 0
    while (f := pt2.with_name(f"{pt2.stem}.{kind}{i}.npy")).exists():
        files.append(f)
        i += 1
    return files


def percentile(sorted_vals: list[float], q: float) -> float:
    if not sorted_vals:
        return float("nan")
    k = (len(sorted_vals) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def time_calls(fn, n: int) -> list[float]:
    out = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        fn()
        out.append((clock() - t0) / 1e3)
    out.sort()
    return out


def bench(pt2: Path, args) -> dict:
    in_files = ref_files(pt2, "in")
    if not in_files:
        raise SystemExit(f"{pt2}: no {pt2.stem}.in0.npy next to it")
    inputs = [torch.from_numpy(np.load(f)) for f in in_files]
    kwargs = {}
    if args.run_single_threaded:
        kwargs["run_single_threaded"] = True
    t0 = time.perf_counter()
    compiled = torch._inductor.aoti_load_package(str(pt2), **kwargs)
    load_ms = (time.perf_counter() - t0) * 1e3

    with torch.inference_mode():
        outputs = compiled(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        max_abs = None
        for i, f in enumerate(ref_files(pt2, "out")):
            d = (outputs[i] - torch.from_numpy(np.load(f))).abs().max().item()
            max_abs = d if max_abs is None else max(max_abs, d)

        for _ in range(args.warmup):
            compiled(*inputs)
        call = time_calls(lambda: compiled(*inputs), args.iters)

        loader = getattr(compiled, "loader", None)
        run = []
        if loader is not None and hasattr(loader, "run"):
            flat = list(inputs)
            for _ in range(args.warmup):
                loader.run(flat)
            run = time_calls(lambda: loader.run(flat), args.iters)

    r = lambda x: round(x, 2)  # noqa: E731
    return {
        "model": pt2.stem,
        "pt2": str(pt2),
        "pt2_bytes": pt2.stat().st_size,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "run_single_threaded": bool(args.run_single_threaded),
        "warmup": args.warmup,
        "iters": args.iters,
        "load_ms": r(load_ms),
        "median_us": r(statistics.median(call)),
        "p90_us": r(percentile(call, 0.9)),
        "min_us": r(call[0]),
        "mean_us": r(statistics.fmean(call)),
        "run_median_us": r(statistics.median(run)) if run else None,
        "run_p90_us": r(percentile(run, 0.9)) if run else None,
        "max_abs_diff": max_abs,
        "inputs": [list(t.shape) for t in inputs],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pt2", nargs="+", type=Path, help=".pt2 archives (reference .npy files next to them)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("AOTRUN_BENCH_THREADS", "1")),
                    help="torch.set_num_threads (default 1)")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--run-single-threaded", action="store_true",
                    help="aoti_load_package(..., run_single_threaded=True) (torch >= 2.7-ish)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    for pt2 in args.pt2:
        print(json.dumps(bench(pt2, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
