"""Launch named conv instances on one problem, twice each, for Nsight Compute (GPU machine).

usage: ncu --clock-control none -k regex:dw_ --section ... python benchmarks/dw_ncu.py OP 'PROBLEM_JSON' INSTANCE [INSTANCE ...]
The first launch of each instance compiles and loads it; profile the second (ncu --launch-skip).
Prints each instance's do_bench median (ms) after the profiled launches.
With --torch, the op's PyTorch baseline (cuDNN, `cudnn.benchmark`) also runs: warmed up, then once
inside the NVTX range "torch" (profile it with `ncu --nvtx --nvtx-include "torch/"`).
"""

import json
import sys

import torch
import triton.testing

from ckcore.dispatch import default_registry, launch
from ckcore.measure import inputs_for


def main():
    op, problem, names = sys.argv[1], json.loads(sys.argv[2]), [a for a in sys.argv[3:] if not a.startswith("--")]
    reg = default_registry()
    p = reg.coerce_problem(op, problem)
    spec = reg.catalog.op(op)
    _, tensors = inputs_for(reg, op, p)
    tensors[spec.output] = spec.empty_output(p, tensors[spec.inputs[0]])
    for name in names:
        for _ in range(2):
            launch(reg, op, p, tensors, instance=name)
    if "--torch" in sys.argv:
        run = spec.torch_baseline(p, tensors)
        for _ in range(5):
            run()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("torch")
        run()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"torch {triton.testing.do_bench(run, return_mode='median') * 1e3:.1f} us", flush=True)
    if "--time" in sys.argv:
        return
    for name in names:
        ms = triton.testing.do_bench(lambda: launch(reg, op, p, tensors, instance=name), return_mode="median")
        print(f"{name} {ms * 1e3:.1f} us", flush=True)


if __name__ == "__main__":
    main()
