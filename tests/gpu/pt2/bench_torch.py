"""PyTorch's own figures for the CUDA fixtures, to set beside aotrun's
(pt2_shim_cuda_tests and pt2_runner_cuda_tests print theirs): per fixture
and case, microseconds per call, batch as exported, of
  (c) torch.compile(mode="reduce-overhead") of the eager module
  (d) eager PyTorch
(PyTorch's own loader of the .pt2, (a) and (b): bench_torch_aoti.py.)

    python3 tests/gpu/pt2/bench_torch.py FIXTURES_DIR NAME...
"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import export_cuda_fixtures as fx  # noqa: E402


def per_call_us(fn, iters=200):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    d = sys.argv[1]
    for name in sys.argv[2:]:
        torch.manual_seed(0)
        model, _, _, _ = fx.spec(name)
        model = model.to("cuda").eval()
        compiled = torch.compile(model, mode="reduce-overhead")
        k = 0
        while os.path.exists(os.path.join(d, f"{name}.s{k}.in0.npy")):
            ins, i = [], 0
            while os.path.exists(os.path.join(d, f"{name}.s{k}.in{i}.npy")):
                ins.append(torch.from_numpy(np.load(os.path.join(d, f"{name}.s{k}.in{i}.npy"))).cuda())
                i += 1
            with torch.no_grad():
                e = per_call_us(lambda: model(*ins))
                c = per_call_us(lambda: compiled(*ins))
            print(f"[ torch    ] {name} case {k} {list(ins[0].shape)}: "
                  f"torch.compile reduce-overhead {c:.1f} us, eager {e:.1f} us", flush=True)
            k += 1


if __name__ == "__main__":
    main()
