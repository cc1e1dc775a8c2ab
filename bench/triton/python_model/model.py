"""Triton Python-backend model that runs the aotrun MLP package through
ctypes (bench/triton/aotrun_ctypes.py): what serving an aotrun package on
Triton looks like without the aotrun backend. Parameters (config.pbtxt):
package, libaotrun, bench_dir (where aotrun_ctypes.py is)."""

import json
import sys

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        params = {k: v["string_value"] for k, v in json.loads(args["model_config"])["parameters"].items()}
        sys.path.insert(0, params["bench_dir"])
        import aotrun_ctypes
        self.runner = aotrun_ctypes.Runner(params["libaotrun"], params["package"], "single_threaded")

    def execute(self, requests):
        # Stack the batch the dynamic batcher formed, run once, split back:
        # the same work the aotrun backend does in C++.
        xs = [pb_utils.get_input_tensor_by_name(r, "x").as_numpy() for r in requests]
        y = self.runner(np.concatenate(xs))
        out, at = [], 0
        for x in xs:
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", y[at:at + len(x)])]))
            at += len(x)
        return out

    def finalize(self):
        self.runner.close()
