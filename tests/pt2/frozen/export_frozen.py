"""Exports the frozen models of tests/pt2/frozen_test.cpp (issue #38):
PyTorch's CPU inference recipe, torch._inductor.config.freezing = True, with
the torch of the venv that runs it, random weights (fixed seed) and eager
references. Freezing folds BatchNorm into the convolutions, fuses
activations and residual adds into oneDNN ops (aoti_torch_cpu__linear_pointwise,
aoti_torch_cpu_mkldnn__convolution_pointwise and its binary forms) and, where
the shapes allow, stores weights packed in oneDNN's blocked layout
(mkldnn-layout constants); docs/FROZEN_EXPORTS.md.

  mlp.pt2         Linear(64,256)+GELU, Linear(256,64) + residual, ReLU,
                  Linear(64,16) on x [batch 2..16, 64]: linear weights packed
                  (mkldnn), _linear_pointwise with gelu and _linear_pointwise_binary.
  cbr_cl.pt2      Conv-BN-ReLU x2 (the second stride 2) + 1x1 conv + SiLU on a
                  channels_last x [2, 3, 32, 32]: every conv weight packed.
  resnet.pt2      a ResNet-style net built from torchvision's BasicBlock
                  (widths 16/32/64/128, one block each, a 7x7 stem and max
                  pool, BN with random statistics) at 64x64, batch 2..4:
                  conv weights stay plain (channels_last) with a dynamic
                  batch, the fc weight is packed; residual adds fused in
                  place (_convolution_pointwise_binary_).
  resnet_static.pt2  the same net at a static batch 2: every weight packed.
  acts.pt2        the attr vocabulary: leaky_relu, hardtanh, conv - y
                  (binary sub), grouped conv + sigmoid, gelu(tanh), hardswish,
                  linear binary sub, on x [2, 8, 16, 16].
  upconv.pt2      ConvTranspose2d(16, 8, 4, stride 2, padding 1) + Hardswish
                  on x [2, 16, 8, 8]: a packed transposed-convolution weight.
  mobilenet.pt2   torchvision's mobilenet_v3_small(width_mult=0.5,
                  num_classes=10), BN with random statistics, on a
                  channels_last x [2, 3, 64, 64] (static batch): depthwise
                  convolutions, hardswish, squeeze-excitation with
                  hardsigmoid, every weight packed.
  lstm.pt2        a tagger: 2-layer bidirectional LSTM(24, 32, batch_first)
                  and Linear(64, 5) on x [2, 12, 24] (static shapes): four
                  aoti_torch_cpu_mkldnn_rnn_layer calls (one per layer and
                  direction, the weights packed) and the head; outputs the
                  logits and h_n.

Each MODEL.pt2 comes with MODEL.in0.npy / MODEL.out0.npy (eager outputs for
the example input; inputs saved row-major, "memory_format" in the manifest
says which were compiled channels_last) and, for the dynamic ones,
MODEL.s<i>.in0.npy / .out0.npy at the other sizes the test runs;
manifest.json records the torch version and what each file holds.

    /path/to/venv/bin/python tests/pt2/frozen/export_frozen.py [--out DIR] [--only NAME...]
"""
import argparse
import json
import os

import numpy as np
import torch
import torch._inductor.config as inductor_config
from torch import nn
from torch.export import Dim

CONFIGS = {"aot_inductor.package_constants_in_so": True, "cpp.simdlen": 256, "cpp.march": "x86-64-v3",
           "aot_inductor.enable_line_tables": False}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.act, self.l2, self.l3 = nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64), nn.Linear(64, 16)

    def forward(self, x):
        return self.l3(torch.relu(self.l2(self.act(self.l1(x))) + x))


class CBR(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32)
        self.c2, self.b2 = nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(64)
        self.c3, self.act = nn.Conv2d(64, 64, 1), nn.SiLU()

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        return self.act(self.c3(y))


