#!/usr/bin/env python3
"""The aotrun Triton backend against the real server (tritonserver 2.51 from
PyPI's nvidia-pytriton), on loopback only.

Writes a model repository (the example MLP package, .pt2 archives from the
torch 2.15.0 corpus, and configurations with mistakes in them), starts
tritonserver with libtriton_aotrun.so, waits for readiness and checks:
sync requests over HTTP and gRPC, concurrent clients, Triton's dynamic
batching merging requests into one aotrun run, auto-completed
configurations, every output against a reference, the errors of malformed
requests and bad configurations, runs that fail inside aotrun and requests
aotrun refuses (failure_paths.py), a torch 2.6 .pt2 without shapes served
from its configuration (unstated_shapes.py), aotrun's statistics in
/metrics; then stops
the server.

--parts packages serves aotrun's own packages (needs no libtorch); --parts
pt2 serves the .pt2 archives (needs libtorch: AOTRUN_LIBTORCH). Each part is
its own ctest test, so a machine without libtorch runs the first and skips
only the second. Exit 77 (skip), saying why, without the venv, or for the pt2
part without libtorch.

    triton_backend_test.py --parts packages|pt2 --venv DIR --backends DIR --packages DIR --fixtures DIR --work DIR
"""

import argparse
import functools
import json
import os
import re
import shutil
import sys
import threading
import time

import failure_paths  # this directory; plain Python, safe before the venv
import unstated_shapes

ARGS = None
SKIP = 77
# The model of the name tests (tests/pt2/names/export_named.py).
NAMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "pt2", "names")
ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "pt2", "zoo")


def skip(why):
    print("skipped: " + why)
    sys.exit(SKIP)


def check(cond, what, *context):
    if not cond:
        raise AssertionError(what + "".join("\n" + str(c) for c in context))


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--parts", choices=("packages", "pt2"), required=True)
    for a in ("--venv", "--backends", "--packages", "--fixtures", "--work"):
        p.add_argument(a, required=True)
    ARGS = p.parse_args()
    for a in ("venv", "backends", "packages", "fixtures", "work"):
        setattr(ARGS, a, os.path.abspath(getattr(ARGS, a)))

    # The harness needs the venv's numpy and tritonclient: re-run inside it.
    venv_python = os.path.join(ARGS.venv, "bin", "python")
    if not os.path.exists(venv_python):
        skip("no Triton venv at %s (scripts/fetch-triton.sh makes it)" % ARGS.venv)
    if os.path.realpath(sys.prefix) != os.path.realpath(ARGS.venv):
        os.execv(venv_python, [venv_python] + sys.argv)
    import harness
    if harness.tritonserver_binary(ARGS.venv) is None:
        skip("the venv at %s has no tritonserver" % ARGS.venv)
    libtorch = None
    if ARGS.parts == "pt2":
        libtorch = os.environ.get("AOTRUN_LIBTORCH", "")
        if not libtorch:
            skip("no libtorch for the .pt2 models (AOTRUN_LIBTORCH; scripts/fetch-libtorch.sh)")
    run(harness, libtorch)
    print("ok: triton backend test passed (%s)" % ARGS.parts)


def write_repository(harness, repo, libtorch):
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    if libtorch:
        write_pt2_models(harness, repo, libtorch)
    else:
        write_package_models(harness, repo)


