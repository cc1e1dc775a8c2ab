#!/usr/bin/env python3
"""The deployment docs/SERVING.md describes, step by step, as a user (and
the container image's Dockerfile) does it: `cmake --install` into a prefix,
the installed backend directory copied under a --backend-directory, a model
repository laid out as the docs say (the MLP package as `1/model/`, the
smallest config.pbtxt, auto-complete), then the real tritonserver started
from there with a clean environment (no LD_LIBRARY_PATH, nothing of the
build tree), a request answered right, and a liveness check that runs an
inference. Exit 77 (skip) without the Triton venv.

    deploy_test.py --venv DIR --build DIR --work DIR
"""

import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77
# The probe docs/SERVING.md recommends (backends/triton/liveness.py).
LIVENESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "liveness.py")


def check(cond, what, *context):
    if not cond:
        raise AssertionError(what + "".join("\n" + str(c) for c in context))


def main():
    p = argparse.ArgumentParser()
    for a in ("--venv", "--build", "--work"):
        p.add_argument(a, required=True)
    args = p.parse_args()
    venv, build, work = (os.path.abspath(x) for x in (args.venv, args.build, args.work))
    venv_python = os.path.join(venv, "bin", "python")
    if not os.path.exists(venv_python):
        print("skipped: no Triton venv at %s (scripts/fetch-triton.sh makes it)" % venv)
        sys.exit(SKIP)
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(venv_python, [venv_python] + sys.argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import harness
    import numpy as np
    import tritonclient.http as httpclient

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. Install (docs/SERVING.md, "Build and install").
    prefix = os.path.join(work, "prefix")
    subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
    installed = os.path.join(prefix, "lib", "triton", "backends", "aotrun")
    for f in ("libtriton_aotrun.so", "libaotrun.so.1"):
        check(os.path.exists(os.path.join(installed, f)), "the installed backend directory lacks " + f,
              sorted(os.listdir(installed)) if os.path.isdir(installed) else "(no %s)" % installed)
    runpath = subprocess.run(["readelf", "-d", os.path.join(installed, "libtriton_aotrun.so")], check=True,
                             capture_output=True, text=True).stdout
    check("[$ORIGIN]" in runpath and build not in runpath,
          "installed libtriton_aotrun.so must find libaotrun through $ORIGIN only",
          [l for l in runpath.splitlines() if "PATH" in l])
    print("ok: cmake --install: %s holds %s; run path $ORIGIN" % (installed, ", ".join(sorted(os.listdir(installed)))))

    # 2. The backend directory, copied as the Dockerfile does.
    backends = os.path.join(work, "backends")
    shutil.copytree(installed, os.path.join(backends, "aotrun"), symlinks=True)

    # 3. The model repository of the docs: the smallest config, the package as 1/model/.
    repo = os.path.join(work, "models")
    os.makedirs(os.path.join(repo, "mlp", "1"))
    with open(os.path.join(repo, "mlp", "config.pbtxt"), "w") as f:
        f.write('backend: "aotrun"\n')
    shutil.copytree(os.path.join(build, "packages", "mlp"), os.path.join(repo, "mlp", "1", "model"))

    # 4. The server from there, with a clean environment.
    server = harness.Server(venv, repo, backends, os.path.join(work, "tritonserver.log"), clean_env=True)
    try:
        server.wait_ready(timeout=180)
        http = httpclient.InferenceServerClient(server.url(), network_timeout=60)
        ref = harness.MlpReference(os.path.join(repo, "mlp", "1", "model", "weights.safetensors"))
        x = np.random.default_rng(3).standard_normal((2, 256), dtype=np.float32)
        i = httpclient.InferInput("x", [2, 256], "FP32")
        i.set_data_from_numpy(x)
        y = http.infer("mlp", [i]).as_numpy("y")
        check(y is not None and y.shape == (2, 64) and np.allclose(y, ref(x), rtol=1e-4, atol=1e-4),
              "mlp from the installed backend: wrong output", None if y is None else y.shape)
        print("ok: the installed backend serves the documented repository with a clean environment")
        # 5. The liveness check docs/SERVING.md recommends: an inference, not
        # only /v2/health/live.
        probe = subprocess.run([sys.executable, LIVENESS, "--url", server.url(), "--model", "mlp"],
                               capture_output=True, text=True)
        check(probe.returncode == 0, "liveness probe failed on a healthy server", probe.stdout, probe.stderr)
        print("ok: liveness probe (an inference):", probe.stdout.strip())
        http.close()
    except BaseException:
        print("--- tritonserver log (tail) ---\n" + server.log_tail(80), file=sys.stderr)
        raise
    finally:
        server.stop()
    probe = subprocess.run([sys.executable, LIVENESS, "--url", server.url(), "--model", "mlp", "--timeout", "2"],
                           capture_output=True, text=True)
    check(probe.returncode != 0, "liveness probe passed against a stopped server", probe.stdout)
    print("ok: liveness probe fails once the server is gone:", (probe.stdout + probe.stderr).strip()[:160])


if __name__ == "__main__":
    main()
