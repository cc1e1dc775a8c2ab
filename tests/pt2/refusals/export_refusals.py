"""Exports the model of the kernel-refusal test (issue #26: a kernel call
with arguments aotrun's shim does not take is a clear error naming the op
and the argument, never wrong numbers) with the torch of the venv that runs
it, random weights:

  conv_transpose.pt2   a ConvTranspose2d(4, 8, 3, stride=2): Inductor calls
                       aoti_torch_cpu_convolution with transposed=1, which
                       the shim refuses (x [2, 4, 8, 8] float32, static).

    /path/to/venv/bin/python tests/pt2/refusals/export_refusals.py [--out DIR]
"""
import argparse
import os

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
    out = ap.parse_args().out
    torch.manual_seed(20261126)
    ep = torch.export.export(ConvTranspose().eval(), (torch.randn(2, 4, 8, 8),))
    # Portable like the corpus (compat/aoti/export_fixtures.py).
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "conv_transpose.pt2"), inductor_configs={
        "aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
        "aot_inductor.enable_line_tables": False})


if __name__ == "__main__":
    main()
