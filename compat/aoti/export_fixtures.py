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


class TwoIO(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.zeros(32, 32))

    def forward(self, x, y):
        return x @ self.W + y, torch.relu(x).sum(dim=1)


def _two_io_init(m: TwoIO, rng: np.random.Generator) -> None:
    with torch.no_grad():
        m.W.copy_(_uniform(rng, (32, 32), 1.0 / np.sqrt(32.0)))


# key: distinct RNG stream per model (weights: [key, 0], inputs: [key, 1+i],
# extra input sets: [key, 100+j, i]).
FIXTURES = [
    dict(name="mlp", key=1, cls=MLP, inputs=[(4, 64)]),
    dict(name="convnet", key=2, cls=ConvNet, inputs=[(2, 3, 16, 16)]),
    dict(name="dyn_mlp", key=3, cls=MLP, inputs=[(8, 64)],
         dynamic={"batch": dict(input=0, dim=0, min=1, max=64)},
         extra={"b3": [(3, 64)]}),
    dict(name="two_io", key=4, cls=TwoIO, init=_two_io_init, inputs=[(4, 32), (4, 32)]),
]


def build_model(spec) -> nn.Module:
    model = spec["cls"]()
    (spec.get("init") or _init_params)(model, _rng(spec["key"], 0))
    return model.eval()


def make_inputs(spec, shapes, stream) -> list[torch.Tensor]:
    return [
        torch.from_numpy(_rng(spec["key"], *stream, i).standard_normal(shape).astype(np.float32))
        for i, shape in enumerate(shapes)
    ]


def as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def inductor_configs(native: bool) -> dict:
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
    else:
        # Older torch hard-codes "march=native" in _get_optimization_cflags.
        from torch._inductor import cpp_builder

        orig = cpp_builder._get_optimization_cflags
        if not getattr(orig, "_aotrun_patched", False):
            def patched(*args, **kwargs):
                flags = orig(*args, **kwargs)
                return [f"march={PORTABLE_MARCH}" if f == "march=native" else f for f in flags]

            patched._aotrun_patched = True
            cpp_builder._get_optimization_cflags = patched
    return cfg


def export_one(spec, out_dir: Path, cfg: dict) -> Path:
    model = build_model(spec)
    inputs = make_inputs(spec, spec["inputs"], (1,))
    dynamic_shapes = None
    if "dynamic" in spec:
        per_input = [None] * len(inputs)
        for dim_name, d in spec["dynamic"].items():
            per_input[d["input"]] = {d["dim"]: torch.export.Dim(dim_name, min=d["min"], max=d["max"])}
        dynamic_shapes = tuple(per_input)
    with torch.no_grad():
        ep = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes)
        pkg = out_dir / f"{spec['name']}.pt2"
        if pkg.exists():
            pkg.unlink()
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
        sets[suffix] = make_inputs(spec, shapes, (100 + j,))
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
    compiled = torch._inductor.aoti_load_package(str(pkg))
    result = {}
    for set_name, e in entries.items():
        inputs, expected = e["_tensors"]
        with torch.no_grad():
            actual = as_tuple(compiled(*[t.clone() for t in inputs]))
        assert len(actual) == len(expected), (pkg, set_name, len(actual), len(expected))
        max_abs = 0.0
        for a, x, f in zip(actual, expected, e["outputs"]):
            torch.testing.assert_close(a, x, rtol=rtol, atol=atol)
            ref = torch.from_numpy(np.load(pkg.parent / f["file"]))
            torch.testing.assert_close(a, ref, rtol=rtol, atol=atol)
            max_abs = max(max_abs, (a - x).abs().max().item())
        result[set_name] = max_abs
    return result


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
    manifest.update({
        "torch": torch.__version__,
        "python": platform.python_version(),
        "compiler": gcc_version(),
        "march": "native" if args.native else PORTABLE_MARCH,
        "inductor_configs": cfg,
        "seed": SEED,
        "tolerance": {"float32": {"rtol": rtol, "atol": atol}},
    })
    models = manifest.setdefault("models", {})
    failures = 0
    for spec in specs:
        name = spec["name"]
        pkg = export_one(spec, out_dir, cfg)
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
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out_dir}")
    if _CACHE_DIR:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
