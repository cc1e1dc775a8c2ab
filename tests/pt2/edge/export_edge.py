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
  median.pt2        torch.median(x, 1), torch.median(x, 0) and torch.median(y, -1,
                    keepdim=True) for x [4, 7] float32 (NaNs, ties, -0.0) and
                    y [2, 3, 6] int64 (ties, even sizes: the lower median):
                    aten::median.dim, which the model calls through the proxy
                    executor.
  spectral.pt2      irfft(rfft(x) * w, n=16) for a complex64 weight w [9]
                    (view_as_complex of a float32 [9, 2] constant),
                    irfft(rfft(x) * g, n=16) for a real input g [2, 9],
                    irfft(rfft(x)[..., :5], n=16) (the high frequencies
                    zeroed) and irfft(rfft(x) * w + rfft(x), n=16) for x
                    [2, 16]: the C shim's mul_Tensor, slice_Tensor and
                    view_dtype on complex64 (Inductor generates no code for
                    complex tensors), constant_pad_nd and _fft_c2r through
                    the proxy executor.
  spectrum_zero.pt2 irfft(cat([X[..., :5], zeros_like(X[..., 5:])], -1), n=16)
                    for X = rfft(x), and irfft(Y, n=16) after Y[..., 5:] = 0
                    for Y = rfft(y), x and y [2, 16]: the C shim's cat on
                    complex64, aten::full and aten::slice_scatter through the
                    proxy executor.
  complex_io.pt2    z * w and irfft(z * w, n=16) for a complex64 input z
                    [2, 9] and a complex64 weight w [9] (an nn.Parameter):
                    complex constants, inputs and outputs through aotrun.
  cl_param.pt2      tanh(x * p + 1) for a channels-last x [2, 8, 4, 4] and a
                    parameter p [1, 8, 4, 4] kept channels-last, which
                    Inductor's own kernel indexes by those strides (the
                    constant-update test replaces p; its row-major values in
                    cl_param.p.npy).
  repeated_outputs.pt2  y = relu(Linear(16, 16)(x)) returned as (y, (x, y),
                    y.sum(-1), x) for x [2, 16]: one tensor returned twice
                    (AOTInductor hands the model's one handle out as both
                    outputs), and the input returned.
  int4_linear.pt2   two int4 weight-only linears of x [batch 2..32, 256] as
                    gpt-fast and torchao run them on CPU (weights packed by
                    _convert_weight_to_int4pack_for_cpu, [K / G, N, 2] scales
                    and zeros, _weight_int4pack_mm_for_cpu): float32 with
                    group size 64 and bfloat16 with group size 128, N = 16.
                    The C shim's _weight_int4pack_mm_cpu_tensor. N = 16 is
                    one column block, packed alike under every ATen CPU
                    capability (wider weights are packed for the exporting
                    CPU's), and the values are dyadic, every sum exact: the
                    eager outputs hold on any host.
  pooling.pt2       the pools Inductor hands to ATen (the C shim's
                    avg_pool2d, _adaptive_avg_pool2d, adaptive_max_pool2d,
                    avg_pool3d, _adaptive_avg_pool3d, adaptive_max_pool3d):
                    windows over 25 elements that are not the stride (7x7
                    stride 2 with ceil_mode and padding not counted; 6x6
                    stride 3 with a divisor override; S3D's (2, 7, 7) stride
                    1), adaptive pools to sizes that do not divide the input,
                    every 3-d adaptive pool, and a 13x13 max pool (SPP, which
                    torch 2.15 lowers itself), of a channels-last x [2, 8, 23,
                    19] with a block of ties and of v [2, 4, 5, 14, 15].
  vlm_merge.pt2     a vision-language model's merge: embeds [2, 12, 16] with
                    its image-token positions (ids == 7) taken in order from
                    image features [6, 16] (masked_scatter), then the tokens
                    that are not padding (merged[ids != 0], a size known only
                    after the run): the C shim's masked_scatter and
                    index_Tensor, at 6, 3 and 0 image tokens.
  stats.pt2         the statistics fallbacks: histc (10 bins over [-2, 2],
                    values outside ignored, NaN too), the median of the whole
                    tensor, mode along dim 1 (ties), nanmedian along dim 1
                    (rows with NaN, one all NaN) of x [6, 9], and bincount of
                    ids [12] with minlength 8 (a size known only after the
                    run): the C shim's histc, median and mode and the proxy
                    executor's aten::nanmedian.dim and aten::bincount, with
                    ids reaching past minlength and not.
  geometry.pt2      nn.Bilinear(8, 6, 5) of a [4, 8] and a [4, 6] input,
                    torch.pdist of a [7, 5] x at p = 2 and p = 0.5, and a
                    3-d F.grid_sample of v [2, 3, 4, 5, 6] at grid
                    [2, 3, 2, 4, 3] (bilinear with border padding, nearest
                    with reflection, align_corners both): the C shim's
                    _trilinear, _pdist_forward and grid_sampler_3d.

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
import torch.nn.functional as F
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


class Median(torch.nn.Module):
    def forward(self, x, y):
        v, i = torch.median(x, 1)
        u, k = torch.median(x, 0)
        w, j = torch.median(y, -1, keepdim=True)
        return v, i, u, k, w, j


class Spectral(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # The complex weight as (re, im) pairs, viewed as complex in forward
        # (complex_io.pt2 holds a complex64 constant itself).
        self.w = torch.nn.Parameter(torch.randn(9, 2))

    def forward(self, x, g):
        X = torch.fft.rfft(x)
        w = torch.view_as_complex(self.w)
        return (torch.fft.irfft(X * w, n=16), torch.fft.irfft(X * g, n=16),
                torch.fft.irfft(X[..., :5], n=16), torch.fft.irfft(X * w + X, n=16))


class SpectrumZero(torch.nn.Module):
    def forward(self, x, y):
        X = torch.fft.rfft(x)
        rebuilt = torch.cat([X[..., :5], torch.zeros_like(X[..., 5:])], -1)
        Y = torch.fft.rfft(y)
        Y[..., 5:] = 0
        return torch.fft.irfft(rebuilt, n=16), torch.fft.irfft(Y, n=16)


class ComplexIO(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(9, dtype=torch.complex64), requires_grad=False)

    def forward(self, z):
        y = z * self.w
        return y, torch.fft.irfft(y, n=16)


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
            outs = tuple(torch.utils._pytree.tree_leaves(outs))  # nested outputs, flattened as the package lists them
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
    EXPORTS["int4_linear"](out, manifest)
    EXPORTS["median"](out, manifest)
    EXPORTS["spectral"](out, manifest)
    EXPORTS["complex_io"](out, manifest)
    EXPORTS["cl_param"](out, manifest)
    EXPORTS["repeated_outputs"](out, manifest)
    EXPORTS["spectrum_zero"](out, manifest)
    EXPORTS["pooling"](out, manifest)
    EXPORTS["vlm_merge"](out, manifest)
    EXPORTS["stats"](out, manifest)
    EXPORTS["geometry"](out, manifest)

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


def median_inputs():
    # A row with NaNs (the first one wins), a row of ties, -0.0 beside 0.0;
    # int64 lines of even length with ties.
    x = torch.randn(4, 7)
    x[0, 5] = float("nan")
    x[0, 2] = float("nan")
    x[1, :] = torch.tensor([2.0, 1.0, 2.0, 3.0, 2.0, 1.0, 2.0])
    x[2, 1] = -0.0
    x[2, 4] = 0.0
    x[3, 0] = x[3, 6] = 0.0
    return x, torch.randint(0, 4, (2, 3, 6))


def export_median(out, manifest):
    torch.manual_seed(20261201)
    export(out, "median", Median(), median_inputs(), None, [median_inputs()], manifest)


def export_spectral(out, manifest):
    torch.manual_seed(20261202)
    model = Spectral()
    export(out, "spectral", model, (torch.randn(2, 16), torch.randn(2, 9)), None,
           [(torch.randn(2, 16), torch.randn(2, 9))], manifest)


def export_spectrum_zero(out, manifest):
    torch.manual_seed(20261203)
    export(out, "spectrum_zero", SpectrumZero(), (torch.randn(2, 16), torch.randn(2, 16)), None,
           [(torch.randn(2, 16), torch.randn(2, 16))], manifest)


EXPORTS = {"fft": export_fft, "scans": export_scans, "median": export_median, "spectral": export_spectral,
           "spectrum_zero": export_spectrum_zero}


def int4_group_quantize(w, group):
    """gpt-fast's asymmetric group quantization (q in 0..15, value =
    (q - 8) * scale + zero), with each scale a power of two and each zero a
    multiple of 2^-6 so that every product and sum downstream is exact."""
    n, k = w.shape
    g = w.reshape(n, k // group, group)
    lo, hi = g.amin(-1), g.amax(-1)
    scale = torch.exp2(torch.ceil(torch.log2((hi - lo).clamp(min=1e-3) / 15)))
    zero = torch.round((lo + 8 * scale) * 64) / 64
    q = torch.clamp(torch.round((g - (zero - 8 * scale)[..., None]) / scale[..., None]), 0, 15)
    q = q.reshape(n, k).to(torch.int32)
    scales_and_zeros = torch.stack([scale, zero], -1).transpose(0, 1).contiguous()  # [K / G, N, 2]
    return q, scales_and_zeros


class Int4Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for name, group, dtype in (("f32", 64, torch.float32), ("bf16", 128, torch.bfloat16)):
            q, sz = int4_group_quantize(torch.randn(16, 256) * 0.1, group)
            self.register_buffer("w_" + name, torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1))
            self.register_buffer("sz_" + name, sz.to(dtype))

    def forward(self, x):
        a = torch.ops.aten._weight_int4pack_mm_for_cpu(x, self.w_f32, 64, self.sz_f32)
        b = torch.ops.aten._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16), self.w_bf16, 128, self.sz_bf16)
        return a, b.float()


