#!/usr/bin/env python3
"""Serving the example MLP package with Triton: the aotrun backend against
Triton's Python backend calling aotrun through ctypes (python_model/), and
the backend's overhead over a direct aotrun run. One server, one run; every
figure below comes from the same invocation.

    bench/triton/bench.py --build build [--seconds 5] [--json out.json]

Needs the venv of scripts/fetch-triton.sh (found in the cache dir, or
--venv) and a built tree (libaotrun, libtriton_aotrun.so, packages/mlp).
Prints a markdown table: requests/s, p50 and p99 client latency at batch 1
(no batching) and with dynamic batching (max batch 16), 1 and 4 concurrent
clients (separate processes, HTTP, one [1, 256] request at a time each);
then, at batch 16, the time Triton reports per execution of the aotrun
backend (compute input + infer + output) against the same run called
directly (ctypes, single_threaded runner, in this process, server idle).
"""

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def default_venv():
    root = os.environ.get("AOTRUN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "aotrun")
    return os.path.join(root, "triton-venv-0.7.0")


def client_loop(args):
    url, model, seconds, seed = args
    import numpy as np
    import tritonclient.http as httpclient
    c = httpclient.InferenceServerClient(url, network_timeout=60)
    x = np.random.default_rng(seed).standard_normal((1, 256), dtype=np.float32)
    i = httpclient.InferInput("x", [1, 256], "FP32")
    i.set_data_from_numpy(x)
    out = [httpclient.InferRequestedOutput("y")]
    try:
        for _ in range(5):  # warm-up (graph capture, connection)
            c.infer(model, [i], outputs=out)
    except Exception as e:  # tritonclient's exceptions do not pickle back to the pool
        raise RuntimeError("%s: %s" % (model, e)) from None
    lat, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        c.infer(model, [i], outputs=out)
        lat.append(time.perf_counter() - t)
    c.close()
    return lat


def load(url, model, clients, seconds):
    with mp.get_context("spawn").Pool(clients) as pool:
        t = time.perf_counter()
        parts = pool.map(client_loop, [(url, model, seconds, s) for s in range(clients)])
        wall = time.perf_counter() - t
    lat = sorted(x for p in parts for x in p)
    q = statistics.quantiles(lat, n=100)
    # Throughput over the measured windows (each client ran `seconds`).
    return {"requests": len(lat), "rps": len(lat) / seconds, "p50_ms": q[49] * 1e3, "p99_ms": q[98] * 1e3,
            "wall_s": wall}


def write_repo(repo, build, venv):
    sys.path.insert(0, os.path.join(ROOT, "backends", "triton", "tests"))
    import harness
    pkg = os.path.join(build, "packages", "mlp")
    lib = os.path.join(build, "c_api", "libaotrun.so.1")
    tensors = ('input [{ name: "x" data_type: TYPE_FP32 dims: [256] }]\n'
               'output [{ name: "y" data_type: TYPE_FP32 dims: [64] }]\n')
    dyn = "dynamic_batching {}\n"
    aot = 'backend: "aotrun"\nmax_batch_size: 16\n' + tensors + harness.parameters(package=pkg,
                                                                                   mode="single_threaded")
    py = 'backend: "python"\nmax_batch_size: 16\n' + tensors + harness.parameters(
        package=pkg, libaotrun=lib, bench_dir=HERE)
    model_py = os.path.join(HERE, "python_model", "model.py")
    harness.write_model(repo, "aotrun_b1", aot)
    harness.write_model(repo, "aotrun_dyn", aot + dyn)
    harness.write_model(repo, "python_b1", py, {"model.py": model_py})
    harness.write_model(repo, "python_dyn", py + dyn, {"model.py": model_py})
    return harness


def backend_dir(tmp, build, venv):
    """aotrun's backend and the wheel's Python backend side by side."""
    d = os.path.join(tmp, "backends")
    os.makedirs(os.path.join(d, "python"))
    os.symlink(os.path.join(build, "backends", "aotrun"), os.path.join(d, "aotrun"))
    import glob
    tr = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "pytriton", "tritonserver"))[0]
    for f in ("libtriton_python.so", "triton_python_backend_utils.py"):
        os.symlink(os.path.join(tr, "backends", "python", f), os.path.join(d, "python", f))
    # The stub runs the system's libpython and does not pass PYTHONPATH on;
    # it does import from its backend directory, so numpy goes there.
    site = os.path.dirname(os.path.dirname(tr))
    for f in ("numpy", "numpy.libs"):
        os.symlink(os.path.join(site, f), os.path.join(d, "python", f))
    stub = os.path.join(tr, "python_backend_stubs", "%d.%d" % sys.version_info[:2], "triton_python_backend_stub")
    shutil.copy(stub, os.path.join(d, "python", "triton_python_backend_stub"))
    return d


