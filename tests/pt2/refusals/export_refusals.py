"""Exports the model of what was the kernel-refusal test (issue #26) with
the torch of the venv that runs it, random weights:

  conv_transpose.pt2   a ConvTranspose2d(4, 8, 3, stride=2): Inductor calls
                       aoti_torch_cpu_convolution with transposed=1, which
                       the shim refused before aotrun-shim 1.3 and now runs
                       (x [2, 4, 8, 8] float32, static).

--references writes conv_transpose/inputs/arg2_1.npy (seed 7) and
conv_transpose/reference/output0.npy: the package's output run on libtorch
(aoti_load_package), checked identical to the eager module's, which
pt2_conv_transpose_runs_on_the_shim_and_matches_eager compares the shim's with.

    /path/to/venv/bin/python tests/pt2/refusals/export_refusals.py [--out DIR] [--references]
"""
import argparse
import os

import numpy as np
import torch


class ConvTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(4, 8, 3, stride=2)

    def forward(self, x):
        return torch.relu(self.up(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--references", action="store_true", help="write the test's input and reference, not the .pt2")
    args = ap.parse_args()
    out = args.out
    if args.references:
        write_references(out)
        return
    torch.manual_seed(20261126)
    ep = torch.export.export(ConvTranspose().eval(), (torch.randn(2, 4, 8, 8),))
    # Portable like the corpus (compat/aoti/export_fixtures.py).
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "conv_transpose.pt2"), inductor_configs={
        "aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
        "aot_inductor.enable_line_tables": False})


def write_references(out):
    torch.manual_seed(20261126)
    module = ConvTranspose().eval()
    torch.manual_seed(7)
    x = torch.randn(2, 4, 8, 8)
    got = torch._inductor.aoti_load_package(os.path.join(out, "conv_transpose.pt2"))(x)
    got = got[0] if isinstance(got, (list, tuple)) else got
    torch.testing.assert_close(got, module(x), rtol=0, atol=0)
    for sub in ("inputs", "reference"):
        os.makedirs(os.path.join(out, "conv_transpose", sub), exist_ok=True)
    np.save(os.path.join(out, "conv_transpose", "inputs", "arg2_1.npy"), x.numpy())
    np.save(os.path.join(out, "conv_transpose", "reference", "output0.npy"), got.detach().contiguous().numpy())


if __name__ == "__main__":
    main()
