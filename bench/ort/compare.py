"""aotrun (on its own shim, no libtorch) against ONNX Runtime on the model zoo
of tests/pt2/zoo (issue #26, "Measure").

What it measures, for resnet, mobilenet (channels_last), vit, clip,
bert_named, gpt2 and llama at one size each (SIZES below, inside the
compiled ranges of tests/pt2/zoo/README.md), with the same weights (the
ONNX models are built by tests/pt2/zoo/export_zoo.py's own builders and
seeds) and the same inputs (the zoo's stored inputs, sliced to the size):

  * correctness first: ONNX Runtime's outputs against the zoo's stored eager
    PyTorch references for that case and against `aotrun run --output-dir`
    on the same input files (max abs diff printed; a model that does not
    match is not benchmarked);
  * steady-state latency, p50 per call, at 1 and at 2 threads:
      aotrun: `aotrun bench PKG --input ... --threads 1 --duration D --json`
              with OMP_NUM_THREADS=N (the model kernels' threads are
              OpenMP's); one caller thread, default warm-up (10 calls);
      ORT:    a fresh python process creating an InferenceSession with
              intra_op_num_threads=N, inter_op_num_threads=1, sequential
              execution, all graph optimisations (the default), 10 warm-up
              calls, then session.run in a loop for D seconds, each call
              timed with perf_counter_ns (this includes session.run's
              Python overhead and the allocation of its numpy outputs,
              a few tens of microseconds).
    Rounds alternate aotrun, ORT, aotrun, ORT ... (each round a fresh
    process of each), ROUNDS rounds each, models interleaved within a
    round; the reported number is the median over rounds of each round's
    p50. Ratio = aotrun / ORT (below 1: aotrun faster).
  * cold open to first output, fresh process, page cache warm:
      aotrun: wall time of `aotrun run PKG --json --input ...` (open the
              .pt2, dlopen, read the inputs, one run, print the summary),
              and the first call alone (its "run_ns");
      ORT:    wall time of `python compare.py _ort_cold ...` (interpreter
              start, import numpy and onnxruntime, read the inputs, create
              the session, one run, print); reported with and without the
              interpreter's own start (`python -c pass` in the same venv,
              measured the same way), and the in-process part (import +
              session + first run) as the child reports it;
    median of ROUNDS alternating runs each, at 1 thread; every such process
    runs under /usr/bin/time -v, whose maximum resident set size is the
    "RSS after the first run" (ORT's includes the Python interpreter and
    numpy; `python -c "import numpy"` is measured as a baseline).
  * open: aotrun's open (`load_ns` of `aotrun bench` and `aotrun run`)
    against ORT's InferenceSession creation, paired by the rounds they ran
    in (latency rounds, cold rounds): on a virtual machine that reports
    freed memory to its host, fresh memory costs more the longer ago it was
    freed, and the two kinds of round leave different gaps. Each latency
    round also logs the CPU steal time of each engine's process when it was
    1 ms or more.

The results file's header names the CPU (model name and its vector
extensions: avx2, fma, avx512f/bw/vl/vnni/bf16, avx_vnni, amx).

--tier real measures the tier at real sizes of issue #41 instead (ResNet-18,
MobileNetV3-small, GPT-2, Llama, ViT, BERT and frozen ResNet-18 and
MobileNetV3): bench/ort/real_tier.py builds its packages, inputs, eager
references and ONNX models into ~/.cache/aotrun/bench-real ({zoo,onnx});
its manifest names the models and sizes ("bench_sizes") and the check's
tolerances per output ("bench_tol": [rtol, atol]), which replace SIZES and
the zoo's 1e-4/1e-5 here. A model aotrun fails to run in the check is
logged with aotrun's message and not benchmarked.

How to run it (from the repository root; aotrun already built):

  # 1. the ONNX models, into /tmp/ort_models (needs torch 2.15, timm,
  #    torchvision, transformers as for export_zoo.py, plus onnx and
  #    onnxscript; see README.md for the venv used)
  /tmp/ortexport-venv/bin/python bench/ort/compare.py export
  # 2. verification and all measurements (needs onnxruntime, onnx, numpy:
  #    python3 -m venv /tmp/ortvenv && /tmp/ortvenv/bin/pip install onnxruntime onnx numpy)
  /tmp/ortvenv/bin/python bench/ort/compare.py bench --results bench/ort/results-YYYY-MM-DD.txt

Options of `bench`: --tier zoo|real, --aotrun PATH (default build/tools/aotrun) and
--aotrun-lib DIR (LD_LIBRARY_PATH for it: a copy of build/c_api, so that a
rebuild of the tree during the run changes nothing), --zoo DIR (default
tests/pt2/zoo; `export` takes it too: export from the zoo you measure),
--models, --threads 1 2, --rounds 5, --duration 2 (seconds per latency
round), --cold-rounds 5, --models-dir /tmp/ort_models (--tier real:
~/.cache/aotrun/bench-real/onnx), --verify-only (the
correctness check alone, nothing measured); references, run in
each round after the pair: --libtorch DIR (the same .pt2 on libtorch) and
--openblas-coretype CORE (the shim with OpenBLAS's kernels forced);
--as-avx2-host LIB: the whole run as on an AVX2-only host, ORT included
(tests/support/avx2_host.c; Intel hosts only). The results file is written
line by line as the run goes.
"""
import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ZOO = os.path.join(ROOT, "tests", "pt2", "zoo")
DEFAULT_MODELS_DIR = "/tmp/ort_models"
# --tier real: the models of bench/ort/real_tier.py (issue #41), built there
REAL_TIER = os.path.join(os.path.expanduser("~"), ".cache", "aotrun", "bench-real")

