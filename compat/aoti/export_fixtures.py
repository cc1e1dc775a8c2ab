#!/usr/bin/env python3
"""Export aotrun's AOTInductor (.pt2) CPU fixtures and their reference data.

Run with the python of a venv that has the torch version to export with, e.g.

    /opt/aotrun-venvs/torch-2.15.0/bin/python compat/aoti/export_fixtures.py
    /opt/aotrun-venvs/torch-2.6.0/bin/python  compat/aoti/export_fixtures.py

Writes compat/aoti/fixtures/torch-<X.Y.Z>/ (override with --out):

    <model>.pt2                 torch._inductor.aoti_compile_and_package output
    <model>.in<i>.npy           float32 inputs (identical for every torch version)
    <model>.out<i>.npy          eager PyTorch outputs for those inputs
    dyn_mlp.b3.in0.npy/.out0.npy  dyn_mlp at a second batch size (3)
    manifest.json               shapes, dtypes, files, tolerances, versions

frozen_cnn is exported with inductor's freezing=True (BatchNorm folded,
activations fused into oneDNN ops, weights packed in oneDNN's blocked
layout). It joined the corpus after the other models: --only frozen_cnn
exports just it into an existing directory and merges its entry into the
manifest, leaving the other archives (whose bytes a re-export would change)
and the release-wide manifest fields as they were.

Weights and inputs come from numpy's PCG64 generator with fixed seeds, not from
torch's RNG, so every torch version exports the same models and inputs.

Then it loads every archive with torch._inductor.aoti_load_package and checks
its outputs against eager PyTorch with torch.testing.assert_close's float32
defaults (rtol=1.3e-6, atol=1e-5), the tolerance PyTorch's own AOTI tests
(test/inductor/test_aot_inductor_utils.py: check_model -> TestCase.assertEqual
with atol=rtol=None) apply. Exits non-zero on any mismatch.

Portability: by default inductor compiles with -march=native and picks the
widest vector ISA of the exporting CPU (AVX-512 here), which would SIGILL on
a CPU without it. This script pins x86-64-v3 (AVX2, FMA) code instead:
cpp.simdlen=256 and -march=x86-64-v3 (config.cpp.march where torch has it,
otherwise by rewriting inductor's "march=native" flag). --native turns that off.
Size: where torch has aot_inductor.enable_line_tables (default on, -g1), it is
turned off, so the .so carries no DWARF line tables (1.6 MB -> ~0.4 MB).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

# Keep inductor's compile light on a shared 2-core machine and its cache fresh;
# both must be set before torch._inductor is imported.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
_CACHE_DIR = None
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _CACHE_DIR = tempfile.mkdtemp(prefix="aotrun-inductor-cache-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _CACHE_DIR

import torch  # noqa: E402
import torch._inductor  # noqa: E402
from torch import nn  # noqa: E402

SEED = 20261123
PORTABLE_MARCH = "x86-64-v3"
PORTABLE_SIMDLEN = 256

# float32 defaults of torch.testing.assert_close (torch/testing/_comparison.py,
# _DTYPE_PRECISIONS); checked against the installed torch at run time.
FLOAT32_RTOL = 1.3e-6
FLOAT32_ATOL = 1e-5


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([SEED, *key])


def _uniform(rng: np.random.Generator, shape, bound: float) -> torch.Tensor:
    return torch.from_numpy(rng.uniform(-bound, bound, size=shape).astype(np.float32))


def _init_params(module: nn.Module, rng: np.random.Generator) -> None:
    """Deterministic, torch-version-independent init: U(-1/sqrt(fan_in), +)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                fan_in = m.weight[0].numel()
                bound = 1.0 / float(np.sqrt(fan_in))
                m.weight.copy_(_uniform(rng, tuple(m.weight.shape), bound))
                if m.bias is not None:
                    m.bias.copy_(_uniform(rng, tuple(m.bias.shape), bound))
            elif isinstance(m, nn.BatchNorm2d):
                # Non-trivial statistics and affine, so that folding them into
                # the convolution (freezing) changes its weights.
                c = m.num_features
                m.running_mean.copy_(_uniform(rng, (c,), 0.1))
                m.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, size=(c,)).astype(np.float32)))
                m.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, size=(c,)).astype(np.float32)))
                m.bias.copy_(_uniform(rng, (c,), 0.2))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 16))

    def forward(self, x):
        return self.net(x)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(8 * 8 * 8, 10),
        )

    def forward(self, x):
        return self.net(x)


