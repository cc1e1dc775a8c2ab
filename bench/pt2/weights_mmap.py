#!/usr/bin/env python3
"""Open time and resident memory of a .pt2 with 1 GiB of external weights.

Exports an embedding lookup (Embedding(rows, 1024) float32, 8 int64 indices
in, [8, 1024] out) twice with package_constants_in_so=False and
package_constants_on_disk_format="binary_blob" -- 1 GiB of weights and 4 MiB
-- into a scratch directory (never committed), then measures, each in its own
process:

  aotrun   build/bench/bench_pt2_weights_open (open + metadata container,
           a running container, the first run; VmRSS after each)
  torch    torch._inductor.aoti_load_package (load, first run; VmRSS)

and prints one JSON line per (loader, size) plus the ratios.

  /tmp/vw/bin/python bench/pt2/weights_mmap.py --bench build/bench/bench_pt2_weights_open \\
      --libtorch /root/.cache/aotrun/libtorch-2.15.0/lib [--out /tmp/aotrun-weights-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SIZES = {"1g": 262144, "4m": 1024}  # rows of 1024 float32: 1 GiB, 4 MiB
COUNT = 8


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def export(path: str, rows: int) -> None:
    import torch

    class Lookup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Embedding(rows, 1024)

        def forward(self, idx):
            return self.table(idx)

    m = Lookup().eval()
    with torch.no_grad():
        m.table.weight.copy_(torch.arange(rows, dtype=torch.float32)[:, None].expand(rows, 1024))
    ep = torch.export.export(m, (torch.zeros(COUNT, dtype=torch.int64),))
    torch._inductor.aoti_compile_and_package(
        ep, package_path=path,
        inductor_configs={"aot_inductor.package_constants_in_so": False,
                          "aot_inductor.package_constants_on_disk_format": "binary_blob"})


def torch_loader(path: str) -> None:
    import torch
    import torch._inductor
    torch.zeros(1)  # libtorch loaded and initialised outside the timing
    r0 = rss_kib()
    t = time.perf_counter()
    runner = torch._inductor.aoti_load_package(path)
    load_ms = (time.perf_counter() - t) * 1e3
    r1 = rss_kib()
    idx = torch.tensor([(i * 7919) % 1000 for i in range(COUNT)], dtype=torch.int64)
    t = time.perf_counter()
    out = runner(idx)
    run_ms = (time.perf_counter() - t) * 1e3
    print(json.dumps({"loader": "torch " + torch.__version__, "open_ms": round(load_ms, 2), "run_ms": round(run_ms, 2),
                      "rss_before_kib": r0, "rss_open_kib": r1, "rss_run_kib": rss_kib(),
                      "out0": float(out[0, 0])}))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] in ("export", "torch"):
        export(sys.argv[2], int(sys.argv[3])) if sys.argv[1] == "export" else torch_loader(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--libtorch", required=True)
    ap.add_argument("--out", default="/tmp/aotrun-weights-bench")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = {}
    for tag, n in SIZES.items():
        path = os.path.join(args.out, f"lookup_{tag}.pt2")
        if not os.path.exists(path):
            subprocess.run([sys.executable, __file__, "export", path, str(n)], check=True)
        env = dict(os.environ, AOTRUN_LIBTORCH=args.libtorch)
        a = json.loads(subprocess.run([args.bench, path, str(COUNT)], env=env, check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1])
        t = json.loads(subprocess.run([sys.executable, __file__, "torch", path, "0"], check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1])
        for r in (a, t):
            r.update(size=tag, archive_bytes=os.path.getsize(path))
            print(json.dumps(r))
        rows[tag] = (a, t)
    a1, t1 = rows["1g"]
    a4 = rows["4m"][0]
    print(json.dumps({
        "aotrun_open_1g_over_4m": round(a1["open_ms"] / a4["open_ms"], 2),
        "torch_open_over_aotrun_open_1g": round(t1["open_ms"] / a1["open_ms"], 1),
        "aotrun_rss_growth_open_1g_kib": a1["rss_open_kib"] - a1["rss_before_kib"],
        "aotrun_rss_growth_run_1g_kib": a1["rss_run_kib"] - a1["rss_before_kib"],
        "torch_rss_growth_run_1g_kib": t1["rss_run_kib"] - t1["rss_before_kib"],
    }))


if __name__ == "__main__":
    main()