# One representative size per model, inside the compiled ranges (README.md).
SIZES = {
    "resnet": {"batch": 8},
    "mobilenet": {"batch": 8},
    "vit": {"batch": 8},
    "clip": {"texts": 4, "images": 4},
    "bert_named": {"batch": 2, "seq": 64},
    "gpt2": {"batch": 2, "seq": 16},
    "llama": {"batch": 2, "seq": 16},
}


def size_str(sizes):
    return " x ".join("%s %d" % (k, v) for k, v in sizes.items())


def use_zoo(path):
    """--zoo: another copy of tests/pt2/zoo (a snapshot, when the tree's
    may be re-exported while this runs)."""
    global ZOO
    ZOO = os.path.abspath(path)


def manifest():
    with open(os.path.join(ZOO, "manifest.json")) as f:
        return json.load(f)


def use_bench_sizes():
    """A zoo whose manifest names its own models and sizes ("bench_sizes":
    real_tier.py's) is measured at those instead of SIZES'."""
    sizes = manifest().get("bench_sizes")
    if sizes:
        SIZES.clear()
        SIZES.update(sizes)


def host_flags():
    """The first CPU's flags in /proc/cpuinfo."""
    with open("/proc/cpuinfo") as f:
        return next((set(l.partition(":")[2].split()) for l in f if l.partition(":")[0].strip() == "flags"), set())


def cpu_line():
    """The CPU's model name and the vector extensions that matter to the
    kernels, from /proc/cpuinfo."""
    model, flags, ident = "?", host_flags(), {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name" and model == "?":
                model = value
            elif key in ("cpu family", "model", "stepping") and key not in ident:
                ident[key] = value
    if ident:
        # "AMD EPYC" alone does not say which generation
        model += " (%s%s)" % (", ".join("%s %s" % kv for kv in ident.items()),
                              ", under a hypervisor" if "hypervisor" in flags else "")
    want = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile",
            "amx_int8", "amx_bf16"]
    return "%s; vector extensions: %s (no %s)" % (model, " ".join(w for w in want if w in flags) or "none",
                                                  " ".join(w for w in want if w not in flags) or "-")