class ConvNetCL(nn.Module):
    """Compiled for channels_last: inductor records the input's strides in its
    input checks and indexes the input as NHWC in its own kernel (the
    per-channel affine, fused before the convolution; a convolution alone
    is an extern call that reads any strides), and the first output comes
    back channels_last (not row-major contiguous)."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([0.5, -1.0, 2.0]).reshape(1, 3, 1, 1))
        self.shift = nn.Parameter(torch.tensor([0.1, 0.2, -0.3]).reshape(1, 3, 1, 1))
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.conv(torch.tanh(x * self.scale + self.shift)))
        return y, self.head(y.mean(dim=(2, 3)))


class TwoIO(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.zeros(32, 32))

    def forward(self, x, y):
        return x @ self.W + y, torch.relu(x).sum(dim=1)


def _two_io_init(m: TwoIO, rng: np.random.Generator) -> None:
    with torch.no_grad():
        m.W.copy_(_uniform(rng, (32, 32), 1.0 / np.sqrt(32.0)))


class Embed(nn.Module):
    """int64 token ids [B, T] -> Embedding(100, 16) -> mean over T -> Linear(16, 8)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.fc = nn.Linear(16, 8)

    def forward(self, tokens):
        return self.fc(self.emb(tokens).mean(dim=1))


def _embed_init(m: Embed, rng: np.random.Generator) -> None:
    with torch.no_grad():
        m.emb.weight.copy_(torch.from_numpy(rng.standard_normal((100, 16)).astype(np.float32)))
    _init_params(m, rng)


class BoolIntOut(nn.Module):
    """A float, a bool (y > 0) and an int64 (argmax) output."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        y = self.fc(x)
        return y, y > 0, y.argmax(dim=1)


class ScalarOut(nn.Module):
    """A 0-d output: the sum of a linear layer's outputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).sum()


class Attn(nn.Module):
    """Single-head self-attention, written out (q k^T / sqrt(d), softmax, v),
    plus an output projection and a residual; [B, T, 16] -> [B, T, 16]."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.d = d
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / float(np.sqrt(self.d)), dim=-1)
        return x + self.o(w @ v)


class MultiDyn(nn.Module):
    """[B, T, 16] -> Linear-ReLU per position [B, T, 8], and its mean over T [B, 8]."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return y, y.mean(dim=1)


