"""Failure paths of the aotrun backend in the real server: requests that
pass Triton's own checks and reach the backend, and runs that fail inside
aotrun. Each must come back to its client as an error carrying aotrun's
message, and the server must go on serving the same model afterwards.

Used by triton_backend_test.py: write_package_models() and
write_pt2_models() add the models to its repository, check_packages() and
check_pt2() run against the started server (whose environment sets
FAULT_EVERY for the test package).
"""

import os
import re

# fault_sync (tests/packages) fails every Nth run of its container; read
# when the runner creates it, so it goes into the server's environment.
FAULT_EVERY = 3
SERVER_ENV = {"AOTRUN_TEST_FAULT_EVERY": str(FAULT_EVERY)}


def write_package_models(harness, repo, packages):
    P = harness.parameters
    fault = os.path.join(packages, "fault_sync")
    # One runner with one model instance, so runs are counted in request
    # order: synchronous runs on Triton's thread, and the same through
    # aotrun's in-flight window (the failure arrives on aotrun's worker).
    harness.write_model(repo, "fault", 'backend: "aotrun"\nmax_batch_size: 8\n' + P(package=fault))
    harness.write_model(repo, "fault_async", 'backend: "aotrun"\nmax_batch_size: 8\n' +
                        P(package=fault, mode="single_threaded", max_inflight="2"))


def write_pt2_models(harness, repo, fixtures, libtorch):
    P = harness.parameters
    # dyn_mlp.pt2 was exported with batch Dim(min=1, max=64); Triton lets
    # through anything up to max_batch_size, so batch 65..128 reaches aotrun.
    harness.write_model(repo, "pt2_dyn_wide", 'backend: "aotrun"\nmax_batch_size: 128\n' + P(libtorch=libtorch),
                        {"model.pt2": os.path.join(fixtures, "dyn_mlp.pt2")})
    write_requests_model(harness, repo, libtorch)


# The bad-request model (tests/pt2/requests, issue #29): token ids into a
# 500-row table and a mask that must agree with them, inside OpenMP kernels,
# where a failed index check used to end the server.
REQUESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "pt2", "requests")


def write_requests_model(harness, repo, libtorch):
    harness.write_model(repo, "pt2_ids_mask", 'backend: "aotrun"\nmax_batch_size: 0\n'
                        'input [{ name: "arg4_1" data_type: TYPE_INT64 dims: [-1, -1] },'
                        ' { name: "arg5_1" data_type: TYPE_FP32 dims: [-1, -1] }]\n'
                        'output [{ name: "output0" data_type: TYPE_FP32 dims: [-1, 64] }]\n'
                        'instance_group [{ count: 2 kind: KIND_CPU }]\n' + harness.parameters(libtorch=libtorch),
                        {"model.pt2": os.path.join(REQUESTS, "ids_mask.pt2")})


PACKAGE_MODELS = ("fault", "fault_async")
PT2_MODELS = ("pt2_dyn_wide", "pt2_ids_mask")


