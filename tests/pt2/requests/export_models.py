"""Exports the models of the bad-request tests (issue #29) with the torch of
the venv that runs it, random weights, and eager references:

  ids_mask.pt2  token ids [batch, seq] (int64) and a mask [batch, seq]
                (float32) that must agree in both dims; a token table of
                500 rows and a position table of 64 (seq 2..64, batch 1..8):
                the model indexes both tables inside its kernels.

    /path/to/venv/bin/python tests/pt2/requests/export_models.py [--out DIR]

Writes ids_mask.pt2, ids_mask.in0.npy, ids_mask.in1.npy, ids_mask.out0.npy
and manifest.json (torch version, shapes) into DIR (default: beside this).
"""
import argparse
import json
import os

import numpy as np
import torch


class IdsMask(torch.nn.Module):
    def __init__(self, vocab=500, positions=64, hidden=64):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Embedding(positions, hidden)
        self.proj = torch.nn.Linear(hidden, hidden)

    def forward(self, ids, mask):
        seq = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(seq))[None]
        h = torch.tanh(self.proj(h)) * mask[..., None]
        return h.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    torch.manual_seed(20261125)
    m = IdsMask().eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=2, max=64)
    ids = torch.randint(0, 500, (3, 9))
    mask = (torch.rand(3, 9) > 0.2).float()
    ep = torch.export.export(m, (ids, mask), dynamic_shapes={"ids": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}})
    path = os.path.join(args.out, "ids_mask.pt2")
    # Portable like the corpus (compat/aoti/export_fixtures.py): AVX2-class
    # code that runs on any x86-64-v3 CPU, not this machine's -march=native.
    torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs={
        "aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
        "aot_inductor.enable_line_tables": False})
    with torch.no_grad():
        out = m(ids, mask)
    np.save(os.path.join(args.out, "ids_mask.in0.npy"), ids.numpy())
    np.save(os.path.join(args.out, "ids_mask.in1.npy"), mask.numpy())
    np.save(os.path.join(args.out, "ids_mask.out0.npy"), out.numpy())
    manifest = {
        "torch": torch.__version__,
        "models": {"ids_mask": {"archive": "ids_mask.pt2", "vocab": 500, "positions": 64,
                                "batch": [1, 8], "seq": [2, 64],
                                "inputs": [list(ids.shape), list(mask.shape)], "outputs": [list(out.shape)]}},
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
