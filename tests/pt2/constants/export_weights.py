"""Writes the weights of compat/aoti/export_fixtures.py's models that the
constant-update tests hand back to a package as replacements (row-major
.npy, the values every release's fixture was exported with: the fixtures'
init is torch-version independent). Run with a venv's python that has torch:

    <venv>/bin/python tests/pt2/constants/export_weights.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "compat", "aoti"))

import export_fixtures  # noqa: E402

WANTED = {"convnet_cl": ["conv.weight"]}

for spec in export_fixtures.FIXTURES:
    for param in WANTED.get(spec["name"], []):
        model = export_fixtures.build_model(spec)
        value = dict(model.named_parameters())[param].detach().contiguous().numpy()
        path = os.path.join(HERE, f"{spec['name']}.{param.replace('.', '_')}.npy")
        np.save(path, np.ascontiguousarray(value, dtype=np.float32))
        print(path, value.shape)