def memory_line():
    """What decides how fast fresh memory faults in, which open times
    depend on: transparent huge pages (aotrun advises its constants, SHIM.md)
    and a hypervisor's free page reporting (virtio-balloon: free 2 MiB
    blocks are handed back to the host, so a huge page made from one is
    faulted in again by the host, docs/PERFORMANCE.md section 33)."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return None
    thp = read("/sys/kernel/mm/transparent_hugepage/enabled") or "?"
    thp = thp[thp.find("[") + 1:thp.find("]")] if "[" in thp else thp
    # A virtio balloon (device 5) that negotiated VIRTIO_BALLOON_F_REPORTING
    # (feature bit 5; sysfs lists the bits as a string of 0s and 1s).
    reporting = False
    for dev in glob.glob("/sys/bus/virtio/devices/*"):
        features = read(os.path.join(dev, "features")) or ""
        if read(os.path.join(dev, "device")) == "0x0005" and features[5:6] == "1":
            reporting = True
    order = read("/sys/module/page_reporting/parameters/page_reporting_order")
    reporting = ("free page reporting to the host (virtio balloon, from order %s)" % (order or "?") if reporting
                 else "no free page reporting")
    return "transparent huge pages %s; %s" % (thp, reporting)


def check_exports(args, man):
    """What code each .pt2 holds (real_tier.py's manifest "export": native,
    for the export host's CPU, or the portable avx2; the zoo's and older
    tiers' have none and are avx2), as one line; stops when a package needs
    vector extensions this host (or, with --as-avx2-host, an AVX2-only one)
    does not have: it would die of an illegal instruction."""
    flags = host_flags()
    if args.as_avx2_host:
        flags = {x for x in flags if not x.startswith(("avx512", "amx", "avx_vnni"))}
    kinds, missing = {}, {}
    for name in args.models:
        export = man[name].get("export", {"isa": "avx2", "needs": ["avx2", "fma"]})
        kinds.setdefault(export["isa"], []).append(name)
        lack = sorted(set(export["needs"]) - flags)
        if lack:
            missing[name] = lack
    if missing:
        sys.exit("these packages need vector extensions this %s lacks (re-export them here with real_tier.py, or "
                 "with --isa avx2): %s" % ("AVX2-only host" if args.as_avx2_host else "host", "; ".join(
                     "%s: %s" % (n, " ".join(v)) for n, v in missing.items())))
    return "; ".join("%s: %s" % ("native export for this CPU" if k == "native" else
                                 "portable AVX2 export (x86-64-v3)", " ".join(v)) for k, v in kinds.items())


def out_names(m):
    return [o["name"] or o["placeholder"] for o in m["outputs"]]


# --------------------------------------------------------------- export ---

def export(args):
    """ONNX models with the zoo's weights: export_zoo.py's builders, called
    as its main() calls them (global seed, then a generator with the same
    seed), exported with dynamic dims like the .pt2's."""
    import torch
    sys.path.insert(0, ZOO)
    import export_zoo as ez

    os.makedirs(args.out, exist_ok=True)
    man = manifest()["models"]
    for name in args.only:
        m = man[name]
        torch.manual_seed(ez.SEED)
        gen = torch.Generator().manual_seed(ez.SEED)
        spec = ez.BUILDERS[name](gen)
        model = spec["model"].eval()
        order = [i["name"] for i in m["inputs"]]
        onames = out_names(m)

        class Positional(torch.nn.Module):
            """The model called with keywords, its outputs as a flat tuple in
            the archive's order (the .pt2's flat outputs)."""

            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, *xs):
                kw = dict(zip(order, xs))
                y = self.inner(**kw) if spec["keywords"] else self.inner(*xs)
                if isinstance(y, torch.Tensor):
                    return y
                if isinstance(y, dict) or hasattr(y, "keys"):
                    return tuple(y[k] for k in onames)
                return tuple(y)

        wrapped = Positional(model).eval()
        # Example at the benchmark size (the model's layout: channels_last is
        # a PyTorch memory format, ONNX inputs are NCHW whatever it is).
        ex = tuple(ez.take(spec["inputs"][k], spec["axes"][k], SIZES[name], False) for k in order)
        path = os.path.join(args.out, name + ".onnx")
        with torch.no_grad():
            eager = wrapped(*ex)
        how = None
        errors = []
        for dynamo in ([True, False] if args.exporter == "auto" else [args.exporter == "dynamo"]):
            try:
                if dynamo:
                    dims = {}
                    for d, (dim, _) in spec["dims"].items():
                        # the .pt2's compiled range (0/1 specialisation: min 2)
                        lo, hi = m["dims"][d]["compiled"]
                        dims[d] = torch.export.Dim(d, min=lo, max=hi)
                    # one entry: forward(*xs) takes the inputs as one varargs tuple
                    shapes = (tuple({a: dims[d] for a, d in spec["axes"][k].items()} for k in order),)
                    torch.onnx.export(wrapped, ex, path, input_names=order, output_names=onames,
                                      dynamic_shapes=shapes, dynamo=True, optimize=True, external_data=False)
                    how = "torch.onnx.export(dynamo=True, optimize=True, external_data=False)"
                else:
                    axes = {k: {a: d for a, d in spec["axes"][k].items()} for k in order}
                    torch.onnx.export(wrapped, ex, path, input_names=order, output_names=onames,
                                      dynamic_axes=axes, dynamo=False, opset_version=17)
                    how = "torch.onnx.export(dynamo=False, opset_version=17)"
                break
            except Exception as e:  # noqa: BLE001 - report and try the other exporter
                errors.append("%s: %s: %s" % ("dynamo" if dynamo else "legacy", type(e).__name__,
                                              str(e).splitlines()[0][:300] if str(e) else ""))
        if how is None:
            print("%s: EXPORT FAILED: %s" % (name, " | ".join(errors)), flush=True)
            continue
        flat = [eager] if isinstance(eager, torch.Tensor) else list(eager)
        np.savez(os.path.join(args.out, name + ".torch_eager.npz"),
                 **{n: t.numpy() for n, t in zip(onames, flat)})
        print("%s: %s -> %s (%d bytes)%s" % (name, how, path, os.path.getsize(path),
                                              ("; tried first: " + " | ".join(errors)) if errors else ""),
              flush=True)
        with open(os.path.join(args.out, name + ".export.txt"), "w") as f:
            f.write("%s\ntorch %s\n%s\n" % (how, torch.__version__, "\n".join(errors)))


# --------------------------------------------------------------- inputs ---

def write_inputs(name, m, models_dir):
    """The zoo's stored inputs sliced to the size (first n entries of each
    dynamic dim), row-major .npy, one file per input; returns
    [(model name, placeholder, path)]."""
    d = os.path.join(models_dir, "inputs")
    os.makedirs(d, exist_ok=True)
    sizes = SIZES[name]
    res = []
    for inp in m["inputs"]:
        a = np.load(os.path.join(ZOO, inp["file"]))
        for axis, dim in inp["dims"].items():
            a = np.take(a, np.arange(sizes[dim]), axis=int(axis))
        p = os.path.join(d, "%s.%s.npy" % (name, inp["name"]))
        np.save(p, np.ascontiguousarray(a))
        res.append((inp["name"], inp["placeholder"], p))
    return res


