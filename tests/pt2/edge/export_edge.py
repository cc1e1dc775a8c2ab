"""Exports the models of the edge-case tests (issue #40: crashes and false
refusals on the models users have) with the torch of the venv that runs it,
random weights (fixed seed), and eager references:

  conv1d_stem.pt2   gelu(Conv1d(40, 64, 3, padding=1)) on x [batch 2..16 (2..15 compiled),
                    40, 200]: the stem of a speech encoder; oneDNN runs it on
                    its GEMM path (x64:gemm:jit), which crashed from a second
                    thread.
  dilated.pt2       Conv2d(64, 32, 3, padding=12, dilation=12) on x [batch
                    2..8, 64, 8, 8]: an ASPP branch (also GEMM-based).
  strided_len.pt2   Conv1d(4, 8, 4, stride=4) over x [2, 4, length 16..1024]:
                    the output's length is (length - 4) // 4 + 1, a floor
                    division of a size symbol.
  data_len.pt2      x[:, :lengths.max()] for x [2, 24] float32 and lengths
                    [2] int64: the output's dim 1 is known only after the
                    run (an unbacked size).
  proxy.pt2         linalg.inv(a) @ b, linalg.solve(a, b) and
                    unique(ids, return_counts=True)[1].max() for a [2, 4, 4],
                    b [2, 4, 3] float32 and ids [16] int64: ops with no C
                    shim function, which the model calls through
                    AOTInductor's proxy executor (its extern kernel nodes).
  scans.pt2         cummax, cummin, logcumsumexp of x [3, 5] (with a NaN, -inf
                    and a row of ties), searchsorted(seq [8], 0.25) and
                    nonzero_static(m > 0.5, size=6, fill_value=-1): the C
                    shim's cummax, cummin, logcumsumexp and nonzero_static
                    (Inductor lowers searchsorted.Scalar to searchsorted_Tensor).
  fft.pt2           torch.fft.rfft(x).abs() for x [2, 16] (a spectrogram front
                    end) and torch.fft.fftn(h, dim=(1, 2)).real for h
                    [2, 5, 8] (HuggingFace FNet's token mixing): the C shim's
                    _fft_r2c, _fft_c2c, abs and view_as_real fallbacks.

Each MODEL.pt2 comes with MODEL.in<i>.npy and MODEL.out0.npy (eager outputs
for the example inputs) and, for the dynamic ones, MODEL.<size>.in<i>.npy /
.out0.npy at the sizes the tests sweep; manifest.json records the torch
version and what each file holds.

    /path/to/venv/bin/python tests/pt2/edge/export_edge.py [--out DIR] [--only NAME ...]

--only exports just the named models and updates their entries in an
existing manifest.json (the other fixtures stay byte for byte).
"""
import argparse
import json
import os

import numpy as np
import torch
from torch.export import Dim

CONFIGS = {"aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
           "aot_inductor.enable_line_tables": False}