class SmallResNet(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), classes=10):
        super().__init__()
        from torchvision.models.resnet import BasicBlock
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2, padding=1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or cin != w:
                down = nn.Sequential(nn.Conv2d(cin, w, 1, stride=stride, bias=False), nn.BatchNorm2d(w))
            blocks.append(BasicBlock(cin, w, stride, down))
            cin = w
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class Acts(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(8, 16, 3, padding=1), nn.Conv2d(16, 16, 3, padding=1), nn.Conv2d(16, 16, 1)
        self.c4, self.c5 = nn.Conv2d(16, 16, 3, padding=1, groups=4), nn.Conv2d(16, 16, 1)
        self.l1, self.l2, self.l3, self.l4 = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 32), nn.Linear(32, 32)

    def forward(self, x):
        f = nn.functional
        y = f.leaky_relu(self.c1(x), 0.2)
        y = f.hardtanh(self.c2(y), 0.0, 6.0)
        z = self.c3(y) - y
        z = torch.sigmoid(self.c4(z))
        z = torch.tanh(self.c5(z) + z)
        v = z.mean((2, 3))
        v = f.gelu(self.l1(v), approximate="tanh")
        v = f.hardswish(self.l2(v))
        v = self.l3(v) - v
        return f.leaky_relu(self.l4(v), 0.1)


class UpConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.t, self.a = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.Hardswish()

    def forward(self, x):
        return self.a(self.t(x))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.head = nn.LSTM(24, 32, num_layers=2, bidirectional=True, batch_first=True), nn.Linear(64, 5)

    def forward(self, x):
        y, (h, _) = self.rnn(x)
        return self.head(y), h


def randomize_bn(m):
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    return m


def export(out, name, model, example, dynamic_shapes, sweeps, manifest, channels_last=False):
    model = model.eval()
    inductor_config.freezing = True
    with torch.no_grad():
        ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, name + ".pt2"),
                                                 inductor_configs=CONFIGS)
    entry = {"inputs": [list(t.shape) for t in example], "cases": [],
             "memory_format": ["channels_last" if channels_last else "contiguous" for _ in example]}
    with torch.no_grad():
        for i, inputs in enumerate([example] + sweeps):
            prefix = name if i == 0 else f"{name}.s{i}"
            outs = model(*inputs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for k, t in enumerate(inputs):
                np.save(os.path.join(out, f"{prefix}.in{k}.npy"), np.ascontiguousarray(t.numpy()))
            for k, t in enumerate(outs):
                np.save(os.path.join(out, f"{prefix}.out{k}.npy"), np.ascontiguousarray(t.contiguous().numpy()))
            entry["cases"].append({"prefix": prefix, "inputs": [list(t.shape) for t in inputs],
                                   "outputs": [list(t.shape) for t in outs]})
    manifest[name] = entry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    out = args.out
    path = os.path.join(out, "manifest.json")
    manifest = {}
    if args.only and os.path.exists(path):
        with open(path) as f:
            manifest = json.load(f)
    manifest["torch"] = torch.__version__

    def want(name):
        return not args.only or name in args.only

    cl = torch.channels_last
    torch.manual_seed(20261129)
    if want("mlp"):
        export(out, "mlp", MLP(), (torch.randn(4, 64),), {"x": {0: Dim("batch", min=2, max=16)}},
               [(torch.randn(2, 64),), (torch.randn(16, 64),), (torch.randn(7, 64),)], manifest)
    torch.manual_seed(20261130)
    if want("cbr_cl"):
        export(out, "cbr_cl", randomize_bn(CBR()), (torch.randn(2, 3, 32, 32).to(memory_format=cl),), None, [],
               manifest, channels_last=True)
    torch.manual_seed(20261131)
    if want("resnet"):
        export(out, "resnet", randomize_bn(SmallResNet()), (torch.randn(2, 3, 64, 64),),
               {"x": {0: Dim("batch", min=2, max=4)}}, [(torch.randn(3, 3, 64, 64),), (torch.randn(4, 3, 64, 64),)],
               manifest)
    torch.manual_seed(20261131)  # the same weights
    if want("resnet_static"):
        export(out, "resnet_static", randomize_bn(SmallResNet()), (torch.randn(2, 3, 64, 64),), None, [], manifest)
    torch.manual_seed(20261132)
    if want("acts"):
        export(out, "acts", Acts(), (torch.randn(2, 8, 16, 16),), None, [], manifest)
    torch.manual_seed(20261133)
    if want("upconv"):
        export(out, "upconv", UpConv(), (torch.randn(2, 16, 8, 8),), None, [], manifest)

    torch.manual_seed(20261134)
    if want("mobilenet"):
        from torchvision.models import mobilenet_v3_small

        net = randomize_bn(mobilenet_v3_small(width_mult=0.5, num_classes=10)).to(memory_format=cl)
        export(out, "mobilenet", net, (torch.randn(2, 3, 64, 64).to(memory_format=cl),), None, [], manifest,
               channels_last=True)

    torch.manual_seed(20261135)
    if want("lstm"):
        export(out, "lstm", Tagger(), (torch.randn(2, 12, 24),), None, [], manifest)

    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