def write_package_models(harness, repo):
    mlp = os.path.join(ARGS.packages, "mlp")
    P = harness.parameters
    # The MLP package, inputs and outputs auto-completed from its specs,
    # Triton's dynamic batching up to 16 rows.
    harness.write_model(repo, "mlp", 'backend: "aotrun"\nmax_batch_size: 16\n'
                        'dynamic_batching { max_queue_delay_microseconds: 3000 }\n' + P(package=mlp))
    # The same, written out in full, asynchronous (the in-flight window) in
    # two instances of single_threaded runners.
    harness.write_model(repo, "mlp_async", 'backend: "aotrun"\nmax_batch_size: 16\n'
                        'input [{ name: "x" data_type: TYPE_FP32 dims: [256] }]\n'
                        'output [{ name: "y" data_type: TYPE_FP32 dims: [64] }]\n'
                        'dynamic_batching {}\ninstance_group [{ count: 2 kind: KIND_CPU }]\n' +
                        P(package=mlp, mode="single_threaded", max_inflight="4"))
    # Graph mode, no batching: the package's own [-1, 256] shape.
    harness.write_model(repo, "mlp_graph", 'backend: "aotrun"\nmax_batch_size: 0\n'
                        'input [{ name: "x" data_type: TYPE_FP32 dims: [-1, 256] }]\n'
                        'output [{ name: "y" data_type: TYPE_FP32 dims: [-1, 64] }]\n' +
                        P(package=mlp, mode="graph", graph_warmup_runs="1"))
    # Mistakes: each model must fail to load with a message naming it.
    harness.write_model(repo, "bad_mode", 'backend: "aotrun"\n' + P(package=mlp, mode="fast"))
    harness.write_model(repo, "bad_count", 'backend: "aotrun"\n' + P(package=mlp, num_models="many"))
    harness.write_model(repo, "bad_key", 'backend: "aotrun"\n' + P(package=mlp, modes="graph"))
    harness.write_model(repo, "no_package", 'backend: "aotrun"\n' + P(package="/nonexistent/mlp"))
    harness.write_model(repo, "bad_dims", 'backend: "aotrun"\nmax_batch_size: 8\n'
                        'input [{ name: "x" data_type: TYPE_FP32 dims: [255] }]\n'
                        'output [{ name: "y" data_type: TYPE_FP32 dims: [64] }]\n' + P(package=mlp))
    harness.write_model(repo, "bad_dtype", 'backend: "aotrun"\nmax_batch_size: 8\n'
                        'input [{ name: "x" data_type: TYPE_FP64 dims: [256] }]\n'
                        'output [{ name: "y" data_type: TYPE_FP32 dims: [64] }]\n' + P(package=mlp))
    failure_paths.write_package_models(harness, repo, ARGS.packages)
    # The counting package (y = x + 1), each run busy for SLOW_RUN_US: one
    # instance, no batching, so queued requests reach the backend one by one.
    harness.write_model(repo, "slow", 'backend: "aotrun"\nmax_batch_size: 0\n'
                        'input [{ name: "x" data_type: TYPE_FP32 dims: [-1, 4] }]\n'
                        'output [{ name: "y" data_type: TYPE_FP32 dims: [-1, 4] }]\n'
                        'instance_group [{ count: 1 kind: KIND_CPU }]\n' +
                        P(package=os.path.join(ARGS.packages, "counting")))


