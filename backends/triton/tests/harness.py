"""Starting and stopping a real tritonserver for the aotrun backend's test
and benchmark, writing model repositories, and the MLP's reference.

Runs inside the private venv of scripts/fetch-triton.sh (nvidia-pytriton's
tritonserver 2.51, tritonclient, numpy). Everything binds to 127.0.0.1.
"""

import glob
import json
import os
import signal
import socket
import struct
import subprocess
import time
import urllib.request

import numpy as np


def tritonserver_binary(venv):
    found = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "pytriton", "tritonserver", "bin",
                                   "tritonserver"))
    return found[0] if found else None


def free_ports(n):
    """n distinct free loopback ports (bound then released; a race with
    another process is possible but unlikely, and shows as a startup error)."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Server:
    """A tritonserver on loopback ports, stopped by stop() or on exit."""

    def __init__(self, venv, repository, backend_dir, log_path, extra_args=(), env=None, clean_env=False):
        self.binary = tritonserver_binary(venv)
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.log_path = log_path
        server_dir = os.path.dirname(os.path.dirname(self.binary))
        args = [self.binary, "--model-repository", repository,
                "--backend-directory", backend_dir,
                "--http-address", "127.0.0.1", "--http-port", str(self.http_port),
                "--grpc-address", "127.0.0.1", "--grpc-port", str(self.grpc_port),
                "--metrics-address", "127.0.0.1", "--metrics-port", str(self.metrics_port),
                "--allow-metrics", "true", "--allow-gpu-metrics", "false", "--allow-cpu-metrics", "false",
                "--exit-on-error", "false", "--strict-readiness", "false",
                "--exit-timeout-secs", "10", "--log-verbose", "0",
                # the Python backend's stubs come with the wheel, next to bin/
                "--backend-config", "python,shm-default-byte-size=4194304"]
        args += list(extra_args)
        # clean_env: only what a container's entry point would have, so that
        # nothing of this machine's environment (LD_LIBRARY_PATH,
        # AOTRUN_LIBTORCH, ...) helps the server find aotrun.
        e = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"} if clean_env else dict(os.environ)
        e.update(env or {})
        # The wheel's libraries (libtritonserver and what it needs) sit in
        # nvidia_pytriton.libs; the python backend needs its stub directory.
        libs = os.path.join(os.path.dirname(os.path.dirname(server_dir)), "nvidia_pytriton.libs")
        e["LD_LIBRARY_PATH"] = libs + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=e,
                                     start_new_session=True)

    def url(self):
        return "127.0.0.1:%d" % self.http_port

    def grpc_url(self):
        return "127.0.0.1:%d" % self.grpc_port

    def wait_ready(self, timeout=120):
        """Waits for /v2/health/ready; raises with the log's tail if the
        server dies or does not get ready in time."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tritonserver exited with %s:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                with urllib.request.urlopen("http://%s/v2/health/ready" % self.url(), timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise RuntimeError("tritonserver not ready after %ds:\n%s" % (timeout, self.log_tail()))

    def metrics(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10) as r:
            return r.read().decode()

    def repository_index(self):
        req = urllib.request.Request("http://%s/v2/repository/index" % self.url(), data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def log_tail(self, n=60):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def stop(self):
        """SIGTERM, then SIGKILL after 30 s; returns (exit status, killed)."""
        killed = False
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                killed = True
        self.log.close()
        return self.proc.returncode, killed


def write_model(repository, name, config, files=None):
    """<repository>/<name>/config.pbtxt and version 1 with `files`
    ({name: source path}, linked)."""
    d = os.path.join(repository, name)
    os.makedirs(os.path.join(d, "1"), exist_ok=True)
    with open(os.path.join(d, "config.pbtxt"), "w") as f:
        f.write(config)
    for fname, src in (files or {}).items():
        dst = os.path.join(d, "1", fname)
        if not os.path.lexists(dst):
            os.symlink(src, dst)


def parameters(**kv):
    return "".join('parameters { key: "%s" value: { string_value: "%s" } }\n' % (k, v) for k, v in kv.items())


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", t
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(t["shape"])
    return out


class MlpReference:
    """The example MLP package's function computed in float64 by numpy
    from its weights file: independent of aotrun and of OpenBLAS."""

    def __init__(self, weights_path):
        w = read_safetensors(weights_path)
        self.w = {k: v.astype(np.float64) for k, v in w.items()}

    def __call__(self, x):
        h = np.maximum(x.astype(np.float64) @ self.w["fc1.weight"].T + self.w["fc1.bias"], 0)
        h = np.maximum(h @ self.w["fc2.weight"].T + self.w["fc2.bias"], 0)
        return h @ self.w["fc3.weight"].T + self.w["fc3.bias"]
