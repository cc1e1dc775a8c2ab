"""Builds the benchmark tier at real sizes of issue #41 ("a benchmark tier at
real sizes"): twelve .pt2 packages, their inputs, eager references and the
matching ONNX models, from fixed seeds (random weights: no model hub), into a
directory outside the repository, for `compare.py bench --tier real`.

The models, static shapes (the size is the one measured), float32:

  resnet18            torchvision resnet18(), 1000 classes, x [2, 3, 224, 224]
  mobilenet_v3        torchvision mobilenet_v3_small(), 1000 classes, model and
                      x [3, 3, 224, 224] in torch.channels_last
  gpt2                transformers GPT2LMHeadModel (width 256, 3 layers, 4
                      heads, vocabulary 5,000, 128 positions, no cache,
                      bos/eos tokens 1 and 2),
                      input_ids and attention_mask [1, 16] -> logits
  llama               transformers LlamaForCausalLM (width 256, 2 layers, 4
                      query heads and 2 key/value heads, intermediate 704,
                      vocabulary 5,000, 128 positions, no cache), input_ids
                      and attention_mask [1, 33] -> logits
  vit                 timm vit_tiny_patch16_224 (width 192, 12 layers), 1000
                      classes, x [2, 3, 224, 224]
  bert                transformers BertModel (width 128, 2 layers, 2 heads,
                      intermediate 512, vocabulary 5,000, 128 positions),
                      input_ids and attention_mask [2, 16] ->
                      last_hidden_state, pooler_output
  resnet18_frozen     resnet18 above (same weights), compiled with
                      torch._inductor.config.freezing = True (PyTorch's CPU
                      inference recipe, as tests/pt2/frozen/export_frozen.py:
                      BatchNorm folded, oneDNN fused convolutions, packed
                      weights)
  mobilenet_v3_frozen mobilenet_v3 above (same weights), frozen likewise
  gpt2_frozen, llama_frozen, vit_frozen, bert_frozen
                      the transformers above (same weights), frozen
                      likewise: their linears become _linear_pointwise with
                      weights packed in oneDNN's layout, gelus fused in

Larger models, built only when named with --only (into their own --out, so
that the tier's default run stays the twelve above), all frozen:

  resnet50_frozen     torchvision resnet50(), 1000 classes, x [1, 3, 224, 224]
  bert_base_frozen    transformers BertModel (width 768, 4 layers, 12 heads,
                      intermediate 3,072, vocabulary 5,000, 256 positions),
                      input_ids and attention_mask [1, 128]
  gpt2_s128_frozen    gpt2 above at 128 tokens: input_ids and attention_mask
                      [1, 128] -> logits

BatchNorm statistics are not left at their initial values (mean 0, var 1):
a few training-mode passes over random batches set them, so activations
stay of ordinary scale through the network. Every .pt2 is compiled with
package_constants_in_so and no line tables, for this host's CPU as a user
exporting here gets it (AVX-512 code where the CPU has it; the manifest
notes the flags it needs, and compare.py refuses it on a host without
them), or with --isa avx2 as the zoo's are (tests/pt2/zoo/export_zoo.py:
cpp.simdlen 256, cpp.march x86-64-v3: any AVX2 host, and what compare.py
--as-avx2-host needs). The frozen model and its unfrozen twin share one
ONNX model (ORT does its own folding).

Layout written (OUT default ~/.cache/aotrun/bench-real; nothing here is
committed, the packages are tens of MB):

  OUT/zoo/NAME.pt2, NAME.in<i>.npy (row-major), NAME.out<k>.npy (eager
      PyTorch outputs), manifest.json (the subset of tests/pt2/zoo's
      manifest format that compare.py reads, plus "bench_sizes": the
      models and their sizes, and "bench_tol" per model)
  OUT/onnx/NAME.onnx, NAME.torch_eager.npz, NAME.export.txt (how exported)

Needs torch 2.15, torchvision, timm, transformers, onnx and onnxscript
(bench/ort/README.md). Then compare.py measures it:

  /tmp/tv/bin/python bench/ort/real_tier.py [--out OUT] [--only NAME ...]
  python bench/ort/compare.py bench --tier real [--zoo OUT/zoo --models-dir OUT/onnx] ...
"""
import argparse
import json
import os
import re
import shutil
import sys
import time
import zipfile

