"""A .pt2 that states no shapes (torch 2.6 generates no input checks) served
with a configuration written in full: the backend takes the output shapes
from the configuration, aotrun checks what the model produced against them.

Used by triton_backend_test.py like failure_paths.py: write_models() adds
the models, BAD_MODELS the ones that must not load, check() runs against
the started server.
"""

import os


def corpus(fixtures):
    # The torch 2.6.0 corpus beside the 2.15.0 one the test is given.
    return os.path.join(os.path.dirname(fixtures), "torch-2.6.0")


def _config(out_dims):
    return ('backend: "aotrun"\nmax_batch_size: 8\n'
            'input [{ name: "arg4_1" data_type: TYPE_FP32 dims: [64] }]\n'
            'output [{ name: "output0" data_type: TYPE_FP32 dims: [%s] }]\n' % out_dims)


def write_models(harness, repo, fixtures, libtorch):
    files = {"model.pt2": os.path.join(corpus(fixtures), "mlp.pt2")}
    P = harness.parameters(libtorch=libtorch)
    harness.write_model(repo, "pt26_mlp", _config("16") + P, files)
    harness.write_model(repo, "pt26_wrong_dims", _config("17") + P, files)  # loads; every run is refused
    harness.write_model(repo, "pt26_var", _config("-1") + P, files)


MODELS = ("pt26_mlp", "pt26_wrong_dims")
BAD_MODELS = {"pt26_var": r"output 'output0': dims \[-1\] must all be fixed: the package does not state its shapes"}


def check(http, fixtures, check_that, expect_error):
    import numpy as np
    import tritonclient.http as httpclient

    def infer(model, x):
        i = httpclient.InferInput("arg4_1", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        return http.infer(model, [i]).as_numpy("output0")

    x = np.load(os.path.join(corpus(fixtures), "mlp.in0.npy"))
    want = np.load(os.path.join(corpus(fixtures), "mlp.out0.npy"))
    got = infer("pt26_mlp", x)
    check_that(got is not None and got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-5),
               "pt26_mlp: output differs from torch's reference", None if got is None else got.shape)
    msg = expect_error(lambda: infer("pt26_wrong_dims", x),
                       r"aotrun: PACKAGE: .*output 0 \('output0'\): the model returned \[4, 16\].*given is \[4, 17\]",
                       "pt26_wrong_dims")
    got = infer("pt26_mlp", x[:2])
    check_that(got is not None and np.allclose(got, want[:2], rtol=1e-5, atol=1e-5), "pt26_mlp: 2 rows", got)
    print("ok: torch 2.6 .pt2 without specs: outputs shaped from the config match torch's reference;"
          " a wrong config dim is refused after the run:", msg.splitlines()[0][-110:])