def write_pt2_models(harness, repo, libtorch):
    fx = ARGS.fixtures
    P = harness.parameters
    # .pt2 archives found as model.pt2 in the version directory, configs
    # entirely auto-completed. dyn_mlp has a dynamic batch compiled for 2 and
    # up: batching stays off (Triton would form batches of 1), unless the
    # rows are declared independent (pad_batch), which serves batch 1 padded.
    harness.write_model(repo, "pt2_mlp", 'backend: "aotrun"\n' + P(libtorch=libtorch),
                        {"model.pt2": os.path.join(fx, "mlp.pt2")})
    harness.write_model(repo, "pt2_dyn", 'backend: "aotrun"\n' + P(libtorch=libtorch),
                        {"model.pt2": os.path.join(fx, "dyn_mlp.pt2")})
    harness.write_model(repo, "pt2_dyn_padded", 'backend: "aotrun"\n' + P(libtorch=libtorch, pad_batch="true"),
                        {"model.pt2": os.path.join(fx, "dyn_mlp.pt2")})
    # A .pt2 exported with keyword arguments and a dict output: auto-complete
    # names its tensors as the model does; a written configuration may use
    # the placeholders instead (or mix them).
    harness.write_model(repo, "pt2_named", 'backend: "aotrun"\n' + P(libtorch=libtorch),
                        {"model.pt2": os.path.join(NAMES, "named.pt2")})
    harness.write_model(repo, "pt2_named_aliases", 'backend: "aotrun"\nmax_batch_size: 0\n'
                        'input [{ name: "arg4_1" data_type: TYPE_FP32 dims: [-1, 8] },'
                        ' { name: "arg5_1" data_type: TYPE_FP32 dims: [-1, 8] },'
                        ' { name: "extra.bias" data_type: TYPE_FP32 dims: [8] },'
                        ' { name: "arg7_1" data_type: TYPE_FP32 dims: [8] }]\n'
                        'output [{ name: "output0" data_type: TYPE_FP32 dims: [-1, 4] },'
                        ' { name: "features" data_type: TYPE_FP32 dims: [-1, 8] }]\n' + P(libtorch=libtorch),
                        {"model.pt2": os.path.join(NAMES, "named.pt2")})
    # CLIP (the zoo's): texts and images are two batches; pad_batch serves
    # one text, but Triton must not stack requests (logits are [images,
    # texts]): auto-complete leaves batching off, saying why.
    harness.write_model(repo, "pt2_clip_padded", 'backend: "aotrun"\n' + P(libtorch=libtorch, pad_batch="true"),
                        {"model.pt2": os.path.join(ZOO, "clip.pt2")})
    failure_paths.write_pt2_models(harness, repo, fx, libtorch)
    unstated_shapes.write_models(harness, repo, fx, libtorch)


PACKAGE_MODELS = ("mlp", "mlp_async", "mlp_graph", "slow") + failure_paths.PACKAGE_MODELS
SLOW_RUN_US = 400000
PT2_MODELS = ("pt2_mlp", "pt2_dyn", "pt2_dyn_padded", "pt2_named", "pt2_named_aliases", "pt2_clip_padded") + failure_paths.PT2_MODELS + unstated_shapes.MODELS
PACKAGE_BAD_MODELS = {
    "bad_mode": r"parameter 'mode': 'fast' is not one of threaded, single_threaded, graph",
    "bad_count": r"parameter 'num_models': 'many' is not an integer in 1\.\.1024",
    "bad_key": r"unknown parameter 'modes'",
    "no_package": r"parameter 'package': '/nonexistent/mlp' does not exist",
    "bad_dims": r"input 'x': dims \[255\] .*do not fit the package's shape \[-1, 256\]",
    "bad_dtype": r"input 'x': data_type TYPE_FP64 but the package has TYPE_FP32",
}
PT2_BAD_MODELS = dict(unstated_shapes.BAD_MODELS)