def int4_inputs(batch):
    return (torch.randint(-8, 9, (batch, 256)).float() / 4,)  # exact in bfloat16


def export_int4_linear(out, manifest):
    torch.manual_seed(20261203)
    batch = Dim("batch", min=2, max=32)
    export(out, "int4_linear", Int4Linear(), int4_inputs(4), {"x": {0: batch}},
           [int4_inputs(2), int4_inputs(32), int4_inputs(7)], manifest)


EXPORTS["int4_linear"] = export_int4_linear


def export_complex_io(out, manifest):
    torch.manual_seed(20261129)
    export(out, "complex_io", ComplexIO(), (torch.randn(2, 9, dtype=torch.complex64),), None,
           [(torch.randn(2, 9, dtype=torch.complex64),)], manifest)


EXPORTS["complex_io"] = export_complex_io


class ChannelsLastParam(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.randn(1, 8, 4, 4).contiguous(memory_format=torch.channels_last))

    def forward(self, x):
        return torch.tanh(x * self.p + 1.0)


def export_cl_param(out, manifest):
    torch.manual_seed(20261204)
    model = ChannelsLastParam()
    np.save(os.path.join(out, "cl_param.p.npy"), model.p.detach().contiguous().numpy())
    cl = torch.channels_last
    export(out, "cl_param", model, (torch.randn(2, 8, 4, 4).contiguous(memory_format=cl),), None,
           [(torch.randn(2, 8, 4, 4).contiguous(memory_format=cl),)], manifest)


