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


PACKAGE_MODELS = ("fault", "fault_async")
PT2_MODELS = ("pt2_dyn_wide",)


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
                       refused + r"dim 0 is 1, .*\[2, 64\].*specialises sizes 0 and 1", "pt2_dyn_wide batch 1")
    print("ok: pt2_dyn_wide: batch 1 refused:", msg.splitlines()[0][-120:])
    # 64 rows, the first 8 torch's reference input (rows are independent).
    x = rng.standard_normal((64, 64), dtype=np.float32)
    x[:8] = np.load(os.path.join(fixtures, "dyn_mlp.in0.npy"))
    want = np.load(os.path.join(fixtures, "dyn_mlp.out0.npy"))
    got = infer("pt2_dyn_wide", x, iname, oname)
    check_that(got is not None and got.shape[0] == 64 and np.allclose(got[:8], want, rtol=1e-5, atol=1e-5),
               "pt2_dyn_wide batch 64 after the refusals: wrong output", None if got is None else got.shape)
    print("ok: pt2_dyn_wide still serves batch 64 after the refusals (rows match torch's reference)")