import numpy as np
import torch

from compare import host_flags  # this directory's compare.py: the same flags it checks exports against

SEED = 20261129
DEFAULT_OUT = os.path.join(os.path.expanduser("~"), ".cache", "aotrun", "bench-real")
CONFIGS = {"aot_inductor.package_constants_in_so": True, "aot_inductor.enable_line_tables": False}
# --isa avx2: the zoo's portable code (runs on any x86-64-v3 host, and under
# compare.py --as-avx2-host). The default, native, is what a user exporting
# on this host gets: Inductor's choice for this CPU (AVX-512 where it has it).
AVX2_CONFIGS = {"cpp.simdlen": 256, "cpp.march": "x86-64-v3"}
# The flags of /proc/cpuinfo a native export may depend on (compare.py
# refuses to run it on a host without all of them).
NATIVE_FLAGS = ("avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl",
                "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16")


# Tolerances of compare.py's check (ORT and aotrun against eager): allclose
# with atol = ATOL_REL x max |eager output|. Real depths and widths add
# float32 reassociation errors that the zoo's 1e-5 absolute does not allow.
RTOL, ATOL_REL = 1e-3, 1e-4

# name: (sizes, builder name, frozen, channels_last)
MODELS = {
    "resnet18": ({"batch": 2}, "resnet18", False, False),
    "mobilenet_v3": ({"batch": 3}, "mobilenet_v3", False, True),
    "gpt2": ({"batch": 1, "seq": 16}, "gpt2", False, False),
    "llama": ({"batch": 1, "seq": 33}, "llama", False, False),
    "vit": ({"batch": 2}, "vit", False, False),
    "bert": ({"batch": 2, "seq": 16}, "bert", False, False),
    "resnet18_frozen": ({"batch": 2}, "resnet18", True, False),
    "mobilenet_v3_frozen": ({"batch": 3}, "mobilenet_v3", True, True),
    "gpt2_frozen": ({"batch": 1, "seq": 16}, "gpt2", True, False),
    "llama_frozen": ({"batch": 1, "seq": 33}, "llama", True, False),
    "vit_frozen": ({"batch": 2}, "vit", True, False),
    "bert_frozen": ({"batch": 2, "seq": 16}, "bert", True, False),
}
LARGER = {
    "resnet50_frozen": ({"batch": 1}, "resnet50", True, False),
    "bert_base_frozen": ({"batch": 1, "seq": 128}, "bert_base", True, False),
    "gpt2_s128_frozen": ({"batch": 1, "seq": 128}, "gpt2", True, False),
}


class LM(torch.nn.Module):
    """A transformers model called with positional input_ids and
    attention_mask, its outputs as a flat tuple."""

    def __init__(self, inner, outputs):
        super().__init__()
        self.inner = inner
        self.outputs = outputs

    def forward(self, input_ids, attention_mask):
        y = self.inner(input_ids=input_ids, attention_mask=attention_mask)
        return tuple(y[k] for k in self.outputs)


def calibrate_bn(model, shape, channels_last):
    """Running statistics of every BatchNorm from a few random batches."""
    gen = torch.Generator().manual_seed(SEED + 1)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None  # cumulative average
    model.train()
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(8, *shape[1:], generator=gen)
            model(x.to(memory_format=torch.channels_last) if channels_last else x)
    return model.eval()


def tokens(gen, batch, seq, vocab):
    ids = torch.randint(0, vocab, (batch, seq), generator=gen, dtype=torch.int64)
    return {"input_ids": ids, "attention_mask": torch.ones(batch, seq, dtype=torch.int64)}