EXPORTS["cl_param"] = export_cl_param


class RepeatedOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        hidden = (x, y)  # as a transformer's hidden_states, whose last is also its output
        return y, hidden, y.sum(-1), x


def export_repeated_outputs(out, manifest):
    torch.manual_seed(20261205)
    export(out, "repeated_outputs", RepeatedOutputs(), (torch.randn(2, 16),), None, [(torch.randn(2, 16),)],
           manifest)


EXPORTS["repeated_outputs"] = export_repeated_outputs


class Pooling(torch.nn.Module):
    def forward(self, x, v):
        return (F.avg_pool2d(x, 7, stride=2, padding=3, ceil_mode=True, count_include_pad=False),
                F.avg_pool2d(x, 6, stride=3, divisor_override=7),
                F.adaptive_avg_pool2d(x, (5, 3)),
                F.adaptive_max_pool2d(x, (5, 3)),
                F.avg_pool3d(v, (2, 7, 7), stride=1),
                F.adaptive_avg_pool3d(v, (2, 3, 3)),
                F.adaptive_max_pool3d(v, (2, 3, 3)),
                F.max_pool2d(x, 13, stride=1, padding=6))


def export_pooling(out, manifest):
    torch.manual_seed(20261206)
    cl = torch.channels_last

    def inputs():
        x = torch.randn(2, 8, 23, 19)
        x[0, 3, 4:9, 2:6] = 1.5  # ties inside the max windows
        return x.contiguous(memory_format=cl), torch.randn(2, 4, 5, 14, 15)

    export(out, "pooling", Pooling(), inputs(), None, [inputs()], manifest)


