"""Exports the CUDA .pt2 fixtures of the GPU suite (issue #27) with the torch
of the GPU machine (2.11, CUDA 13), random weights, and eager references.

    python3 tests/gpu/pt2/export_cuda_fixtures.py OUT_DIR [NAME ...]

Each fixture NAME writes into OUT_DIR:
  NAME.pt2                  the AOTInductor package (device "cuda")
  NAME.s<k>.in<i>.npy       inputs of case k (one case per shape)
  NAME.s<k>.out<j>.npy      eager PyTorch's outputs for them (on the GPU)
  NAME.json                 torch version, shapes per case, export options,
                            export seconds
Fixtures:
  mlp         Linear-GELU-Linear, x [8, 64] float32 (mm/addmm fallbacks)
  block       a pre-norm transformer block, x [1, seq 2..128, 64] with
              F.scaled_dot_product_attention (causal): the fused attention
              fallback
  block_math  the same block exported under SDPBackend.MATH: attention as
              matmuls and a softmax (bmm fallbacks), no fused kernel
  convnet     conv-BN-ReLU-conv-ReLU-pool-linear, x [2, 3, 32, 32] (the
              convolution fallback)
  llama       transformers' LlamaForCausalLM (2 layers, width 64, 4 heads,
              2 key/value heads, vocabulary 1000), input_ids [1, seq 2..64]
Runs each fixture in its own process when several are named (in parallel).
"""
import faulthandler
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

faulthandler.enable()
torch.manual_seed(0)
DEV = "cuda"


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 256)
        self.fc2 = torch.nn.Linear(256, 64)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Block(torch.nn.Module):
    def __init__(self, width=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(w, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, w // self.heads).transpose(1, 2) for t in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, w))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.c1(x)))
        x = torch.relu(self.c2(x))
        return self.fc(x.mean((2, 3)))


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False, return_dict=False)[0]


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return Logits(LlamaForCausalLM(cfg))


def spec(name):
    """(module, example inputs per case, dynamic_shapes, context)"""
    seq = torch.export.Dim("seq", min=2, max=128)
    if name == "mlp":
        return MLP(), [[torch.randn(8, 64)]], None, None
    if name in ("block", "block_math"):
        ctx = None
        if name == "block_math":
            from torch.nn.attention import SDPBackend, sdpa_kernel
            ctx = lambda: sdpa_kernel(SDPBackend.MATH)
        return Block(), [[torch.randn(1, n, 64)] for n in (16, 37, 128)], ({1: seq},), ctx
    if name == "convnet":
        m = ConvNet()
        with torch.no_grad():
            m.bn.running_mean.uniform_(-0.5, 0.5)
            m.bn.running_var.uniform_(0.5, 2.0)
        return m, [[torch.randn(2, 3, 32, 32)]], None, None
    if name == "llama":
        # transformers' Llama pads the sequence to a multiple of 8 for its
        # mask: export asks for seq = 8 * k.
        s = 8 * torch.export.Dim("k", min=1, max=8)
        return llama(), [[torch.randint(0, 1000, (1, n))] for n in (16, 40, 64)], ({1: s},), None
    raise SystemExit(f"unknown fixture {name}")


def export_one(name, out):
    import contextlib

    model, cases, dyn, ctx = spec(name)
    model = model.to(DEV).eval()
    cases = [[t.to(DEV) for t in c] for c in cases]
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(),
            "cases": []}
    with torch.no_grad(), (ctx() if ctx else contextlib.nullcontext()):
        t0 = time.time()
        ep = torch.export.export(model, tuple(cases[0]), dynamic_shapes=dyn)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, name + ".pt2"))
        meta["export_seconds"] = round(time.time() - t0, 1)
        refs = []
        for k, c in enumerate(cases):
            ref = model(*c)
            ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
            refs.append(ref)
            for i, t in enumerate(c):
                np.save(os.path.join(out, f"{name}.s{k}.in{i}.npy"), t.cpu().numpy())
            for j, t in enumerate(ref):
                np.save(os.path.join(out, f"{name}.s{k}.out{j}.npy"), t.float().cpu().numpy())
            meta["cases"].append({"inputs": [list(t.shape) for t in c], "outputs": [list(t.shape) for t in ref]})
        torch.cuda.synchronize()
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{name}: exported in {meta['export_seconds']} s", flush=True)
    # Inductor's compile workers can crash the interpreter at exit: the
    # fixture is complete, so leave without running that teardown.
    sys.stdout.flush()
    os._exit(0)


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or ["mlp", "block", "block_math", "convnet", "llama"]
    os.makedirs(out, exist_ok=True)
    if len(names) == 1:
        export_one(names[0], out)
        return
    procs = {n: subprocess.Popen([sys.executable, __file__, out, n]) for n in names}
    bad = [f"{n} (exit {p.wait()})" for n, p in procs.items() if p.wait() != 0]
    if bad:
        raise SystemExit("export failed: " + ", ".join(bad))


if __name__ == "__main__":
    main()