def run(harness, libtorch):
    import numpy as np
    import tritonclient.http as httpclient
    from tritonclient.utils import InferenceServerException

    work = os.path.abspath(ARGS.work)
    os.makedirs(work, exist_ok=True)
    repo = os.path.join(work, "repository")
    write_repository(harness, repo, libtorch)
    ready, bad = (PT2_MODELS, PT2_BAD_MODELS) if libtorch else (PACKAGE_MODELS, PACKAGE_BAD_MODELS)
    rng = np.random.default_rng(19)

    def expect_error(fn, pattern, what):
        try:
            fn()
        except InferenceServerException as e:
            check(re.search(pattern, str(e)), what + ": unexpected error", str(e))
            return str(e)
        raise AssertionError(what + ": no error")

    def close(got, want, what, rtol=1e-4, atol=1e-4):
        check(got is not None and got.shape == want.shape, what + ": shape", None if got is None else got.shape,
              want.shape)
        check(np.allclose(got, want, rtol=rtol, atol=atol), what + ": values differ, max abs diff %g" %
              float(np.max(np.abs(got.astype(np.float64) - want))))

    # default-max-batch-size: what auto-complete gives a batchable package.
    server = harness.Server(ARGS.venv, repo, ARGS.backends, os.path.join(work, "tritonserver.log"),
                            ["--backend-config", "aotrun,default-max-batch-size=16"],
                            env=dict(failure_paths.SERVER_ENV, AOTRUN_TEST_SPIN_US=str(SLOW_RUN_US)))
    try:
        server.wait_ready(timeout=180)
        http = httpclient.InferenceServerClient(server.url(), network_timeout=60)

        # --- models that must load, and the ones that must not, with why ---
        index = {m["name"]: m for m in server.repository_index()}
        for name in ready:
            check(index.get(name, {}).get("state") == "READY", "model %s not ready" % name, index.get(name),
                  server.log_tail())
        for name, pattern in bad.items():
            reason = index.get(name, {}).get("reason", "")
            check(index.get(name, {}).get("state") != "READY" and re.search(pattern, reason),
                  "model %s: expected a load error matching %r" % (name, pattern), index.get(name))
        print("ok: %d models ready; %d bad configurations refused with their reasons" % (len(ready), len(bad)))

        if libtorch:
            check_pt2_models(server, http, close, expect_error)
        else:
            check_package_models(harness, server, http, rng, close, expect_error)
        check(server.proc.poll() is None, "server died")
        http.close()
    except BaseException:
        print("--- tritonserver log (tail) ---\n" + server.log_tail(80), file=sys.stderr)
        raise
    finally:
        rc, killed = server.stop()
    # The refused models make the exit status 1 (--exit-on-error false);
    # what matters is a shutdown without a signal that unloads every model.
    log = open(server.log_path, errors="replace").read()
    check(not killed and rc >= 0, "tritonserver did not stop on SIGTERM (status %s)" % rc, server.log_tail())
    for name in ready:
        check("successfully unloaded '%s'" % name in log, "model %s not unloaded at shutdown" % name,
              server.log_tail())
    print("ok: server stopped on SIGTERM (status %d), every model unloaded" % rc)