class FrozenCNN(nn.Module):
    """For freezing (PyTorch's CPU inference recipe): Conv-BN-ReLU (BN folded
    into the conv), a second conv whose residual add and ReLU fuse into one
    oneDNN op, adaptive average pool, Linear-GELU-Linear. Exported at a static
    batch with inductor's freezing=True, so the conv and linear weights are
    stored packed in oneDNN's blocked (mkldnn) layout with opaque metadata."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.conv2(y) + y)
        v = torch.flatten(self.pool(y), 1)
        return self.fc2(nn.functional.gelu(self.fc1(v)))


# key: distinct RNG stream per model (weights: [key, 0], inputs: [key, 1+i],
# extra input sets: [key, 100+j, i]). An input is a shape (float32, standard
# normal) or a dict(shape=..., dtype="int64", high=N) (uniform in [0, N)).
# "dynamic": dim name -> where it is and its range (torch.export.Dim);
# "extra": further input sets (variants) for other sizes of the dynamic dims.
# "memory_format": "channels_last" puts the weights and the example inputs in
# that layout (the .npy files stay row-major: logical values, C order).
FIXTURES = [
    dict(name="mlp", key=1, cls=MLP, inputs=[(4, 64)]),
    dict(name="convnet", key=2, cls=ConvNet, inputs=[(2, 3, 16, 16)]),
    # Weights and input in channels_last (memory_format="channels_last").
    dict(name="convnet_cl", key=10, cls=ConvNetCL, inputs=[(2, 3, 8, 8)], memory_format="channels_last"),
    dict(name="dyn_mlp", key=3, cls=MLP, inputs=[(8, 64)],
         dynamic={"batch": dict(input=0, dim=0, min=1, max=64)},
         extra={"b3": [(3, 64)]}),
    dict(name="two_io", key=4, cls=TwoIO, init=_two_io_init, inputs=[(4, 32), (4, 32)]),
    dict(name="embed", key=5, cls=Embed, init=_embed_init,
         inputs=[dict(shape=(4, 12), dtype="int64", high=100)]),
    dict(name="bool_int_out", key=6, cls=BoolIntOut, inputs=[(4, 16)]),
    dict(name="scalar_out", key=7, cls=ScalarOut, inputs=[(4, 8)]),
    dict(name="attn", key=8, cls=Attn, inputs=[(2, 8, 16)],
         dynamic={"seq": dict(input=0, dim=1, min=2, max=64)},
         extra={"t5": [(2, 5, 16)], "t64": [(2, 64, 16)]}),
    dict(name="multi_dyn", key=9, cls=MultiDyn, inputs=[(4, 10, 16)],
         dynamic={"batch": dict(input=0, dim=0, min=2, max=32),
                  "seq": dict(input=0, dim=1, min=2, max=64)},
         extra={"b3t7": [(3, 7, 16)], "b32t2": [(32, 2, 16)]}),
    # Frozen (torch._inductor.config.freezing=True), static shapes. Added to
    # the corpus after the others: `export_fixtures.py --only frozen_cnn`
    # (scripts/build-aoti-corpus.sh with EXPORT_ARGS="--only frozen_cnn")
    # adds it to a release's directory without re-exporting the rest.
    dict(name="frozen_cnn", key=11, cls=FrozenCNN, inputs=[(2, 3, 16, 16)],
         inductor_configs={"freezing": True}),
]


def build_model(spec) -> nn.Module:
    model = spec["cls"]()
    (spec.get("init") or _init_params)(model, _rng(spec["key"], 0))
    if spec.get("memory_format") == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    return model.eval()


def _make_input(rng: np.random.Generator, desc) -> torch.Tensor:
    if isinstance(desc, dict):
        assert desc["dtype"] == "int64", desc
        return torch.from_numpy(rng.integers(0, desc["high"], size=desc["shape"], dtype=np.int64))
    return torch.from_numpy(rng.standard_normal(desc).astype(np.float32))


def make_inputs(spec, shapes, stream) -> list[torch.Tensor]:
    inputs = [_make_input(_rng(spec["key"], *stream, i), shape) for i, shape in enumerate(shapes)]
    if spec.get("memory_format") == "channels_last":
        inputs = [t.to(memory_format=torch.channels_last) for t in inputs]
    return inputs


def _with_shape(desc, shape):
    return dict(desc, shape=shape) if isinstance(desc, dict) else shape


def as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# How -march was pinned for this torch (recorded in the manifest).
MARCH_METHOD = "native"


def inductor_configs(native: bool) -> dict:
    global MARCH_METHOD
    if native:
        return {}
    cfg = {"cpp.simdlen": PORTABLE_SIMDLEN}
    from torch._inductor import config

    # torch >= 2.9-ish compiles with -g1 by default (enable_line_tables), which
    # makes a tiny model's .so ~1.6 MB; the fixtures drop the line tables.
    if hasattr(config.aot_inductor, "enable_line_tables"):
        cfg["aot_inductor.enable_line_tables"] = False
    if hasattr(config.cpp, "march"):
        cfg["cpp.march"] = PORTABLE_MARCH
        MARCH_METHOD = "config cpp.march"
    else:
        # Older torch hard-codes "march=native" in _get_optimization_cflags.
        try:
            from torch._inductor import cpp_builder
        except ImportError:  # torch < 2.4
            cpp_builder = None
        if not hasattr(cpp_builder, "_get_optimization_cflags"):
            MARCH_METHOD = "native (no cpp.march, no cpp_builder._get_optimization_cflags to patch)"
            print(f"warning: cannot pin -march; {MARCH_METHOD}", file=sys.stderr)
            return cfg
        MARCH_METHOD = "patched cpp_builder._get_optimization_cflags"
        orig = cpp_builder._get_optimization_cflags
        if not getattr(orig, "_aotrun_patched", False):
            def patched(*args, **kwargs):
                flags = orig(*args, **kwargs)
                return [f"march={PORTABLE_MARCH}" if f == "march=native" else f for f in flags]

            patched._aotrun_patched = True
            cpp_builder._get_optimization_cflags = patched
    return cfg


def export_one(spec, out_dir: Path, cfg: dict) -> Path:
    # Per-model configs (freezing) on top of the release's.
    cfg = dict(cfg, **spec.get("inductor_configs", {}))
    model = build_model(spec)
    inputs = make_inputs(spec, spec["inputs"], (1,))
    dynamic_shapes = None
    if "dynamic" in spec:
        per_input = [None] * len(inputs)
        for dim_name, d in spec["dynamic"].items():
            if per_input[d["input"]] is None:
                per_input[d["input"]] = {}
            per_input[d["input"]][d["dim"]] = torch.export.Dim(dim_name, min=d["min"], max=d["max"])
        dynamic_shapes = tuple(per_input)
    with torch.no_grad():
        ep = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes)
        pkg = out_dir / f"{spec['name']}.pt2"
        if pkg.exists():
            pkg.unlink()
        if not hasattr(torch._inductor, "aoti_compile_and_package"):
            from torch._inductor import config

            if not hasattr(config.aot_inductor, "package"):
                raise RuntimeError(f"torch {torch.__version__} has neither torch._inductor.aoti_compile_and_package "
                                   "nor aot_inductor.package")
            # torch 2.5: the prototype packaging, torch._export.aot_compile with
            # aot_inductor.package=True. Its .pt2 holds the sources and object
            # files, no .so: torch._inductor.package.load_package links one
            # at load time.
            #
            # Its package_aoti opens the archive and then zips glob("<dir>/*")
            # of the directory the sources were written to, which is the
            # archive's own directory: the archive includes itself and grows
            # until the disk is full ("File size too large, try using
            # force_zip64"). So the model is compiled in a fresh directory and
            # that glob leaves .pt2 files out; the archive is then moved here.
            # It still fails: the packager asserts that every entry of that
            # glob is a file, and inductor puts the object files in a
            # subdirectory there ("<dir>/<hash> is not a valid file path");
            # leaving the subdirectory out gives an archive without the .o
            # that load_package needs ("Unable to find file with suffix .o").
            # torch 2.5 cannot write a loadable .pt2 for this CPU path.
            from torch import _export as torch_export
            from torch._inductor.package import package as package_mod

            real_glob = package_mod.glob.glob

            class _Glob:
                @staticmethod
                def glob(pattern, *a, **k):
                    return [f for f in real_glob(pattern, *a, **k) if not f.endswith(".pt2")]

            with tempfile.TemporaryDirectory(prefix="aotrun-pt2-25-") as tmp:
                tmp_pkg = Path(tmp) / pkg.name
                package_mod.glob = _Glob
                try:
                    got = torch_export.aot_compile(
                        model, tuple(inputs), dynamic_shapes=dynamic_shapes,
                        options=dict(cfg, **{"aot_inductor.package": True, "aot_inductor.output_path": str(tmp_pkg)}))
                finally:
                    package_mod.glob = sys.modules["glob"]
                assert Path(got).resolve() == tmp_pkg.resolve(), (got, tmp_pkg)
                shutil.move(str(tmp_pkg), str(pkg))
            return pkg
        import inspect

        params = inspect.signature(torch._inductor.aoti_compile_and_package).parameters
        if "args" in params and params["args"].default is inspect.Parameter.empty:
            # torch 2.5: aoti_compile_and_package(ep, args, kwargs=None, *, package_path, inductor_configs)
            got = torch._inductor.aoti_compile_and_package(
                ep, tuple(inputs), {}, package_path=str(pkg), inductor_configs=dict(cfg))
        else:
            got = torch._inductor.aoti_compile_and_package(
                ep, package_path=str(pkg), inductor_configs=dict(cfg)  # it mutates the dict
            )
    assert Path(got).resolve() == pkg.resolve(), (got, pkg)
    return pkg


def save_reference(spec, out_dir: Path) -> dict:
    """Writes inputs/outputs .npy for every input set; returns manifest entries."""
    model = build_model(spec)
    sets = {"": make_inputs(spec, spec["inputs"], (1,))}
    for j, (suffix, shapes) in enumerate(spec.get("extra", {}).items()):
        sets[suffix] = make_inputs(spec, [_with_shape(d, sh) for d, sh in zip(spec["inputs"], shapes)], (100 + j,))
    entries = {}
    for suffix, inputs in sets.items():
        stem = spec["name"] + (f".{suffix}" if suffix else "")
        with torch.no_grad():
            outputs = as_tuple(model(*inputs))
        files = {"inputs": [], "outputs": []}
        for kind, tensors, tag in (("inputs", inputs, "in"), ("outputs", outputs, "out")):
            for i, t in enumerate(tensors):
                fname = f"{stem}.{tag}{i}.npy"
                np.save(out_dir / fname, t.detach().contiguous().numpy())
                files[kind].append({"file": fname, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")})
        entries[suffix or "default"] = dict(files, _tensors=(inputs, outputs))
    return entries


def verify(pkg: Path, entries: dict, rtol: float, atol: float) -> dict:
    if hasattr(torch._inductor, "aoti_load_package"):
        compiled = torch._inductor.aoti_load_package(str(pkg))
    else:  # torch 2.5
        from torch._inductor.package import load_package

        compiled = load_package(str(pkg), "cpu")
    result = {}
    for set_name, e in entries.items():
        inputs, expected = e["_tensors"]
        with torch.no_grad():
            actual = as_tuple(compiled(*[t.clone() for t in inputs]))
        assert len(actual) == len(expected), (pkg, set_name, len(actual), len(expected))
        max_abs = 0.0
        for a, x, f in zip(actual, expected, e["outputs"]):
            exact = not a.dtype.is_floating_point
            torch.testing.assert_close(a, x, rtol=0 if exact else rtol, atol=0 if exact else atol)
            ref = torch.from_numpy(np.load(pkg.parent / f["file"]))
            torch.testing.assert_close(a, ref, rtol=0 if exact else rtol, atol=0 if exact else atol)
            if a.numel():
                max_abs = max(max_abs, (a.double() - x.double()).abs().max().item())
        result[set_name] = max_abs
    return result


ENTRY_POINTS = [
    "AOTInductorModelContainerCreate",
    "AOTInductorModelContainerCreateWithDevice",
    "AOTInductorModelContainerRun",
    "AOTInductorModelContainerRunSingleThreaded",
    "AOTInductorModelContainerGetInputName",
    "AOTInductorModelContainerGetOutputName",
    "AOTInductorModelContainerGetCallSpec",
    "AOTInductorGetLastError",
]


def _run(cmd) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def package_facts(pkg: Path) -> dict:
    """What a loader has to know about this archive, read from its files with
    binutils (nm, readelf): the layout, the entry points and shim functions of
    the model .so, its C++ string ABI, input checks in the wrapper source."""
    facts: dict = {}
    with zipfile.ZipFile(pkg) as z, tempfile.TemporaryDirectory() as tmp:
        names = z.namelist()
        so = [n for n in names if n.endswith(".so")]
        cpp = [n for n in names if n.endswith(".cpp")]
        marker = "data/aotinductor/"
        prefixes = sorted({n[: n.index(marker)] for n in names if marker in n})
        facts["layout"] = {
            "prefix": prefixes[0].rstrip("/") if prefixes else None,
            # entry names without the prefix, the model's hash names as <hash>
            "files": sorted({re.sub(r"/model/c[a-z0-9]{51}", "/model/<hash>", n[len(prefixes[0]) if prefixes else 0:])
                             for n in names}),
            "compressed": any(i.compress_type != zipfile.ZIP_STORED for i in z.infolist()),
        }
        src = "".join(z.read(n).decode("utf-8", "replace") for n in cpp)
        facts["input_checks_in_wrapper"] = "unmatched dim value" in src or "unmatched dtype" in src
        facts["input_checks_guarded_by"] = "AOTI_RUNTIME_CHECK_INPUTS" if "AOTI_RUNTIME_CHECK_INPUTS" in src else None
        # Frozen packages: constants stored in oneDNN's blocked layout, each
        # with opaque metadata (oneDNN's memory desc blob + ideep's groups).
        mkldnn = re.findall(r"constants_info_\[(\d+)\]\.layout = static_cast<int32_t>\(cached_torch_layout__mkldnn\)", src)
        if mkldnn:
            sizes = {}
            for i in mkldnn:
                md = re.search(r"constants_info_\[" + i + r"\]\.opaque_metadata = \{([^}]*)\}", src)
                sizes[i] = len(md.group(1).split(",")) if md else None
            facts["mkldnn_constants"] = {"count": len(mkldnn),
                                         "opaque_metadata_sizes": sorted({v for v in sizes.values() if v is not None})}
        meta = [n for n in names if n.endswith("_metadata.json")]
        facts["metadata"] = {}
        for n in meta:
            try:
                facts["metadata"].update(json.loads(z.read(n)))
            except Exception:
                pass
        if len(so) != 1:
            facts["so"] = so
            return facts
        path = Path(tmp) / "model.so"
        path.write_bytes(z.read(so[0]))
        facts["so_size"] = path.stat().st_size
        defined = set(_run(["nm", "-D", "--defined-only", str(path)]).split())
        undefined = [l.split()[-1] for l in _run(["nm", "-D", "--undefined-only", str(path)]).splitlines() if l.strip()]
        facts["entry_points"] = [e for e in ENTRY_POINTS if e in defined]
        facts["shim_functions"] = sorted({u for u in undefined if u.startswith("aoti_")})
        every = " ".join(undefined) + " " + " ".join(defined)
        facts["cxx11_abi"] = ("new (std::__cxx11)" if "__cxx11" in every else
                              "old (pre-C++11 std::string)" if ("_ZNSs" in every or "_ZNKSs" in every) else "no std::string")
        needed = [l.split("[")[1].rstrip("]") for l in _run(["readelf", "-dW", str(path)]).splitlines() if "(NEEDED)" in l]
        facts["needed"] = needed
        stack = [l for l in _run(["readelf", "-lW", str(path)]).splitlines() if "GNU_STACK" in l]
        facts["exec_stack"] = bool(stack) and "E" in stack[0].split()[-2]
        sections = _run(["readelf", "-SW", str(path)])
        facts["debug_line"] = ".debug_line" in sections
        versions = set()
        for l in _run(["readelf", "-VW", str(path)]).splitlines():
            for tok in l.split():
                if tok.startswith(("GLIBCXX_", "CXXABI_", "GLIBC_")):
                    versions.add(tok)
        facts["symbol_versions"] = sorted(versions)
        dis = _run(["objdump", "-d", "--no-show-raw-insn", str(path)])
        facts["uses_zmm"] = "%zmm" in dis
    return facts


def gcc_version() -> str:
    try:
        return subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except Exception:  # pragma: no cover
        return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="output dir (default: compat/aoti/fixtures/torch-<version>)")
    ap.add_argument("--only", nargs="*", help="model names to export (default: all)")
    ap.add_argument("--native", action="store_true", help="keep inductor's -march=native / widest vector ISA")
    ap.add_argument("--no-verify", action="store_true", help="skip the aoti_load_package check")
    args = ap.parse_args()

    version = torch.__version__.split("+")[0]
    out_dir = args.out or Path(__file__).resolve().parent / "fixtures" / f"torch-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)

    from torch.testing._comparison import _DTYPE_PRECISIONS

    rtol, atol = _DTYPE_PRECISIONS[torch.float32]
    print(f"torch {torch.__version__}: assert_close float32 defaults rtol={rtol} atol={atol}")
    if (rtol, atol) != (FLOAT32_RTOL, FLOAT32_ATOL):
        print(f"warning: expected rtol={FLOAT32_RTOL} atol={FLOAT32_ATOL}", file=sys.stderr)

    cfg = inductor_configs(args.native)
    print(f"inductor_configs={cfg}" + ("" if args.native or "cpp.march" in cfg else f" (+ march={PORTABLE_MARCH} patch)"))

    specs = [s for s in FIXTURES if not args.only or s["name"] in args.only]
    manifest_path = out_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    release_wide = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "compiler": gcc_version(),
        "march": "native" if args.native else PORTABLE_MARCH,
        "march_method": MARCH_METHOD,
        "inductor_configs": cfg,
        "torch_cxx11_abi": bool(torch.compiled_with_cxx11_abi()),
        "seed": SEED,
        # Exact for integer and bool outputs.
        "tolerance": {"float32": {"rtol": rtol, "atol": atol},
                      "int64": {"rtol": 0, "atol": 0}, "bool": {"rtol": 0, "atol": 0}},
    }
    # --only adds models to an existing directory: its release-wide fields
    # stay those of the first export (the new models record theirs below).
    adding = bool(args.only) and "models" in manifest
    for k, v in release_wide.items():
        if not adding or k not in manifest:
            manifest[k] = v
    models = manifest.setdefault("models", {})
    export_failures = manifest.setdefault("export_failures", {})
    failures = 0
    for spec in specs:
        name = spec["name"]
        try:
            pkg = export_one(spec, out_dir, cfg)
        except Exception as e:  # recorded, the other models go on
            import traceback

            msg = f"{type(e).__name__}: {e}".strip().splitlines()
            export_failures[name] = "\n".join(msg[:20])
            models.pop(name, None)
            failures += 1
            traceback.print_exc()
            print(f"{name}: EXPORT FAILED: {msg[0] if msg else ''}", file=sys.stderr)
            continue
        export_failures.pop(name, None)
        entries = save_reference(spec, out_dir)
        with zipfile.ZipFile(pkg) as z:
            archive_entries = sorted(z.namelist())
        info = {
            "archive": pkg.name,
            "size": pkg.stat().st_size,
            "sha256": hashlib.sha256(pkg.read_bytes()).hexdigest(),
            "entries": archive_entries,
            "sets": {k: {"inputs": v["inputs"], "outputs": v["outputs"]} for k, v in entries.items()},
        }
        if "dynamic" in spec:
            info["dynamic"] = spec["dynamic"]
        if "memory_format" in spec:
            info["memory_format"] = spec["memory_format"]
        if "inductor_configs" in spec or adding:
            info["inductor_configs"] = dict(cfg, **spec.get("inductor_configs", {}))
        if adding:
            info["exported_with"] = {k: release_wide[k] for k in ("torch", "python", "compiler", "march_method")}
        try:
            info["facts"] = package_facts(pkg)
        except Exception as e:  # binutils missing, ...
            info["facts"] = {"error": str(e)}
        if not args.no_verify:
            try:
                info["verified_max_abs_diff"] = verify(pkg, entries, rtol, atol)
                print(f"{name}: {pkg.stat().st_size} bytes, aoti_load_package matches eager "
                      f"(max |diff| {info['verified_max_abs_diff']})")
            except AssertionError as e:
                failures += 1
                print(f"{name}: MISMATCH: {e}", file=sys.stderr)
        else:
            print(f"{name}: {pkg.stat().st_size} bytes (not verified)")
        models[name] = info
    manifest["models"] = dict(sorted(models.items()))
    if not export_failures:
        manifest.pop("export_failures")
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out_dir}")
    if _CACHE_DIR:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
