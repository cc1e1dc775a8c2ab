"""Exports the model of the name tests (issue #28 item 3) with the torch of
the venv that runs it, random weights, and an eager reference:

  named.pt2   forward(x, *, mask, extra) with x [batch, 8] positional, mask
              [batch, 8] and extra = {"bias": [8], "gain": [8]} by keyword;
              returns {"logits": [batch, 4], "features": [batch, 8]}. Its
              call spec names every input but x and every output.

    /path/to/venv/bin/python tests/pt2/names/export_named.py [--out DIR]

Writes named.pt2, its inputs as inputs/<name>.npy (arg4_1 for x, which
torch records no name for, then mask, extra.bias, extra.gain) and eager
PyTorch's outputs as reference/<name>.npy (logits, features) into DIR
(default: beside this). Needs torch.
"""
import argparse
import os

import numpy as np
import torch


class Named(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x, *, mask, extra):
        features = torch.tanh(self.fc(x) * extra["gain"] + extra["bias"]) * mask
        return {"logits": self.head(features), "features": features}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    out = ap.parse_args().out
    torch.manual_seed(20261126)
    model = Named().eval()
    x = torch.randn(3, 8)
    mask = (torch.rand(3, 8) > 0.3).float()
    extra = {"bias": torch.randn(8), "gain": torch.randn(8)}
    batch = torch.export.Dim("batch", min=1, max=16)
    ep = torch.export.export(model, (x,), {"mask": mask, "extra": extra},
                             dynamic_shapes={"x": {0: batch}, "mask": {0: batch}, "extra": {"bias": None, "gain": None}})
    # Portable like the corpus (compat/aoti/export_fixtures.py).
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "named.pt2"), inductor_configs={
        "aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
        "aot_inductor.enable_line_tables": False})
    with torch.no_grad():
        y = model(x, mask=mask, extra=extra)
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(out, "reference"), exist_ok=True)
    for name, a in [("arg4_1", x), ("mask", mask), ("extra.bias", extra["bias"]), ("extra.gain", extra["gain"])]:
        np.save(os.path.join(out, "inputs", name + ".npy"), a.numpy())
    for k in ["logits", "features"]:
        np.save(os.path.join(out, "reference", k + ".npy"), y[k].numpy())


if __name__ == "__main__":
    main()