EXPORTS["pooling"] = export_pooling


class VlmMerge(torch.nn.Module):
    def forward(self, embeds, ids, image):
        merged = embeds.masked_scatter((ids == 7).unsqueeze(-1).expand_as(embeds), image)
        return merged, merged[ids != 0]


def export_vlm_merge(out, manifest):
    torch.manual_seed(20261207)

    def inputs(images, pads):
        ids = torch.randint(1, 7, (2, 12))
        ids[0, 2:2 + images] = 7  # the image's tokens, as a processor lays them out
        ids[1, 12 - pads:] = 0  # padding
        return torch.randn(2, 12, 16), ids, torch.randn(6, 16)

    export(out, "vlm_merge", VlmMerge(), inputs(6, 3), None, [inputs(3, 0), inputs(0, 12)], manifest)


EXPORTS["vlm_merge"] = export_vlm_merge


class Stats(torch.nn.Module):
    def forward(self, x, ids):
        return (torch.histc(x, bins=10, min=-2, max=2), torch.median(x), torch.mode(x, 1)[0],
                torch.nanmedian(x, 1)[0], torch.bincount(ids, minlength=8))


def export_stats(out, manifest):
    torch.manual_seed(20261208)

    def inputs(top, nan_row):
        x = torch.randint(-6, 7, (6, 9)).float() * 0.5  # ties for mode and median
        x[1, 3] = float("nan")
        x[4, ::2] = float("nan")
        if nan_row:
            x[5] = float("nan")
        return x, torch.randint(0, top, (12,))

    export(out, "stats", Stats(), inputs(5, False), None, [inputs(13, True), inputs(8, False)], manifest)


EXPORTS["stats"] = export_stats


class Geometry(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bilinear = torch.nn.Bilinear(8, 6, 5)

    def forward(self, a, b, x, v, grid):
        return (self.bilinear(a, b),
                torch.pdist(x, 2.0),
                torch.pdist(x, 0.5),
                F.grid_sample(v, grid, mode="bilinear", padding_mode="border", align_corners=False),
                F.grid_sample(v, grid, mode="nearest", padding_mode="reflection", align_corners=True))


def export_geometry(out, manifest):
    torch.manual_seed(20261208)

    def inputs():
        return (torch.randn(4, 8), torch.randn(4, 6), torch.randn(7, 5), torch.randn(2, 3, 4, 5, 6),
                torch.rand(2, 3, 2, 4, 3) * 2.4 - 1.2)

    export(out, "geometry", Geometry(), inputs(), None, [inputs()], manifest)


EXPORTS["geometry"] = export_geometry

if __name__ == "__main__":
    main()
