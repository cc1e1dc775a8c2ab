"""PyTorch's own loader of a CUDA fixture's .pt2, the baselines of issue #27:
  (a) torch._inductor.aoti_load_package(path)(*inputs)
  (b) PR #148601's recipe: aoti_load_package(path, run_single_threaded=True)
      captured into torch.cuda.graph, timed per replay
each checked against the eager references first, microseconds per call.
Its own process (bench_torch.py runs torch.compile): a crash of PyTorch's
loader, seen on the GPU machine (SIGSEGV in _load_aoti), loses nothing else,
and faulthandler prints where it happened. AOTRUN_BENCH_CONTAINER_RUNNER=1
runs the extracted model library (FIXTURES_DIR/NAME/) through PyTorch's
AOTIModelContainerRunnerCuda instead, the runner that loader wraps.

    python3 tests/gpu/pt2/bench_torch_aoti.py FIXTURES_DIR NAME
"""
import faulthandler
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench_torch import per_call_us  # noqa: E402

faulthandler.enable()


def cases(d, name):
    k = 0
    while os.path.exists(os.path.join(d, f"{name}.s{k}.in0.npy")):
        ins, outs, i, j = [], [], 0, 0
        while os.path.exists(os.path.join(d, f"{name}.s{k}.in{i}.npy")):
            ins.append(torch.from_numpy(np.load(os.path.join(d, f"{name}.s{k}.in{i}.npy"))).cuda())
            i += 1
        while os.path.exists(os.path.join(d, f"{name}.s{k}.out{j}.npy")):
            outs.append(torch.from_numpy(np.load(os.path.join(d, f"{name}.s{k}.out{j}.npy"))).cuda())
            j += 1
        yield k, ins, outs
        k += 1


def check(got, want, what):
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(got, want):
        torch.testing.assert_close(g.float(), w, atol=2e-3, rtol=2e-3, msg=lambda m: f"{what}: {m}")


def container_runner(d, name, single_threaded):
    """PyTorch's runner of the extracted model library (what the package
    loader wraps), for when the loader itself crashes: the same C++ code
    runs the model."""
    lib = os.path.join(d, name)
    so = next(os.path.join(lib, f) for f in os.listdir(lib) if f.endswith(".so"))
    cls = torch._C._aoti.AOTIModelContainerRunnerCuda
    runner = cls(so, 1, "cuda", lib, single_threaded) if single_threaded else cls(so, 1, "cuda", lib)
    return lambda *ins: runner.run(list(ins))


def main():
    d, name = sys.argv[1], sys.argv[2]
    path = os.path.join(d, name + ".pt2")
    direct = os.environ.get("AOTRUN_BENCH_CONTAINER_RUNNER") == "1"
    how = "AOTIModelContainerRunnerCuda" if direct else "aoti_load_package"
    print(f"[ torch    ] {name}: loading with {how}", flush=True)
    runner = container_runner(d, name, False) if direct else torch._inductor.aoti_load_package(path)
    with torch.no_grad():
        for k, ins, outs in cases(d, name):
            check(runner(*ins), outs, f"(a) case {k}")
            us = per_call_us(lambda: runner(*ins))
            print(f"[ torch    ] {name} case {k} {list(ins[0].shape)}: (a) {how} {us:.1f} us", flush=True)
    single = (container_runner(d, name, True) if direct
              else torch._inductor.aoti_load_package(path, run_single_threaded=True))
    with torch.no_grad():
        for k, ins, outs in cases(d, name):
            static = [t.clone() for t in ins]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    single(*static)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                result = single(*static)
            graph.replay()
            torch.cuda.synchronize()
            check(result, outs, f"(b) case {k}")
            us = per_call_us(graph.replay)
            print(f"[ torch    ] {name} case {k} {list(ins[0].shape)}: (b) run_single_threaded + torch.cuda.graph "
                  f"replay {us:.1f} us", flush=True)


if __name__ == "__main__":
    main()