def eager_refs(name, m):
    """The zoo's stored eager outputs of the case at SIZES[name]."""
    sizes = SIZES[name]
    offs = [0] * len(m["outputs"])
    for case in m["cases"]:
        if case["sizes"] == sizes:
            res = []
            for j, o in enumerate(m["outputs"]):
                flat = np.load(os.path.join(ZOO, o["file"]), mmap_mode="r")
                n = int(np.prod(case["outputs"][j]))
                res.append(np.array(flat[offs[j]:offs[j] + n]).reshape(case["outputs"][j]))
            return res
        for j, shape in enumerate(case["outputs"]):
            offs[j] += int(np.prod(shape))
    raise KeyError("no case %s in the manifest of %s" % (sizes, name))


# ------------------------------------------------------------------ ORT ---

def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])


def ort_feeds(files):
    return {k: np.load(p) for k, p in files}


def ort_bench(args):
    """Child process: one latency round of ORT, JSON on stdout."""
    files = [tuple(x.split("=", 1)) for x in args.input]
    feeds = ort_feeds(files)
    t0 = time.perf_counter_ns()
    sess = ort_session(args.model, args.threads)
    session_ns = time.perf_counter_ns() - t0
    for _ in range(args.warmup):
        sess.run(None, feeds)
    lat = []
    clock = time.perf_counter_ns
    end = clock() + int(args.duration * 1e9)
    t0 = clock()
    while True:
        a = clock()
        sess.run(None, feeds)
        b = clock()
        lat.append(b - a)
        if b >= end:
            break
    wall = (clock() - t0) / 1e9
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
    print(json.dumps({"calls": len(lat), "wall_s": wall, "session_ns": session_ns,
                      "latency_ns": {"min": lat[0], "p50": q(0.5), "p90": q(0.9), "p99": q(0.99),
                                     "max": lat[-1], "mean": sum(lat) / len(lat)}}))


def ort_cold(args):
    """Child process: import, session, one run, print (cold-open timing)."""
    t0 = time.perf_counter()
    import onnxruntime  # noqa: F401
    t1 = time.perf_counter()
    files = [tuple(x.split("=", 1)) for x in args.input]
    feeds = ort_feeds(files)
    t1b = time.perf_counter()
    sess = ort_session(args.model, args.threads)
    t2 = time.perf_counter()
    out = sess.run(None, feeds)
    t3 = time.perf_counter()
    print(json.dumps({"import_s": t1 - t0, "inputs_s": t1b - t1, "session_s": t2 - t1b, "first_run_s": t3 - t2,
                      "shapes": [list(o.shape) for o in out], "first": float(out[0].reshape(-1)[0])}))


# --------------------------------------------------------------- driver ---

def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v: (wall seconds, max RSS KiB, stdout)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        rss = None
        for line in tf.read().splitlines():
            if "Maximum resident set size" in line:
                rss = int(line.split(":")[1])
    return wall, rss, p.stdout