class Conv1dStem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(40, 64, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.gelu(self.conv(x))


class Dilated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(64, 32, 3, padding=12, dilation=12)

    def forward(self, x):
        return self.conv(x)


class StridedLen(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 8, 4, stride=4)

    def forward(self, x):
        return self.conv(x)


class DataLen(torch.nn.Module):
    def forward(self, x, lengths):
        n = lengths.max().item()
        torch._check(n >= 0)
        torch._check(n <= x.shape[1])
        return x[:, :n] * 2.0


class Fft(torch.nn.Module):
    def forward(self, x, h):
        return torch.fft.rfft(x).abs(), torch.fft.fftn(h, dim=(1, 2)).real


class Scans(torch.nn.Module):
    def forward(self, x, seq, m):
        v, i = torch.cummax(x, 1)
        w, j = torch.cummin(x, -2)
        return (v, i, w, j, torch.logcumsumexp(x, 1), torch.searchsorted(seq, 0.25),
                torch.nonzero_static(m > 0.5, size=6, fill_value=-1))


class Proxy(torch.nn.Module):
    def forward(self, a, b, ids):
        _, counts = torch.unique(ids, return_counts=True)
        return torch.linalg.inv(a) @ b, torch.linalg.solve(a, b), counts.max()


def export(out, name, model, example, dynamic_shapes, sweeps, manifest):
    model = model.eval()
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, name + ".pt2"),
                                             inductor_configs=CONFIGS)
    entry = {"inputs": [list(t.shape) for t in example], "cases": []}
    with torch.no_grad():
        for i, inputs in enumerate([example] + sweeps):
            tag = "" if i == 0 else f"s{i}"
            outs = model(*inputs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            prefix = name if i == 0 else f"{name}.{tag}"
            for k, t in enumerate(inputs):
                np.save(os.path.join(out, f"{prefix}.in{k}.npy"), t.numpy())
            for k, t in enumerate(outs):
                np.save(os.path.join(out, f"{prefix}.out{k}.npy"), t.numpy())
            entry["cases"].append({"prefix": prefix, "inputs": [list(t.shape) for t in inputs],
                                   "outputs": [list(t.shape) for t in outs]})
    manifest[name] = entry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", nargs="+", default=None)
    args = ap.parse_args()
    out = args.out
    torch.manual_seed(20261128)
    manifest = {"torch": torch.__version__}
    if args.only:
        with open(os.path.join(out, "manifest.json")) as f:
            old = json.load(f)
        assert old["torch"] == torch.__version__, "the other fixtures were made by torch " + old["torch"]
        only = {}
        for name in args.only:
            EXPORTS[name](out, only)
        old.update(only)
        manifest = old
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        return

    batch = Dim("batch", min=2, max=16)
    # torch narrows a convolution's batch to [2, 15] (docs/PT2.md, "Upper
    # bounds"): the sweep stays inside.
    export(out, "conv1d_stem", Conv1dStem(), (torch.randn(4, 40, 200),), {"x": {0: batch}},
           [(torch.randn(2, 40, 200),), (torch.randn(15, 40, 200),)], manifest)

    batch8 = Dim("batch", min=2, max=8)
    export(out, "dilated", Dilated(), (torch.randn(2, 64, 8, 8),), {"x": {0: batch8}},
           [(torch.randn(5, 64, 8, 8),)], manifest)

    length = Dim("length", min=16, max=1024)
    sweeps = [(torch.randn(2, 4, n),) for n in (16, 17, 19, 20, 21, 37, 100, 1023, 1024)]
    export(out, "strided_len", StridedLen(), (torch.randn(2, 4, 64),), {"x": {2: length}}, sweeps, manifest)

    lengths = torch.tensor([5, 9], dtype=torch.int64)
    export(out, "data_len", DataLen(), (torch.randn(2, 24), lengths), None,
           [(torch.randn(2, 24), torch.tensor([0, 0], dtype=torch.int64)),
            (torch.randn(2, 24), torch.tensor([24, 3], dtype=torch.int64)),
            (torch.randn(2, 24), torch.tensor([1, 17], dtype=torch.int64))], manifest)

    def well_conditioned():
        return torch.randn(2, 4, 4) + 4 * torch.eye(4)

    export(out, "proxy", Proxy(), (well_conditioned(), torch.randn(2, 4, 3), torch.randint(0, 6, (16,))), None,
           [(well_conditioned(), torch.randn(2, 4, 3), torch.randint(0, 3, (16,)))], manifest)

    EXPORTS["fft"](out, manifest)
    EXPORTS["scans"](out, manifest)

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


def export_fft(out, manifest):
    torch.manual_seed(20261129)
    export(out, "fft", Fft(), (torch.randn(2, 16), torch.randn(2, 5, 8)), None,
           [(torch.randn(2, 16), torch.randn(2, 5, 8))], manifest)


def scan_inputs():
    # Ties (a constant row), -inf and NaN: where cummax/cummin pick indices
    # and logcumsumexp's special cases are decided.
    x = torch.randn(3, 5)
    x[0, 2] = float("nan")
    x[1, 1] = float("-inf")
    x[2, :] = x[2, 0]
    return x, torch.sort(torch.randn(8)).values, torch.rand(3, 4)


def export_scans(out, manifest):
    torch.manual_seed(20261130)
    export(out, "scans", Scans(), scan_inputs(), None, [scan_inputs()], manifest)


EXPORTS = {"fft": export_fft, "scans": export_scans}


if __name__ == "__main__":
    main()