def check_pt2_models(server, http, close, expect_error):
    import numpy as np
    import tritonclient.http as httpclient

    manifest = json.load(open(os.path.join(ARGS.fixtures, "manifest.json")))
    tol = manifest["tolerance"]["float32"]
    dyn = http.get_model_config("pt2_dyn")
    check(dyn.get("max_batch_size", 0) == 0 and "dynamic_batching" not in dyn,
          "pt2_dyn: a model that refuses batch 1 must not auto-complete dynamic batching", dyn)
    check("auto-complete leaves dynamic batching off: a batch of 1 is refused" in server.log_tail(100000),
          "pt2_dyn: the log should say why batching is off", server.log_tail())
    padded = http.get_model_config("pt2_dyn_padded")
    check(padded.get("max_batch_size") == 16 and "dynamic_batching" in padded,
          "pt2_dyn_padded: pad_batch serves batch 1, so batching should be on", padded)
    print("ok: auto-complete: pt2_dyn (compiled for batch 2 and up) without batching, saying why; "
          "pt2_dyn_padded (pad_batch) with max_batch_size", padded["max_batch_size"])
    # One row of dyn_mlp's reference through the padded model, alone (a
    # batch of 1) and as 8 concurrent requests Triton may batch.
    xin = np.load(os.path.join(ARGS.fixtures, "dyn_mlp.in0.npy"))
    want = np.load(os.path.join(ARGS.fixtures, "dyn_mlp.out0.npy"))
    meta = http.get_model_metadata("pt2_dyn_padded")
    iname, oname = meta["inputs"][0]["name"], meta["outputs"][0]["name"]
    for row in range(xin.shape[0]):
        i = httpclient.InferInput(iname, [1, xin.shape[1]], "FP32")
        i.set_data_from_numpy(xin[row:row + 1])
        close(http.infer("pt2_dyn_padded", [i]).as_numpy(oname), want[row:row + 1], "pt2_dyn_padded row %d" % row,
              rtol=tol["rtol"], atol=tol["atol"])
    print("ok: pt2_dyn_padded serves single rows (batch 1, padded) equal to torch's reference")

    # --- .pt2 models against the references exported with them ---
    for model, fixture in (("pt2_mlp", "mlp"), ("pt2_dyn", "dyn_mlp"), ("pt2_dyn", "dyn_mlp.b3")):
        xin = np.load(os.path.join(ARGS.fixtures, fixture + ".in0.npy"))
        want = np.load(os.path.join(ARGS.fixtures, fixture + ".out0.npy"))
        meta = http.get_model_metadata(model)
        iname, oname = meta["inputs"][0]["name"], meta["outputs"][0]["name"]
        i = httpclient.InferInput(iname, list(xin.shape), "FP32")
        i.set_data_from_numpy(xin)
        got = http.infer(model, [i]).as_numpy(oname)
        close(got, want, "%s (%s)" % (model, fixture), rtol=tol["rtol"], atol=tol["atol"])
    print("ok: .pt2 models match torch's references (rtol %g, atol %g)" % (tol["rtol"], tol["atol"]))

    # --- the model's own names (issue #28) ---
    named = http.get_model_config("pt2_named")
    check([t["name"] for t in named["input"]] == ["arg4_1", "mask", "extra.bias", "extra.gain"] and
          [t["name"] for t in named["output"]] == ["logits", "features"],
          "pt2_named: auto-complete should name the tensors as the model does", named)
    feeds = {"arg4_1": "arg4_1", "mask": "mask", "extra.bias": "extra.bias", "extra.gain": "extra.gain"}
    for model, in_names, outs in (("pt2_named", list(feeds), ("logits", "features")),
                                  ("pt2_named_aliases", ["arg4_1", "arg5_1", "extra.bias", "arg7_1"],
                                   ("output0", "features"))):
        inputs = []
        for name, file in zip(in_names, feeds.values()):
            a = np.load(os.path.join(NAMES, "inputs", file + ".npy"))
            inputs.append(httpclient.InferInput(name, list(a.shape), "FP32"))
            inputs[-1].set_data_from_numpy(a)
        result = http.infer(model, inputs)
        for out, ref in zip(outs, ("logits", "features")):
            close(result.as_numpy(out), np.load(os.path.join(NAMES, "reference", ref + ".npy")),
                  "%s output %s" % (model, out), rtol=tol["rtol"], atol=tol["atol"])
    clip = http.get_model_config("pt2_clip_padded")
    check(clip.get("max_batch_size", 0) == 0 and "dynamic_batching" not in clip,
          "pt2_clip_padded: requests must not be stacked (its logits mix texts and images)", clip)
    check("stacked requests would mix in it" in server.log_tail(100000),
          "pt2_clip_padded: the log should say why batching is off", server.log_tail())
    print("ok: pt2_clip_padded (two batches) auto-completes without dynamic batching, saying why")
    print("ok: pt2_named auto-completes the model's own names (mask, extra.bias, logits, ...) and serves them; "
          "pt2_named_aliases serves the placeholders and model names mixed; both equal torch's reference")

    # --- requests that reach the backend and fail there, in aotrun ---
    failure_paths.check_pt2(http, ARGS.fixtures, check, expect_error)
    failure_paths.check_bad_requests(server, http, check, expect_error)
    unstated_shapes.check(http, ARGS.fixtures, check, expect_error)