def build(kind, sizes):
    """(model in eval mode, ordered dict of inputs, output names), weights
    from torch.manual_seed(SEED), inputs from a generator seeded SEED + 2."""
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 2)
    if kind in ("resnet18", "resnet50", "mobilenet_v3", "vit"):
        shape = (sizes["batch"], 3, 224, 224)
        if kind in ("resnet18", "resnet50"):
            import torchvision
            model = calibrate_bn(getattr(torchvision.models, kind)(), shape, False)
        elif kind == "mobilenet_v3":
            import torchvision
            model = torchvision.models.mobilenet_v3_small().to(memory_format=torch.channels_last)
            model = calibrate_bn(model, shape, True)
        else:
            import timm
            model = timm.create_model("vit_tiny_patch16_224", pretrained=False).eval()
        x = torch.randn(*shape, generator=gen)
        if kind == "mobilenet_v3":
            x = x.to(memory_format=torch.channels_last)
        return model, {"x": x}, ["logits"]
    import transformers as tf
    if kind == "gpt2":
        cfg = tf.GPT2Config(vocab_size=5000, n_embd=256, n_layer=3, n_head=4, n_positions=128, bos_token_id=1,
                            eos_token_id=2, use_cache=False)
        model, outs = tf.GPT2LMHeadModel(cfg), ["logits"]
    elif kind == "llama":
        cfg = tf.LlamaConfig(vocab_size=5000, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                             num_key_value_heads=2, intermediate_size=704, max_position_embeddings=128,
                             use_cache=False)
        model, outs = tf.LlamaForCausalLM(cfg), ["logits"]
    elif kind == "bert_base":
        cfg = tf.BertConfig(vocab_size=5000, hidden_size=768, num_hidden_layers=4, num_attention_heads=12,
                            intermediate_size=3072, max_position_embeddings=256)
        model, outs = tf.BertModel(cfg), ["last_hidden_state", "pooler_output"]
    elif kind == "bert":
        cfg = tf.BertConfig(vocab_size=5000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=512, max_position_embeddings=128)
        model, outs = tf.BertModel(cfg), ["last_hidden_state", "pooler_output"]
    else:
        raise KeyError(kind)
    return LM(model.eval(), outs).eval(), tokens(gen, sizes["batch"], sizes["seq"], 5000), outs


def wrapper_names(pt2):
    """Input and output placeholder names, from the archive's wrapper."""
    with zipfile.ZipFile(pt2) as z:
        src = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    return (re.findall(r'inputs_info_\[\d+\]\.name = "([^"]+)"', src),
            re.findall(r'outputs_info_\[\d+\]\.name = "([^"]+)"', src))


def export_pt2(model, inputs, path, frozen, isa):
    import torch._inductor.config as inductor_config
    configs = dict(CONFIGS, **(AVX2_CONFIGS if isa == "avx2" else {}))
    with torch.no_grad():
        ep = torch.export.export(model, tuple(inputs.values()))
        with inductor_config.patch(freezing=frozen):
            torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs=configs)


