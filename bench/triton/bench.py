#!/usr/bin/env python3
"""Serving the example MLP package with Triton: the aotrun backend against
Triton's Python backend calling aotrun through ctypes (python_model/), and
the backend's overhead over a direct aotrun run. One server, one run; every
figure below comes from the same invocation.

    bench/triton/bench.py --build build [--seconds 5] [--json out.json] [--overhead-only]

Needs the venv of scripts/fetch-triton.sh (found in the cache dir, or
--venv) and a built tree (libaotrun, libtriton_aotrun.so, packages/mlp,
tools/aotrun).
Prints a markdown table: requests/s, p50 and p99 client latency at batch 1
(no batching) and with dynamic batching (max batch 16), 1 and 4 concurrent
clients (separate processes, HTTP, one [1, 256] request at a time each);
then, at batch 16, the time Triton reports per execution of the aotrun
backend (compute input + infer + output: everything the backend does from
receiving the requests to sending the responses) against aotrun's own
latency, `aotrun bench` at batch 16 in a separate process while the server
is idle, alternated round by round; the ratio is the median of the rounds'.
"""

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
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


def aotrun_bench(build, iters):
    """Latency percentiles (ns) of `aotrun bench` on the MLP at batch 16, in
    its own process: aotrun's own latency, nothing of Triton's around it."""
    cli = os.path.join(build, "tools", "aotrun")
    out = subprocess.run([cli, "bench", "--mode", "single_threaded", "--batch", "16", "--warmup", "20", "--iters",
                          str(iters), "--json", os.path.join(build, "packages", "mlp")],
                         check=True, capture_output=True, text=True, timeout=300).stdout
    return json.loads(out)["latency_ns"]


def overhead(server, build, rounds=8, per_round=100):
    """The backend's time per execution at batch 16 (Triton's statistics:
    compute input + infer + output, i.e. exec_start..exec_end as the backend
    reports them) against `aotrun bench` at batch 16 in a separate process,
    alternated round by round so that the machine's load falls on both.
    Medians: on shared cores a busy loop like `aotrun bench` is preempted
    for whole time slices (a long tail, a mean far above its median) where a
    server thread that sleeps between requests is not, so means would
    compare the scheduler's treatment rather than the code."""
    import numpy as np
    import tritonclient.http as httpclient
    x = np.random.default_rng(16).standard_normal((16, 256), dtype=np.float32)
    c = httpclient.InferenceServerClient(server.url(), network_timeout=60)
    i = httpclient.InferInput("x", [16, 256], "FP32")
    i.set_data_from_numpy(x)
    for _ in range(20):
        c.infer("aotrun_b1", [i])

    def stats():
        s = c.get_inference_statistics("aotrun_b1")["model_stats"][0]["inference_stats"]
        return [int(s[k]["ns"]) for k in ("compute_input", "compute_infer", "compute_output")] + [
            int(s["compute_infer"]["count"])]

    med = statistics.median
    rounds_out, skipped = [], 0
    for _ in range(rounds):
        parts, client = [], []
        before = stats()
        for _ in range(per_round):  # one execution each: its own statistics
            t = time.perf_counter_ns()
            c.infer("aotrun_b1", [i])
            client.append(time.perf_counter_ns() - t)
            after = stats()
            d = [a - b for a, b in zip(after, before)]
            # The backend reports statistics after sending the response, so
            # a query may come before them: keep single executions only.
            if d[3] == 1:
                parts.append(d[:3])
            skipped += d[3] != 1
            before = after
        direct = aotrun_bench(build, per_round)  # the server is idle meanwhile
        rounds_out.append({
            "exec": med(sum(p) for p in parts), "exec_mean": statistics.mean(sum(p) for p in parts),
            "input": med(p[0] for p in parts), "infer": med(p[1] for p in parts), "output": med(p[2] for p in parts),
            "client": med(client), "direct": float(direct["p50"]), "direct_mean": float(direct["mean"])})
    c.close()
    r = {k + "_us": med(row[k] for row in rounds_out) / 1e3 for k in rounds_out[0]}
    # Each round's ratio (backend and aotrun bench back to back), then the
    # median over the rounds.
    r["exec_over_direct"] = med(row["exec"] / row["direct"] for row in rounds_out)
    r["infer_over_direct"] = med(row["infer"] / row["direct"] for row in rounds_out)
    r["rounds"] = [{k: v / 1e3 for k, v in row.items()} for row in rounds_out]
    r["stats_queries"], r["stats_queries_skipped"] = rounds * per_round, skipped
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--venv", default=default_venv())
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--json")
    p.add_argument("--overhead-only", action="store_true", help="only the batch-16 overhead measurement")
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
        for case in () if a.overhead_only else ("b1", "dyn"):
            for clients in (1, 4):
                for backend in ("aotrun", "python"):
                    model = "%s_%s" % (backend, case)
                    r = load(server.url(), model, clients, a.seconds)
                    results["load"]["%s/%d" % (model, clients)] = r
                    print("%-11s clients %d: %7.1f req/s  p50 %6.2f ms  p99 %6.2f ms" %
                          (model, clients, r["rps"], r["p50_ms"], r["p99_ms"]), flush=True)
        results["overhead"] = o = overhead(server, a.build)
        for r in o["rounds"]:
            print("  round: backend p50 %.0f us (run %.0f; mean %.0f), aotrun bench p50 %.0f us (mean %.0f)" %
                  (r["exec"], r["infer"], r["exec_mean"], r["direct"], r["direct_mean"]))
        print("batch 16, medians: backend execution %.0f us (compute input %.0f + aotrun run %.0f + compute output "
              "%.0f), aotrun bench %.0f us: backend / aotrun %.3f (run inside the backend / aotrun %.3f); "
              "client round trip %.0f us (%d of %d statistics queries fell between two executions, left out)" %
              (o["exec_us"], o["input_us"], o["infer_us"], o["output_us"], o["direct_us"], o["exec_over_direct"],
               o["infer_over_direct"], o["client_us"], o["stats_queries_skipped"],
               o["stats_queries"]))
    except BaseException:
        print(server.log_tail(40), file=sys.stderr)
        raise
    finally:
        server.stop()
    # Lines of post_run_timing.patch, when the backend was built with it.
    steps = [l.strip() for l in open(server.log_path, errors="replace") if "post-run " in l]
    if steps:
        print("\n".join(steps[-6:]))
        results["post_run_steps"] = steps[-6:]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