def check_package_models(harness, server, http, rng, close, expect_error):
    import numpy as np
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient

    ref = harness.MlpReference(os.path.join(ARGS.packages, "mlp", "weights.safetensors"))

    # --- auto-complete: inputs and outputs came from the package specs ---
    cfg = http.get_model_config("mlp")
    check([(i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in cfg["input"]] ==
          [("x", "TYPE_FP32", [256])], "mlp inputs not auto-completed", cfg)
    check([(o["name"], o["data_type"], [int(d) for d in o["dims"]]) for o in cfg["output"]] ==
          [("y", "TYPE_FP32", [64])], "mlp outputs not auto-completed", cfg)
    print("ok: auto-completed configs:", cfg["input"][0]["dims"], "->", cfg["output"][0]["dims"])

    def infer_http(client, model, x, name="x", out="y"):
        i = httpclient.InferInput(name, list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        return client.infer(model, [i], outputs=[httpclient.InferRequestedOutput(out)]).as_numpy(out)

    # --- sync, HTTP and gRPC, each aotrun model ---
    for model in ("mlp", "mlp_async", "mlp_graph", "mlp_graph"):  # graph twice: warm-up, then replay
        x = rng.standard_normal((3, 256), dtype=np.float32)
        close(infer_http(http, model, x), ref(x), model + " (http)")
    grpc = grpcclient.InferenceServerClient(server.grpc_url())
    x = rng.standard_normal((5, 256), dtype=np.float32)
    gi = grpcclient.InferInput("x", [5, 256], "FP32")
    gi.set_data_from_numpy(x)
    close(grpc.infer("mlp", [gi]).as_numpy("y"), ref(x), "mlp (grpc)")
    grpc.close()
    print("ok: sync requests over HTTP and gRPC match the numpy reference")
    # --- concurrent clients, dynamic batching, in-flight window ---
    before = {m: stats(http, m) for m in ("mlp", "mlp_async")}
    failures = []

    def client(seed, model):
        r = np.random.default_rng(seed)
        c = httpclient.InferenceServerClient(server.url(), network_timeout=60)
        try:
            for _ in range(12):
                x = r.standard_normal((int(r.integers(1, 5)), 256), dtype=np.float32)
                got = infer_http(c, model, x)
                if got is None or not np.allclose(got, ref(x), rtol=1e-4, atol=1e-4):
                    failures.append("%s seed %d: wrong output" % (model, seed))
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append("%s seed %d: %r" % (model, seed, e))
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(s, m)) for s in range(4) for m in ("mlp", "mlp_async")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    check(not any(t.is_alive() for t in threads), "concurrent clients did not finish in 120 s")
    check(not failures, "concurrent clients:", *failures)
    # 16 requests in flight at once: the dynamic batcher merges them, and
    # each merged batch is one aotrun run (execution_count < inference_count).
    xs = [rng.standard_normal((1, 256), dtype=np.float32) for _ in range(16)]
    pending = []
    aclient = httpclient.InferenceServerClient(server.url(), concurrency=16, network_timeout=60)
    for x in xs:
        i = httpclient.InferInput("x", [1, 256], "FP32")
        i.set_data_from_numpy(x)
        pending.append(aclient.async_infer("mlp", [i]))
    for x, p in zip(xs, pending):
        close(p.get_result(timeout=60).as_numpy("y"), ref(x), "mlp (burst)")
    aclient.close()
    after = {m: stats(http, m) for m in ("mlp", "mlp_async")}
    for m in ("mlp", "mlp_async"):
        inferences = after[m][0] - before[m][0]
        executions = after[m][1] - before[m][1]
        check(inferences >= 48, "%s: %d inferences counted" % (m, inferences))
        print("ok: %s: %d requests from 4 concurrent clients (+ burst) in %d aotrun runs" %
              (m, inferences, executions))
    check(after["mlp"][1] - before["mlp"][1] < after["mlp"][0] - before["mlp"][0],
          "mlp: dynamic batching never merged requests", after["mlp"], before["mlp"])

    # --- malformed requests: clear errors naming the input, no crash ---
    def send(shape, dtype="FP32", name="x", model="mlp"):
        i = httpclient.InferInput(name, shape, dtype)
        i.set_data_from_numpy(np.zeros(shape, dtype=np.float64 if dtype == "FP64" else np.float32))
        return http.infer(model, [i])

    msgs = [expect_error(lambda: send([2, 255]), r"'x'.*shape|shape.*'x'", "wrong shape"),
            expect_error(lambda: send([2, 256], "FP64"), r"'x' data-type is 'FP64'", "wrong dtype"),
            expect_error(lambda: send([2, 256], name="z"), r"'z'|unexpected inference input", "unknown input"),
            expect_error(lambda: send([20, 256]), r"(?i)batch.size|max_batch_size|exceeds", "batch too large")]
    for m in msgs:
        print("ok: error:", m.splitlines()[0][:160])
    x = rng.standard_normal((2, 256), dtype=np.float32)
    close(infer_http(http, "mlp", x), ref(x), "mlp after bad requests")
    check(server.proc.poll() is None, "server died")

    # --- requests that reach the backend and fail there, in aotrun ---
    failure_paths.check_packages(http, check, expect_error)
    check(server.proc.poll() is None, "server died")
    check_cancelled_requests(server, http)

    # --- aotrun's statistics in Triton's metrics ---
    text = server.metrics()
    runs = re.search(r'^aotrun_runs\{[^}]*model="mlp"[^}]*\} (\S+)', text, re.M)
    check(runs and float(runs.group(1)) > 0, "no aotrun_runs series for mlp in /metrics", text[-2000:])
    replays = re.search(r'^aotrun_graph_replays\{[^}]*model="mlp_graph"[^}]*\} (\S+)', text, re.M)
    check(replays and float(replays.group(1)) >= 1, "mlp_graph: no graph replay in /metrics",
          [l for l in text.splitlines() if l.startswith("aotrun_")])
    print("ok: /metrics has aotrun_runs (mlp: %s) and aotrun_graph_replays (mlp_graph: %s)" %
          (runs.group(1), replays.group(1)))


def check_cancelled_requests(server, http):
    """Requests their clients gave up on while queued are answered CANCELLED,
    not run: one slow run occupies the only instance, ten gRPC requests with
    a deadline shorter than that run queue behind it and time out, then one
    request that is still wanted. aotrun must run two of the twelve."""
    import numpy as np
    import tritonclient.grpc as grpcclient

    def runs():
        m = re.search(r'^aotrun_runs\{[^}]*model="slow"[^}]*\} (\S+)', server.metrics(), re.M)
        return float(m.group(1)) if m else 0.0

    def request(x):
        i = grpcclient.InferInput("x", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        return [i]

    grpc = grpcclient.InferenceServerClient(server.grpc_url())
    before = runs()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    results = {}
    done = threading.Event()

    def callback(key, result, error):
        results[key] = (result, error)
        if len(results) == 12:
            done.set()

    # tritonclient calls back with keywords: callback(result=, error=).
    start = time.monotonic()
    grpc.async_infer("slow", request(x), functools.partial(callback, "first"))
    time.sleep(0.05)  # the first run has started
    deadline_s = SLOW_RUN_US / 1e6 / 4
    for k in range(10):
        grpc.async_infer("slow", request(x), functools.partial(callback, k), client_timeout=deadline_s)
    time.sleep(deadline_s * 1.5)  # every queued request is past its deadline
    grpc.async_infer("slow", request(x), functools.partial(callback, "last"))
    check(done.wait(timeout=60), "cancelled requests: not every request was answered in 60 s", results.keys())
    drain_s = time.monotonic() - start
    for key in ("first", "last"):
        result, error = results[key]
        check(error is None and np.array_equal(result.as_numpy("y"), x + 1), "slow: %s request failed" % key, error)
    timed_out = [k for k in range(10) if results[k][1] is not None]
    check(len(timed_out) == 10, "slow: requests past their deadline answered with outputs", results)
    # Metrics are updated after each batch; give the last one a moment.
    for _ in range(50):
        if runs() - before >= 2:
            break
        time.sleep(0.1)
    ran = runs() - before
    check(ran == 2, "slow: aotrun ran %d of 12 requests; the 10 cancelled ones must not run" % ran,
          server.log_tail(30))
    grpc.close()
    print("ok: 10 requests cancelled by their gRPC deadline while queued were not run (%d runs for 12 requests, "
          "all answered in %.2f s; each run takes %.2f s)" % (ran, drain_s, SLOW_RUN_US / 1e6))


def stats(client, model):
    s = client.get_inference_statistics(model)["model_stats"][0]
    return int(s["inference_count"]), int(s["execution_count"])


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