def export_onnx(model, inputs, outs, path):
    """The dynamo exporter first (opset 20, optimised, one file), the legacy
    one (opset 17) if it fails; returns a line saying which."""
    errors = []
    for dynamo in (True, False):
        try:
            kw = dict(dynamo=True, optimize=True, external_data=False) if dynamo else dict(dynamo=False,
                                                                                              opset_version=17)
            with torch.no_grad():
                torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs), output_names=outs,
                                  **kw)
            return "torch.onnx.export(%s)%s" % (", ".join("%s=%s" % kv for kv in kw.items()),
                                                ("; tried first: " + " | ".join(errors)) if errors else "")
        except Exception as e:  # noqa: BLE001 - report and try the other exporter
            errors.append("%s: %s: %s" % ("dynamo" if dynamo else "legacy", type(e).__name__,
                                          str(e).splitlines()[0][:300] if str(e) else ""))
    raise RuntimeError("ONNX export failed: " + " | ".join(errors))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", nargs="*", default=list(MODELS), choices=list(MODELS) + list(LARGER))
    ap.add_argument("--no-onnx", action="store_true", help="the .pt2 packages and references only")
    ap.add_argument("--isa", choices=("native", "avx2"), default="native",
                    help="native: Inductor's code for this CPU, as a user exporting here gets (default); avx2: "
                    "the zoo's portable x86-64-v3 code, for any host and for compare.py --as-avx2-host")
    args = ap.parse_args()
    zoo, onnx_dir = os.path.join(args.out, "zoo"), os.path.join(args.out, "onnx")
    os.makedirs(zoo, exist_ok=True)
    os.makedirs(onnx_dir, exist_ok=True)
    mpath = os.path.join(zoo, "manifest.json")
    man = {"models": {}, "bench_sizes": {}}
    if os.path.exists(mpath):
        with open(mpath) as f:
            man = json.load(f)
    import torchvision
    versions = {"torch": torch.__version__, "torchvision": torchvision.__version__}
    for mod in ("timm", "transformers", "onnx", "onnxscript"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            pass
    man["versions"] = versions
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    for name in args.only:
        sizes, kind, frozen, channels_last = MODELS[name] if name in MODELS else LARGER[name]
        t0 = time.time()
        model, inputs, outs = build(kind, sizes)
        with torch.no_grad():
            eager = model(*inputs.values())
        eager = [eager] if isinstance(eager, torch.Tensor) else list(eager)
        pt2 = os.path.join(zoo, name + ".pt2")
        export_pt2(model, inputs, pt2, frozen, args.isa)
        placeholders, out_placeholders = wrapper_names(pt2)
        assert len(placeholders) == len(inputs) and len(out_placeholders) == len(eager), (placeholders,
                                                                                         out_placeholders)
        entry = {"archive": name + ".pt2", "archive_bytes": os.path.getsize(pt2),
                 "source": "%s%s%s" % (kind, " (frozen: freezing=True)" if frozen else "",
                                       ", channels_last" if channels_last else ""),
                 "versions": versions, "dims": {}, "inputs": [], "outputs": [],
                 "export": {"isa": args.isa, "needs": sorted(host_flags() & set(NATIVE_FLAGS))
                            if args.isa == "native" else ["avx2", "fma"]},
                 "cases": [{"sizes": sizes, "expect": "run", "outputs": [list(t.shape) for t in eager]}]}
        for i, ((k, t), ph) in enumerate(zip(inputs.items(), placeholders)):
            f = "%s.in%d.npy" % (name, i)
            np.save(os.path.join(zoo, f), np.ascontiguousarray(t.numpy()))
            entry["inputs"].append({"name": k, "placeholder": ph, "file": f, "dtype": str(t.dtype)[6:],
                                    "shape": list(t.shape), "dims": {},
                                    "layout": "channels_last" if channels_last and t.dim() == 4 else "contiguous"})
        tol = []
        for k, (o, t, ph) in enumerate(zip(outs, eager, out_placeholders)):
            f = "%s.out%d.npy" % (name, k)
            a = np.ascontiguousarray(t.contiguous().numpy())
            np.save(os.path.join(zoo, f), a.reshape(-1))
            entry["outputs"].append({"name": o, "placeholder": ph, "file": f, "dtype": str(t.dtype)[6:],
                                     "shape": list(t.shape)})
            tol.append([RTOL, ATOL_REL * float(np.abs(a).max())])
        entry["bench_tol"] = tol
        man["models"][name] = entry
        man["bench_sizes"][name] = sizes
        line = "%s: %s, %d bytes" % (name, pt2, os.path.getsize(pt2))
        if not args.no_onnx:
            onnx_path = os.path.join(onnx_dir, name + ".onnx")
            twin = name[:-len("_frozen")] if frozen else None
            if twin and os.path.exists(os.path.join(onnx_dir, twin + ".onnx")) and twin in man["models"]:
                # the same weights (same builder and seed): the twin's model
                shutil.copyfile(os.path.join(onnx_dir, twin + ".onnx"), onnx_path)
                how = "copy of %s.onnx (same weights)" % twin
            else:
                how = export_onnx(model, inputs, outs, onnx_path)
            np.savez(os.path.join(onnx_dir, name + ".torch_eager.npz"),
                     **{o: t.contiguous().numpy() for o, t in zip(outs, eager)})
            with open(os.path.join(onnx_dir, name + ".export.txt"), "w") as f:
                f.write("%s\ntorch %s\n" % (how, torch.__version__))
            line += "; %s (%d bytes): %s" % (onnx_path, os.path.getsize(onnx_path), how)
        # written after each model: a run cut short keeps what it made
        with open(mpath, "w") as f:
            json.dump(man, f, indent=1)
        print("%s [%.0f s]" % (line, time.time() - t0), flush=True)
    print("manifest: %s" % mpath)
    return 0


if __name__ == "__main__":
    sys.exit(main())