def overhead(harness, server, build, runs=600):
    import numpy as np
    import tritonclient.http as httpclient
    sys.path.insert(0, HERE)
    import aotrun_ctypes
    x = np.random.default_rng(16).standard_normal((16, 256), dtype=np.float32)
    c = httpclient.InferenceServerClient(server.url(), network_timeout=60)
    i = httpclient.InferInput("x", [16, 256], "FP32")
    i.set_data_from_numpy(x)
    for _ in range(10):
        c.infer("aotrun_b1", [i])

    def stats():
        s = c.get_inference_statistics("aotrun_b1")["model_stats"][0]["inference_stats"]
        return {k: (int(s[k]["count"]), int(s[k]["ns"])) for k in ("compute_input", "compute_infer",
                                                                    "compute_output")}

    direct = aotrun_ctypes.Runner(os.path.join(build, "c_api", "libaotrun.so.1"),
                                  os.path.join(build, "packages", "mlp"), "single_threaded")
    for _ in range(10):
        direct(x)
    backend_ns, direct_ns, client_ns, infer_ns, in_ns, out_ns = [], [], [], [], [], []
    # Alternate blocks of backend and direct runs so that the machine's load
    # (shared cores) falls on both alike.
    for _ in range(runs // 50):
        before = stats()
        t = time.perf_counter_ns()
        for _ in range(50):
            c.infer("aotrun_b1", [i])
        client_ns.append((time.perf_counter_ns() - t) / 50)
        after = stats()
        n = after["compute_infer"][0] - before["compute_infer"][0]
        total = sum(after[k][1] - before[k][1] for k in after)
        backend_ns.append(total / n)
        infer_ns.append((after["compute_infer"][1] - before["compute_infer"][1]) / n)
        in_ns.append((after["compute_input"][1] - before["compute_input"][1]) / n)
        out_ns.append((after["compute_output"][1] - before["compute_output"][1]) / n)
        t = time.perf_counter_ns()
        for _ in range(50):
            direct(x)
        direct_ns.append((time.perf_counter_ns() - t) / 50)
    direct.close()
    c.close()
    med = statistics.median
    return {"backend_exec_us": med(backend_ns) / 1e3, "backend_infer_us": med(infer_ns) / 1e3,
            "backend_input_us": med(in_ns) / 1e3, "backend_output_us": med(out_ns) / 1e3,
            "direct_us": med(direct_ns) / 1e3, "client_us": med(client_ns) / 1e3,
            "overhead": med(backend_ns) / med(direct_ns) - 1}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--venv", default=default_venv())
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--json")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    py = os.path.join(a.venv, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(a.venv):
        os.execv(py, [py] + sys.argv)
    tmp = tempfile.mkdtemp(prefix="aotrun-triton-bench-")
    repo = os.path.join(tmp, "repository")
    harness = write_repo(repo, a.build, os.path.realpath(a.venv))
    server = harness.Server(a.venv, repo, backend_dir(tmp, a.build, a.venv), os.path.join(tmp, "server.log"))
    results = {"cpu_count": os.cpu_count(), "seconds": a.seconds, "load": {}}
    try:
        server.wait_ready(180)
        for case in ("b1", "dyn"):
            for clients in (1, 4):
                for backend in ("aotrun", "python"):
                    model = "%s_%s" % (backend, case)
                    r = load(server.url(), model, clients, a.seconds)
                    results["load"]["%s/%d" % (model, clients)] = r
                    print("%-11s clients %d: %7.1f req/s  p50 %6.2f ms  p99 %6.2f ms" %
                          (model, clients, r["rps"], r["p50_ms"], r["p99_ms"]), flush=True)
        results["overhead"] = overhead(harness, server, a.build)
        o = results["overhead"]
        print("batch 16: backend execution %.0f us (input %.0f + aotrun run %.0f + output and response %.0f), "
              "direct aotrun %.0f us: overhead %+.1f%%; client round trip %.0f us" %
              (o["backend_exec_us"], o["backend_input_us"], o["backend_infer_us"], o["backend_output_us"],
               o["direct_us"], 100 * o["overhead"], o["client_us"]))
    except BaseException:
        print(server.log_tail(40), file=sys.stderr)
        raise
    finally:
        server.stop()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