def _infer(http, model, x, name="x", out="y"):
    import tritonclient.http as httpclient

    i = httpclient.InferInput(name, list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return http.infer(model, [i], outputs=[httpclient.InferRequestedOutput(out)]).as_numpy(out)


def check_packages(http, check_that, expect_error):
    """http: a tritonclient.http client; check_that(cond, what, *context);
    expect_error(fn, pattern, what) -> the message."""
    import numpy as np

    def infer(model, x):
        return _infer(http, model, x)

    # INTERNAL (HTTP 500); threaded runs are named "run", single_threaded ones
    # "run_single_threaded".
    injected = (r"\[500\] aotrun: PACKAGE: package 'fault_sync': run(_single_threaded)? failed "
                r".*injected failure on run %d\b")
    rng = np.random.default_rng(77)
    for model in ("fault", "fault_async"):
        failed, served = [], 0
        for n in range(1, 3 * FAULT_EVERY + 1):
            x = rng.standard_normal((2, 4), dtype=np.float32)
            if n % FAULT_EVERY == 0:
                failed.append(expect_error(lambda: infer(model, x), injected % n, "%s run %d" % (model, n)))
            else:
                got = infer(model, x)  # y = x: the runs between the failures still answer
                check_that(got is not None and np.array_equal(got, x), "%s run %d: wrong output" % (model, n), got)
                served += 1
        print("ok: %s: %d injected run failures reached the client (%s), %d runs between them served" %
              (model, len(failed), failed[0].splitlines()[0][:120], served))


def check_pt2(http, fixtures, check_that, expect_error):
    """As check_packages, for the .pt2 model; fixtures: the torch 2.15.0 corpus."""
    import numpy as np

    def infer(model, x, name, out):
        return _infer(http, model, x, name, out)

    rng = np.random.default_rng(78)
    meta = http.get_model_metadata("pt2_dyn_wide")
    iname, oname = meta["inputs"][0]["name"], meta["outputs"][0]["name"]
    refused = r"\[400\] aotrun: INVALID_ARGUMENT: .*'%s'\): " % re.escape(iname)
    msg = expect_error(lambda: infer("pt2_dyn_wide", np.zeros((65, 64), np.float32), iname, oname),
                       refused + r"dim 0 is 65, outside the range the model was compiled for \[\d+, 64\]",
                       "pt2_dyn_wide batch 65")
    print("ok: pt2_dyn_wide: batch 65 (max_batch_size 128, package max 64) refused:", msg.splitlines()[0][:160])
    # torch.export compiles a dim declared from 1 for 2 and up: a lone row
    # passes Triton's checks and is refused by aotrun, saying so.
    msg = expect_error(lambda: infer("pt2_dyn_wide", np.zeros((1, 64), np.float32), iname, oname),
                       refused + r"dim 0 is 1, .*\[2, 64\].*0/1 specialisation.*pad_batch", "pt2_dyn_wide batch 1")
    print("ok: pt2_dyn_wide: batch 1 refused:", msg.splitlines()[0][-120:])
    # 64 rows, the first 8 torch's reference input (rows are independent).
    x = rng.standard_normal((64, 64), dtype=np.float32)
    x[:8] = np.load(os.path.join(fixtures, "dyn_mlp.in0.npy"))
    want = np.load(os.path.join(fixtures, "dyn_mlp.out0.npy"))
    got = infer("pt2_dyn_wide", x, iname, oname)
    check_that(got is not None and got.shape[0] == 64 and np.allclose(got[:8], want, rtol=1e-5, atol=1e-5),
               "pt2_dyn_wide batch 64 after the refusals: wrong output", None if got is None else got.shape)
    print("ok: pt2_dyn_wide still serves batch 64 after the refusals (rows match torch's reference)")


def check_bad_requests(server, http, check_that, expect_error):
    """Issue #29 in the real server: ids outside the vocabulary, a mask that
    disagrees with the ids and an over-long sequence each come back as a 400
    naming the input, sent alone and mixed with good requests over 8
    connections; the good ones stay right and the server process stays the same."""
    import numpy as np
    import tritonclient.http as httpclient

    ids = np.load(os.path.join(REQUESTS, "ids_mask.in0.npy"))
    mask = np.load(os.path.join(REQUESTS, "ids_mask.in1.npy"))
    want = np.load(os.path.join(REQUESTS, "ids_mask.out0.npy"))
    pid = server.proc.pid

    def infer(i, m, client=http):
        a = httpclient.InferInput("arg4_1", list(i.shape), "INT64")
        a.set_data_from_numpy(i)
        b = httpclient.InferInput("arg5_1", list(m.shape), "FP32")
        b.set_data_from_numpy(m)
        return client.infer("pt2_ids_mask", [a, b]).as_numpy("output0")

    def with_id(v):
        bad = ids.copy()
        bad[1, 4] = v
        return bad

    refused = r"\[400\] aotrun: INVALID_ARGUMENT: .*"
    bad_requests = [
        ("id 500", lambda c: infer(with_id(500), mask, c), refused + r"element \[1, 4\] is 500, outside \[0, 500\)"),
        ("id -1", lambda c: infer(with_id(-1), mask, c), refused + r"element \[1, 4\] is -1, outside \[0, 500\)"),
        ("id 2^40", lambda c: infer(with_id(1 << 40), mask, c), refused + r"is 1099511627776, outside"),
        ("short mask", lambda c: infer(ids, mask[:, :8].copy(), c), refused + r"input 1 .*input 0 .*must agree"),
        ("65 tokens", lambda c: infer(np.zeros((2, 65), np.int64), np.ones((2, 65), np.float32), c),
         refused + r"dim 1 is 65, outside the range the model was compiled for \[2, 64\]"),
    ]
    got = infer(ids, mask)
    check_that(got is not None and np.allclose(got, want, rtol=1.3e-6, atol=1e-5), "pt2_ids_mask: wrong output")
    for what, fn, pattern in bad_requests:
        expect_error(lambda: fn(http), pattern, "pt2_ids_mask " + what)
    print("ok: pt2_ids_mask: %d bad requests refused naming the input (%s)" % (len(bad_requests), ", ".join(
        w for w, _, _ in bad_requests)))

    # Mixed, concurrently: one client with 8 connections (tritonclient's
    # HTTP client is not for use from several threads), 40 good and 40 bad
    # requests interleaved, all sent before any answer is read.
    pool = httpclient.InferenceServerClient(server.url(), concurrency=8, network_timeout=60)

    def submit(i, m):
        a = httpclient.InferInput("arg4_1", list(i.shape), "INT64")
        a.set_data_from_numpy(i)
        b = httpclient.InferInput("arg5_1", list(m.shape), "FP32")
        b.set_data_from_numpy(m)
        return pool.async_infer("pt2_ids_mask", [a, b])

    bad_inputs = [(with_id(500), mask), (with_id(-1), mask), (with_id(1 << 40), mask), (ids, mask[:, :8].copy()),
                  (np.zeros((2, 65), np.int64), np.ones((2, 65), np.float32))]
    pending = []
    for n in range(80):
        k = (n // 2) % len(bad_requests)
        pending.append((n, k, submit(ids, mask) if n % 2 == 0 else submit(*bad_inputs[k])))
    outcomes = []
    for n, k, req in pending:
        try:
            y = req.get_result().as_numpy("output0")
        except Exception as e:  # InferenceServerException
            good = n % 2 == 0
            outcomes.append("good request failed: " + str(e)[:200] if good else
                            "refused" if re.search(bad_requests[k][2], str(e)) else "other error: " + str(e)[:200])
            continue
        outcomes.append(("good" if np.allclose(y, want, rtol=1.3e-6, atol=1e-5) else "wrong") if n % 2 == 0 else
                        "bad request served: " + bad_requests[k][0])
    pool.close()
    counts = {o: outcomes.count(o) for o in set(outcomes)}
    check_that(counts == {"good": 40, "refused": 40}, "pt2_ids_mask under mixed load", counts)
    check_that(server.proc.poll() is None and server.proc.pid == pid, "tritonserver exited or restarted")
    check_that(http.is_server_live() and http.is_model_ready("pt2_ids_mask"), "server or model not ready after")
    print("ok: pt2_ids_mask: 40 good and 40 bad requests over 8 connections at once: %s; the server (pid %d) "
          "kept serving" % (counts, pid))
