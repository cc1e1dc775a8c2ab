"""Exports the models of the bad-request tests (issue #29) with the torch of
the venv that runs it, random weights, and eager references:

  ids_mask.pt2  token ids [batch, seq] (int64) and a mask [batch, seq]
                (float32) that must agree in both dims; a token table of
                500 rows and a position table of 64 (seq 2..64, batch 1..8):
                the model indexes both tables inside its kernels.
  gpt2.pt2      transformers' GPT2Model (vocabulary 1000, 128 positions,
                2 layers of width 64): input_ids [batch 1..8, seq 2..128].
  bert.pt2      transformers' BertModel (vocabulary 1000, 128 positions,
                2 layers of width 64): input_ids and attention_mask (int64),
                sharing batch 1..8 and seq 2..128.

    /path/to/venv/bin/python tests/pt2/requests/export_models.py [--out DIR]

Writes each MODEL.pt2 with MODEL.in<i>.npy / MODEL.out0.npy (eager outputs)
and manifest.json (torch and transformers versions, shapes) into DIR
(default: beside this). Needs torch and transformers.
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


class HfLastHidden(torch.nn.Module):
    """A transformers model's last hidden state, from positional inputs."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), return_dict=False)[0]


def transformers_models():
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    gpt2 = GPT2Model(GPT2Config(vocab_size=1000, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                                bos_token_id=0, eos_token_id=0, use_cache=False))
    bert = BertModel(BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                intermediate_size=128, max_position_embeddings=128))
    ids = torch.randint(0, 1000, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 12:] = 0
    return {
        "gpt2": (HfLastHidden(gpt2, ["input_ids"]).eval(), (ids,), 128),
        "bert": (HfLastHidden(bert, ["input_ids", "attention_mask"]).eval(), (ids, mask), 128),
    }


def export(name, model, args, batch, seq, out, manifest):
    dims = {0: batch, 1: seq}
    shapes = tuple(dims for _ in args)
    # forward(*args) takes its inputs as one tuple.
    ep = torch.export.export(model, args, dynamic_shapes=(shapes,) if isinstance(model, HfLastHidden) else shapes)
    # Portable like the corpus (compat/aoti/export_fixtures.py): AVX2-class
    # code that runs on any x86-64-v3 CPU, not this machine's -march=native.
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, name + ".pt2"), inductor_configs={
        "aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
        "aot_inductor.enable_line_tables": False})
    with torch.no_grad():
        y = model(*args)
    for i, a in enumerate(args):
        np.save(os.path.join(out, "%s.in%d.npy" % (name, i)), a.numpy())
    np.save(os.path.join(out, name + ".out0.npy"), y.numpy())
    manifest["models"][name] = {"archive": name + ".pt2", "batch": [batch.min, batch.max], "seq": [seq.min, seq.max],
                                "inputs": [list(a.shape) for a in args], "outputs": [list(y.shape)]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    torch.manual_seed(20261125)
    import transformers

    manifest = {"torch": torch.__version__, "transformers": transformers.__version__, "models": {}}
    ids = torch.randint(0, 500, (3, 9))
    mask = (torch.rand(3, 9) > 0.2).float()
    export("ids_mask", IdsMask().eval(), (ids, mask), torch.export.Dim("batch", min=1, max=8),
           torch.export.Dim("seq", min=2, max=64), args.out, manifest)
    manifest["models"]["ids_mask"].update(vocab=500, positions=64)
    for name, (model, inputs, positions) in transformers_models().items():
        export(name, model, inputs, torch.export.Dim("batch", min=1, max=8),
               torch.export.Dim("seq", min=2, max=positions), args.out, manifest)
        manifest["models"][name].update(vocab=1000, positions=positions)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
