"""Exports the MLP of export_fixtures.py with its constants kept outside the
model library, in every form the running torch writes (config.aot_inductor):

  mlp_blob.pt2     package_constants_in_so=False,                  2.10+
                   package_constants_on_disk_format="binary_blob"
  mlp_pickle.pt2   package_constants_in_so=False,                  2.10+
                   package_constants_on_disk_format="pickle_weights"
                   or package_constants_on_disk=True               2.8, 2.9
  mlp_no_disk.pt2  package_constants_in_so=False (no on-disk format)

and writes the input and eager output beside them (input.arg4_1.npy,
reference/output0.npy: the names `aotrun check --input arg4_1=... --reference`
reads). Each archive is exported in a child process and then loaded
with torch._inductor.aoti_load_package in another, recording whether
PyTorch's own loader runs it (it crashes on the pickled form and no_disk:
SIGSEGV in the first run), and the pickled one also with Python's
load_pt2(load_weights_from_disk=True), the one loader of that form. Run
with a venv's python:

    <venv>/bin/python compat/aoti/export_external_constants.py
"""
import json
import os
import subprocess
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "external_constants")
FORMATS_2_8 = {  # torch 2.8 and 2.9: one switch, the pickled form
    "pickle": {"aot_inductor.package_constants_in_so": False,
               "aot_inductor.package_constants_on_disk": True},
    "no_disk": {"aot_inductor.package_constants_in_so": False},
}
FORMATS_2_10 = {
    "blob": {"aot_inductor.package_constants_in_so": False,
             "aot_inductor.package_constants_on_disk_format": "binary_blob"},
    "pickle": {"aot_inductor.package_constants_in_so": False,
               "aot_inductor.package_constants_on_disk_format": "pickle_weights"},
    "no_disk": {"aot_inductor.package_constants_in_so": False},
}


def formats():
    import torch
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    return FORMATS_2_10 if (major, minor) >= (2, 10) else FORMATS_2_8


def model_and_input():
    import torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(64, 128)
            self.l2 = torch.nn.Linear(128, 16)

        def forward(self, x):
            return self.l2(torch.relu(self.l1(x)))

    m = MLP().eval()
    rng = np.random.default_rng(7)  # numpy's generator: the same weights for every torch
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.1).astype(np.float32)))
    x = torch.from_numpy(rng.standard_normal((4, 64)).astype(np.float32))
    return m, x


def export(fmt, out_dir):
    import torch
    m, x = model_and_input()
    ep = torch.export.export(m, (x,))
    torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(out_dir, f"mlp_{fmt}.pt2"), inductor_configs=formats()[fmt])


def load(fmt, out_dir):
    import torch
    m, x = model_and_input()
    runner = torch._inductor.aoti_load_package(os.path.join(out_dir, f"mlp_{fmt}.pt2"))
    diff = float((runner(x) - m(x)).abs().max())
    print(json.dumps({"max_abs_diff": diff}))


def load_from_disk(fmt, out_dir):
    # The only PyTorch loader of pickled weights: Python's load_pt2, which
    # torch.loads each weight file and hands the views to load_constants.
    from torch.export.pt2_archive._package import load_pt2
    m, x = model_and_input()
    contents = load_pt2(os.path.join(out_dir, f"mlp_{fmt}.pt2"), load_weights_from_disk=True)
    diff = float((contents.aoti_runners["model"](x) - m(x)).abs().max())
    print(json.dumps({"max_abs_diff": diff}))


def child(mode, fmt, out_dir):
    r = subprocess.run([sys.executable, __file__, mode, fmt, out_dir], capture_output=True, text=True)
    if r.returncode == 0:
        return json.loads(r.stdout.strip().splitlines()[-1])
    return {"returncode": r.returncode}


def main():
    if len(sys.argv) == 4:
        {"export": export, "load": load, "load_from_disk": load_from_disk}[sys.argv[1]](sys.argv[2], sys.argv[3])
        return
    import torch
    out_dir = os.path.join(OUT, "torch-" + torch.__version__.split("+")[0])
    os.makedirs(out_dir, exist_ok=True)
    m, x = model_and_input()
    os.makedirs(os.path.join(out_dir, "reference"), exist_ok=True)
    np.save(os.path.join(out_dir, "input.arg4_1.npy"), x.numpy())
    np.save(os.path.join(out_dir, "reference", "output0.npy"), m(x).detach().numpy())
    manifest = {"torch": torch.__version__, "formats": {}}
    for fmt, cfg in formats().items():
        subprocess.run([sys.executable, __file__, "export", fmt, out_dir], check=True)
        record = {"inductor_configs": cfg, "aoti_load_package": child("load", fmt, out_dir)}
        if fmt == "pickle":
            record["load_pt2_load_weights_from_disk"] = child("load_from_disk", fmt, out_dir)
        manifest["formats"][fmt] = record
        print(fmt, record)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main()