def steal_ms():
    """CPU steal time so far, all CPUs (ms): time the hypervisor gave this
    machine's virtual CPUs to something else. A round that lost much of it
    measured the host's load, not the engine."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()
        return int(parts[8]) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def env_threads(base, n):
    e = dict(base)
    e["OMP_NUM_THREADS"] = str(n)
    return e


def med(xs):
    return statistics.median(xs)


def bench(args):
    import onnxruntime as ort

    man = manifest()["models"]
    code_line = check_exports(args, man)  # before a results file is begun
    results = open(args.results, "w") if args.results else None

    def log(s=""):
        # written as it comes: a run cut short keeps its rounds
        print(s, flush=True)
        if results:
            results.write(s + "\n")
            results.flush()

    aotrun = os.path.abspath(args.aotrun)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    log("# aotrun vs ONNX Runtime, %s" % time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    log("cpu: %s" % cpu_line())
    log("machine: %d CPUs, %s; load average at start %s" % (os.cpu_count(), platform.platform(),
                                                             " ".join("%.2f" % x for x in os.getloadavg())))
    log("memory: %s" % memory_line())
    log("aotrun: %s (HEAD %s, shim: no AOTRUN_LIBTORCH)" % (aotrun, commit))
    # Caps on the vector paths (an AVX-512 host measuring what an AVX2-only
    # one runs): they reach aotrun's shim and its oneDNN; ORT's MLAS has none.
    caps = ["%s=%s" % (k, os.environ[k]) for k in ("AOTRUN_SHIM_MAX_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA")
            if os.environ.get(k)]
    if args.as_avx2_host:
        log("as an AVX2-only host: every process (this one, aotrun, ORT) runs with LD_PRELOAD=%s, so cpuid "
            "reports no AVX-512, AMX or AVX-VNNI to any library (ORT's MLAS included); the flags above are the "
            "host's" % args.as_avx2_host)
    if caps:
        log("vector caps for aotrun: %s (%s)" % (" ".join(caps), "ORT as an AVX2 host" if args.as_avx2_host
                                                 else "ORT runs uncapped"))
    log("onnxruntime %s, numpy %s, python %s" % (ort.__version__, np.__version__, platform.python_version()))
    import hashlib
    log("zoo: %s; %s" % (ZOO, ", ".join("%s.pt2 sha256 %s" % (n, hashlib.sha256(open(
        os.path.join(ZOO, n + ".pt2"), "rb").read()).hexdigest()[:16]) for n in args.models)))
    log(".pt2 code: %s" % code_line)
    log("rounds %d x %.1f s per engine, threads %s, cold rounds %d" % (args.rounds, args.duration, args.threads,
                                                                        args.cold_rounds))
    env0 = dict(os.environ)
    env0.pop("AOTRUN_LIBTORCH", None)
    env0.pop("AOTRUN_PROVIDER", None)
    aot_env0 = dict(env0)
    if args.aotrun_lib:
        # a copy of the build (the tree's may be rebuilt while this runs):
        # libaotrun.so.1 from here, and the shim beside it
        aot_env0["LD_LIBRARY_PATH"] = os.path.abspath(args.aotrun_lib)
        log("aotrun libraries: LD_LIBRARY_PATH=%s" % aot_env0["LD_LIBRARY_PATH"])

    # ---- setup and correctness
    models = []
    files = {}
    log()
    log("## correctness (same inputs: ORT vs stored eager refs, ORT vs aotrun run)")
    for name in args.models:
        m = man[name]
        onnx_path = os.path.join(args.models_dir, name + ".onnx")
        if not os.path.exists(onnx_path):
            log("%s: no %s (export failed or not run): skipped" % (name, onnx_path))
            continue
        files[name] = write_inputs(name, m, args.models_dir)
        sess = ort_session(onnx_path, 1)
        got = sess.run(None, ort_feeds([(k, p) for k, _, p in files[name]]))
        refs = eager_refs(name, m)
        with tempfile.TemporaryDirectory() as od:
            cmd = [aotrun, "run", os.path.join(ZOO, name + ".pt2"), "--output-dir", od]
            for _, ph, p in files[name]:
                cmd += ["--input", "%s=%s" % (ph, p)]
            p = subprocess.run(cmd, env=env_threads(aot_env0, 1), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            if p.returncode != 0:
                log("%s (%s): aotrun run FAILED (exit %d): %s" % (name, size_str(SIZES[name]), p.returncode,
                                                                  p.stderr.strip()[-2000:]))
                log("%s: not benchmarked" % name)
                continue
            aot = [np.load(os.path.join(od, o["placeholder"] + ".npy")) for o in m["outputs"]]
        ok = True
        parts = []
        # the zoo's 1e-4/1e-5, or the manifest's [rtol, atol] per output
        tols = m.get("bench_tol") or [[1e-4, 1e-5]] * len(refs)
        for o, g, r, a, (rtol, atol) in zip(out_names(m), got, refs, aot, tols):
            de = float(np.abs(g - r).max()) if g.shape == r.shape else float("inf")
            da = float(np.abs(g - a).max()) if g.shape == a.shape else float("inf")
            dae = float(np.abs(a - r).max()) if a.shape == r.shape else float("inf")
            scale = float(np.abs(r).max())
            good = (g.shape == r.shape == a.shape and np.allclose(g, r, rtol=rtol, atol=atol)
                    and np.allclose(g, a, rtol=rtol, atol=atol))
            ok = ok and good
            parts.append("%s %s |ref|max %.3g: ORT-eager %.2g, ORT-aotrun %.2g, aotrun-eager %.2g%s" % (
                o, list(g.shape), scale, de, da, dae, "" if good else " MISMATCH"))
        log("%s (%s): %s" % (name, size_str(SIZES[name]), "; ".join(parts)))
        if ok:
            models.append(name)
        else:
            log("%s: outputs differ, not benchmarked" % name)
    if args.verify_only:
        log()
        log("verified %d of %d models (--verify-only: nothing measured)" % (len(models), len(args.models)))
        if results:
            results.close()
        exit_if_any_left_out(args.models, models)
        return

    def aot_cmd_inputs(name):
        r = []
        for _, ph, p in files[name]:
            r += ["--input", "%s=%s" % (ph, p)]
        return r

    def ort_inputs(name):
        return ["%s=%s" % (k, p) for k, _, p in files[name]]

    # ---- latency
    # Reference runs of the same .pt2 (not part of the alternation's pairs):
    # on libtorch, and with OpenBLAS's kernels forced (the shim's GEMMs).
    refs = {}
    if args.libtorch:
        refs["aotrun libtorch"] = {"AOTRUN_LIBTORCH": args.libtorch}
    if args.openblas_coretype:
        refs["aotrun shim, OPENBLAS_CORETYPE=%s" % args.openblas_coretype] = {
            "OPENBLAS_CORETYPE": args.openblas_coretype}
    engines = ["aotrun", "ort"] + list(refs)
    lat = {(n, t, e): [] for n in models for t in args.threads for e in engines}
    load = {n: [] for n in models}  # aotrun bench's open, its parts (ns)
    ort_session_ns = {n: [] for n in models}  # ORT's InferenceSession creation in the same rounds

    def aot_bench(name, t, extra_env):
        cmd = [aotrun, "bench", os.path.join(ZOO, name + ".pt2"), "--threads", "1", "--duration",
               str(args.duration), "--json"] + aot_cmd_inputs(name)
        e = dict(aot_env0, OMP_NUM_THREADS=str(t), **extra_env)
        p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("aotrun bench failed: %s" % p.stderr[-2000:])
        return json.loads(p.stdout)
    log()
    log("## latency rounds (p50 per call, ms; each a fresh process; min/p90 and calls in brackets)")
    for r in range(args.rounds):
        for t in args.threads:
            for name in models:
                s0 = steal_ms()
                j = aot_bench(name, t, {})
                s1 = steal_ms()
                a = j["latency_ns"]
                if "load_ns" in j:
                    load[name].append(j["load_ns"])
                lat[(name, t, "aotrun")].append(a["p50"] / 1e6)
                cmd = [sys.executable, os.path.abspath(__file__), "_ort_bench", "--model",
                       os.path.join(args.models_dir, name + ".onnx"), "--threads", str(t), "--duration",
                       str(args.duration), "--input"] + ort_inputs(name)
                p = subprocess.run(cmd, env=env0, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    raise RuntimeError("ORT bench failed: %s" % p.stderr[-2000:])
                s2 = steal_ms()
                oj = json.loads(p.stdout)
                o, calls_o = oj["latency_ns"], oj["calls"]
                ort_session_ns[name].append(oj["session_ns"])
                lat[(name, t, "ort")].append(o["p50"] / 1e6)
                line = "round %d threads %d %-10s aotrun %8.3f [%.3f/%.3f, %d]   ort %8.3f [%.3f/%.3f, %d]" % (
                    r + 1, t, name, a["p50"] / 1e6, a["min"] / 1e6, a["p90"] / 1e6, j["calls"],
                    o["p50"] / 1e6, o["min"] / 1e6, o["p90"] / 1e6, calls_o)
                if s1 - s0 >= 1 or s2 - s1 >= 1:
                    line += "   steal %.0f | %.0f ms" % (s1 - s0, s2 - s1)
                for ref, extra in refs.items():
                    jl = aot_bench(name, t, extra)
                    lt = jl["latency_ns"]
                    lat[(name, t, ref)].append(lt["p50"] / 1e6)
                    line += "   %s %8.3f [%.3f/%.3f, %d]" % (ref, lt["p50"] / 1e6, lt["min"] / 1e6,
                                                             lt["p90"] / 1e6, jl["calls"])
                log(line)

    # ---- cold open + RSS (--cold-rounds 0: no processes timed, no cold table)
    cold_ran = args.cold_rounds > 0
    if cold_ran:
        log()
        log("## cold open (fresh process, page cache warm; wall s, max RSS MiB), threads 1")
    py = sys.executable
    base = {"py_pass": [], "py_numpy": []}
    cold = {(n, e): [] for n in models for e in ("aotrun", "ort")}
    inproc = {n: [] for n in models}
    aot_first = {n: [] for n in models}
    aot_open_cold = {n: [] for n in models}
    for r in range(args.cold_rounds):
        w, rss, _ = timed([py, "-c", "pass"], env=env0)
        base["py_pass"].append((w, rss))
        w, rss, _ = timed([py, "-c", "import numpy"], env=env0)
        base["py_numpy"].append((w, rss))
        for name in models:
            cmd = [aotrun, "run", os.path.join(ZOO, name + ".pt2"), "--json"] + aot_cmd_inputs(name)
            w, rss, aout = timed(cmd, env=env_threads(aot_env0, 1))
            cold[(name, "aotrun")].append((w, rss))
            aj = json.loads(aout)
            first_call = aj["run_ns"] / 1e9
            aot_first[name].append(first_call)
            if "load_ns" in aj:  # `aotrun run --json` has it since 2026-12
                aot_open_cold[name].append(aj["load_ns"]["open"])
            cmd = [py, os.path.abspath(__file__), "_ort_cold", "--model", os.path.join(args.models_dir, name + ".onnx"),
                   "--threads", "1", "--input"] + ort_inputs(name)
            w2, rss2, out = timed(cmd, env=env0)
            cold[(name, "ort")].append((w2, rss2))
            j = json.loads(out)
            inproc[name].append(j)
            log("cold %d %-10s aotrun %.3f s %.1f MiB (first call %.4f)   ort %.3f s %.1f MiB (import %.3f, session "
                "%.3f, run %.4f)" % (r + 1, name, w, rss / 1024, first_call, w2, rss2 / 1024, j["import_s"],
                                     j["session_s"], j["first_run_s"]))
    if cold_ran:
        pp = med([w for w, _ in base["py_pass"]])
        pn = med([w for w, _ in base["py_numpy"]])
        log("python -c pass: %.3f s, %.1f MiB; python -c 'import numpy': %.3f s, %.1f MiB (medians)" % (
            pp, med([r for _, r in base["py_pass"]]) / 1024, pn, med([r for _, r in base["py_numpy"]]) / 1024))

    # ---- summary
    log()
    log("## summary (medians)")
    head = "| model | size |"
    sep = "| --- | --- |"
    for t in args.threads:
        head += " aotrun %d thr (ms) | ORT %d thr (ms) | aotrun/ORT |" % (t, t)
        sep += " ---: | ---: | ---: |"
    log(head)
    log(sep)
    for name in models:
        row = "| %s | %s |" % (name, size_str(SIZES[name]))
        for t in args.threads:
            a, o = med(lat[(name, t, "aotrun")]), med(lat[(name, t, "ort")])
            row += " %.3f | %.3f | %.2f |" % (a, o, a / o)
        log(row)
    if refs:
        log()
        log("references, the same .pt2 (p50 ms, medians; %s):" % "; ".join(
            "%s: %s" % (k, " ".join("%s=%s" % kv for kv in v.items())) for k, v in refs.items()))
        cols = ["aotrun"] + list(refs) + ["ort"]
        log("| model | size |" + "".join(" %s %d thr |" % (c, t) for t in args.threads for c in cols))
        log("| --- | --- |" + " ---: |" * (len(cols) * len(args.threads)))
        for name in models:
            log("| %s | %s |" % (name, size_str(SIZES[name])) + "".join(
                " %.3f |" % med(lat[(name, t, c)]) for t in args.threads for c in cols))
    if cold_ran:
        cold_table(log, models, cold, inproc, aot_first, pp, pn)
    if any(load.values()):
        open_table(log, models, load, ort_session_ns, aot_open_cold, inproc)
    log()
    log("load average at end %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    left_out = [n for n in args.models if n not in models]
    if left_out:
        log("not measured (see the correctness section): %s" % " ".join(left_out))
    if results:
        results.close()
    exit_if_any_left_out(args.models, models)


def exit_if_any_left_out(asked, measured):
    """A run that left out a model it was asked for (no ONNX file, a failed
    `aotrun run`, outputs that differ) exits 1, after writing its table of
    the rest: a script driving it must not take a partial table for a
    whole one."""
    left_out = [n for n in asked if n not in measured]
    if left_out:
        sys.stderr.write("compare.py: %d of %d models not measured: %s\n" % (len(left_out), len(asked),
                                                                           " ".join(left_out)))
        sys.exit(1)


def cold_table(log, models, cold, inproc, aot_first, pp, pn):
    """The cold-open table of `bench` (written with its `log`): medians over
    its cold rounds."""
    log()
    log("aotrun process = open + first call + the CLI's own work (reading the inputs, printing); "
        "ORT session = InferenceSession creation, in-process")
    log("| model | aotrun process (s) | ORT process (s) | ORT minus `python -c pass` (s) | ORT minus `python -c 'import numpy'` (s) | ORT import+session+run, in-process (s) | aotrun / ORT in-process | aotrun max RSS (MiB) | ORT max RSS (MiB) | aotrun first call (s) | ORT session (s) | ORT first call (s) |")
    log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in models:
        a = med([w for w, _ in cold[(name, "aotrun")]])
        o = med([w for w, _ in cold[(name, "ort")]])
        ip = med([j["import_s"] + j.get("inputs_s", 0) + j["session_s"] + j["first_run_s"] for j in inproc[name]])
        ar = med([r for _, r in cold[(name, "aotrun")]]) / 1024
        orr = med([r for _, r in cold[(name, "ort")]]) / 1024
        log("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f | %.1f | %.4f | %.3f | %.4f |" % (
            name, a, o, o - pp, o - pn, ip, a / ip, ar, orr, med(aot_first[name]),
            med([j["session_s"] for j in inproc[name]]), med([j["first_run_s"] for j in inproc[name]])))


def open_table(log, models, load, ort_session_ns, aot_open_cold, inproc):
    """aotrun's open against ORT's session creation, each pair measured in
    the same rounds: in the latency rounds (each process starts after the
    other engine's ran for the round's duration) and in the cold rounds
    (short processes back to back). On a virtual machine that hands freed
    memory back to its host, the fresh memory an open touches costs more
    the longer ago it was freed, so an open timed in one kind of round is
    not compared with a session timed in the other."""
    log()
    log("open (ms, medians): aotrun's open (`load_ns`) and ORT's InferenceSession creation, each pair in the "
        "same rounds; then the parts of aotrun's open in the latency rounds")
    keys = [k for k in load[next(n for n in models if load[n])][0]]
    log("| model | aotrun, latency rounds | ORT, latency rounds | aotrun / ORT | aotrun, cold rounds | "
        "ORT, cold rounds | aotrun / ORT |" + "".join(" %s |" % k for k in keys))
    log("| --- |" + " ---: |" * (6 + len(keys)))

    def cell(xs, scale):
        return med(xs) / scale if xs else None

    def fmt(v, spec="%.1f"):
        return spec % v if v is not None else "-"
    for name in models:
        if not load[name]:
            continue
        a_lat = cell([x["open"] for x in load[name]], 1e6)
        o_lat = cell(ort_session_ns[name], 1e6)
        a_cold = cell(aot_open_cold[name], 1e6)
        o_cold = cell([j["session_s"] for j in inproc[name]], 1e-3)
        r_lat = a_lat / o_lat if a_lat is not None and o_lat else None
        r_cold = a_cold / o_cold if a_cold is not None and o_cold else None
        log("| %s | %s | %s | %s | %s | %s | %s |" % (name, fmt(a_lat), fmt(o_lat), fmt(r_lat, "%.2f"), fmt(a_cold),
                                                     fmt(o_cold), fmt(r_cold, "%.2f")) +
            "".join(" %.1f |" % (med([x.get(k, 0) for x in load[name]]) / 1e6) for k in keys))


def as_avx2_host(args):
    """--as-avx2-host: runs this script again with the library preloaded (so
    the correctness check's ORT session is on the same kernels as the
    measured ones, and every child inherits it); stops if the host cannot
    present an AVX2-only CPU (the library exits 77 without cpuid faulting)."""
    args.as_avx2_host = os.path.abspath(args.as_avx2_host)
    if args.as_avx2_host in os.environ.get("LD_PRELOAD", "").split(":"):
        return
    if not os.path.exists(args.as_avx2_host):
        sys.exit("--as-avx2-host: no %s (build the default preset: tests/support)" % args.as_avx2_host)
    env = dict(os.environ)
    env["LD_PRELOAD"] = ":".join(x for x in (args.as_avx2_host, env.get("LD_PRELOAD")) if x)
    p = subprocess.run([sys.executable, "-c", "pass"], env=env, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("--as-avx2-host: this host cannot present an AVX2-only CPU: %s" % p.stderr.strip())
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write the ONNX models (torch venv)")
    e.add_argument("--out", default=DEFAULT_MODELS_DIR)
    e.add_argument("--only", nargs="*")
    e.add_argument("--zoo", default=ZOO)
    e.add_argument("--exporter", choices=["auto", "dynamo", "legacy"], default="auto")
    b = sub.add_parser("bench", help="verify and measure (onnxruntime venv)")
    b.add_argument("--aotrun", default=os.path.join(ROOT, "build", "tools", "aotrun"))
    b.add_argument("--aotrun-lib", help="LD_LIBRARY_PATH for aotrun (a copy of build/c_api: libaotrun.so.1 "
                   "and libaotrun_shim.so.1 beside it), with --aotrun a copy of build/tools/aotrun")
    b.add_argument("--models", nargs="*", help="default: every model of the zoo's sizes")
    b.add_argument("--models-dir", help="the ONNX models (default %s; with --tier real %s/onnx)" % (
        DEFAULT_MODELS_DIR, REAL_TIER))
    b.add_argument("--tier", choices=["zoo", "real"], default="zoo", help="real: the models of real_tier.py "
                   "(default --zoo %s/zoo, --models-dir %s/onnx)" % (REAL_TIER, REAL_TIER))
    b.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    b.add_argument("--rounds", type=int, default=5)
    b.add_argument("--cold-rounds", type=int, default=5)
    b.add_argument("--duration", type=float, default=2.0)
    b.add_argument("--results")
    b.add_argument("--verify-only", action="store_true", help="the correctness check only: no latency or cold-open "
                   "rounds")
    b.add_argument("--zoo", help="the zoo's directory (default tests/pt2/zoo)")
    b.add_argument("--openblas-coretype", help="also run the .pt2 on the shim with OPENBLAS_CORETYPE set to this "
                   "(a reference: Debian's OpenBLAS 0.3.21 may pick its Prescott kernels on a CPU it does not know)")
    b.add_argument("--libtorch", help="also run the .pt2 on this libtorch (AOTRUN_LIBTORCH; e.g. "
                   "<site-packages>/torch/lib) as a reference: where the shim's time goes")
    b.add_argument("--as-avx2-host", metavar="LIB", help="run everything (this process, aotrun, ORT) with this "
                   "library preloaded: tests/support/avx2_host.c, built as <build>/tests/support/"
                   "libaotrun_test_avx2_host.so; cpuid then reports an AVX2-only CPU to every library, ORT's "
                   "included (needs cpuid faulting: Intel hosts)")
    for n in ("_ort_bench", "_ort_cold"):
        c = sub.add_parser(n)
        c.add_argument("--model", required=True)
        c.add_argument("--threads", type=int, default=1)
        c.add_argument("--duration", type=float, default=2.0)
        c.add_argument("--warmup", type=int, default=10)
        c.add_argument("--input", nargs="+", default=[])
    args = ap.parse_args()
    if getattr(args, "tier", None) == "real":
        args.zoo = args.zoo or os.path.join(REAL_TIER, "zoo")
        args.models_dir = args.models_dir or os.path.join(REAL_TIER, "onnx")
    if hasattr(args, "models_dir") and not args.models_dir:
        args.models_dir = DEFAULT_MODELS_DIR
    if getattr(args, "zoo", None):
        use_zoo(args.zoo)
    if args.cmd in ("export", "bench"):
        use_bench_sizes()
        if args.cmd == "export" and manifest().get("bench_sizes"):
            sys.exit("this zoo's ONNX models are written by bench/ort/real_tier.py")
    if args.cmd == "export" and not args.only:
        args.only = list(SIZES)
    if args.cmd == "bench" and not args.models:
        args.models = list(SIZES)
    if args.cmd == "bench" and args.as_avx2_host:
        as_avx2_host(args)
    {"export": export, "bench": bench, "_ort_bench": ort_bench, "_ort_cold": ort_cold}[args.cmd](args)


if __name__ == "__main__":
    main()
