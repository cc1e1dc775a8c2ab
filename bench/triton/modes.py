#!/usr/bin/env python3
"""Which mode, window and instance count to pick for the aotrun backend
(issue #30 item 6: `single_threaded` with `max_inflight 2` was slower than
Triton's Python backend at concurrency 4 and 16). Serves the example MLP
package (256 -> 1024 -> 1024 -> 64, OpenBLAS, dynamic batching up to 16)
in several configurations side by side, and drives each with NVIDIA's
perf_analyzer (HTTP, one [1, 256] request per call) at concurrency 1, 4
and 16. One server per OpenBLAS setting: its default (one thread per core)
and OPENBLAS_NUM_THREADS=1. One run; read the ratios within a run.

    bench/triton/modes.py --build build [--seconds 3] [--json out.json]

Needs the venv of scripts/fetch-triton.sh, and for perf_analyzer (shipped
in that venv) Debian's libb64-0d and a CUDA 12 runtime library: it is
linked against libcudart.so.12 though it sends nothing to a GPU here; this
script installs the nvidia-cuda-runtime-cu12 wheel into
~/.cache/aotrun/perf-analyzer-deps on first use.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the server and repository helpers)

CONFIGS = {
    # name: (backend, mode, max_inflight, instances, num_models)
    "threaded": ("aotrun", "threaded", 0, 1, 1),
    "single": ("aotrun", "single_threaded", 0, 1, 1),
    "single_window2": ("aotrun", "single_threaded", 2, 1, 1),  # the mlp_inflight
    "threaded_2models_window2": ("aotrun", "threaded", 2, 1, 2),
    "single_2instances": ("aotrun", "single_threaded", 0, 2, 1),
    "python": ("python", None, 0, 1, 1),
    "python_2instances": ("python", None, 0, 2, 1),
}
CONCURRENCY = (1, 4, 16)


def cudart12_dir():
    deps = os.path.join(os.path.dirname(bench.default_venv()), "perf-analyzer-deps")
    found = glob.glob(os.path.join(deps, "nvidia", "cuda_runtime", "lib", "libcudart.so.12*"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", deps,
                        "nvidia-cuda-runtime-cu12"], check=True)
        found = glob.glob(os.path.join(deps, "nvidia", "cuda_runtime", "lib", "libcudart.so.12*"))
    return os.path.dirname(found[0])


def write_repo(repo, build):
    sys.path.insert(0, os.path.join(bench.ROOT, "backends", "triton", "tests"))
    import harness
    pkg = os.path.join(build, "packages", "mlp")
    lib = os.path.join(build, "c_api", "libaotrun.so.1")
    tensors = ('input [{ name: "x" data_type: TYPE_FP32 dims: [256] }]\n'
               'output [{ name: "y" data_type: TYPE_FP32 dims: [64] }]\n'
               "dynamic_batching {}\n")
    model_py = os.path.join(HERE, "python_model", "model.py")
    for name, (backend, mode, window, instances, models) in CONFIGS.items():
        group = "instance_group [{ count: %d kind: KIND_CPU }]\n" % instances
        if backend == "aotrun":
            params = harness.parameters(package=pkg, mode=mode, max_inflight=str(window), num_models=str(models))
            harness.write_model(repo, name, 'backend: "aotrun"\nmax_batch_size: 16\n' + tensors + group + params)
        else:
            params = harness.parameters(package=pkg, libaotrun=lib, bench_dir=HERE)
            harness.write_model(repo, name, 'backend: "python"\nmax_batch_size: 16\n' + tensors + group + params,
                                {"model.py": model_py})
    return harness


def perf(pa, env, url, model, concurrency, seconds):
    out = subprocess.run([pa, "-m", model, "-u", url, "-i", "http", "--concurrency-range",
                          "%d:%d" % (concurrency, concurrency), "-p", str(int(seconds * 1000)), "-s", "20",
                          "--max-trials", "6"], capture_output=True, text=True, env=env, timeout=300)
    m = re.search(r"Concurrency: \d+, throughput: ([\d.]+) infer/sec, latency (\d+) usec", out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError("perf_analyzer %s c%d failed:\n%s\n%s" % (model, concurrency, out.stdout[-2000:],
                                                                      out.stderr[-2000:]))
    return {"infer_per_s": float(m.group(1)), "latency_us": int(m.group(2))}


def counts(url, model):
    """Triton's (inference_count, execution_count) of `model`: requests and
    backend executions so far (their ratio is the average batch formed)."""
    import tritonclient.http as httpclient
    s = httpclient.InferenceServerClient(url).get_inference_statistics(model)["model_stats"][0]
    return int(s["inference_count"]), int(s["execution_count"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(bench.ROOT, "build"))
    p.add_argument("--venv", default=bench.default_venv())
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--json")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    py = os.path.join(a.venv, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(a.venv):
        os.execv(py, [py] + sys.argv)
    pa = os.path.join(a.venv, "bin", "perf_analyzer")
    pa_env = dict(os.environ, LD_LIBRARY_PATH=cudart12_dir())
    results = {"cpu_count": os.cpu_count(), "seconds": a.seconds, "runs": {}}
    for blas in ("default", "1"):
        tmp = tempfile.mkdtemp(prefix="aotrun-triton-modes-")
        repo = os.path.join(tmp, "repository")
        harness = write_repo(repo, a.build)
        env = {} if blas == "default" else {"OPENBLAS_NUM_THREADS": blas}
        server = harness.Server(a.venv, repo, bench.backend_dir(tmp, a.build, a.venv), os.path.join(tmp, "log"),
                                env=env)
        try:
            server.wait_ready(180)
            for name in CONFIGS:
                for c in CONCURRENCY:
                    before = counts(server.url(), name)
                    r = perf(pa, pa_env, server.url(), name, c, a.seconds)
                    after = counts(server.url(), name)
                    r["avg_batch"] = (after[0] - before[0]) / max(1, after[1] - before[1])
                    results["runs"]["%s/%s/%d" % (blas, name, c)] = r
                    print("OPENBLAS_NUM_THREADS=%-7s %-26s c%-3d %8.0f infer/s  %7d us  batch %5.2f" %
                          (blas, name, c, r["infer_per_s"], r["latency_us"], r["avg_batch"]), flush=True)
        finally:
            server.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
