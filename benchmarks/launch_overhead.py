"""Where a small GEMM's time goes (GPU): do_bench of ckcore's dispatch (named instance), of the
bare compiled kernel with precomputed arguments, and of torch.matmul, on small suite shapes;
then the CPU cost per dispatch of its parts.
usage: python benchmarks/launch_overhead.py"""

import time

import torch
import triton.testing

from ckcore import Registry
from ckcore.dispatch import launch


def main():
    reg = Registry("sm_90")
    reg.declare("gemm")
    spec = reg.catalog.op("gemm")
    for M, N, K in ((64, 4096, 4096), (1024, 1024, 1024), (128, 6144, 4096)):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype="bf16", layout="rcr")
        t = spec.random_tensors(p, 0, "cuda")
        t["c"] = spec.empty_output(p, t["a"])
        inst = reg.select(p).instance
        plan = reg.plan(inst, p)
        kernel = reg.load(inst)
        lt = dict(t)
        for name, nbytes in plan.workspaces.items():
            lt[f"workspace_{name}"] = reg.workspaces.get(t["a"].device, nbytes, f"{inst.family}/{name}")
        args = plan.family.launch_args(inst.key, p, lt, interpret=False)
        runs = {"dispatch": lambda: launch(reg, "gemm", p, t, instance=inst.name),
                "bare kernel": lambda: kernel[plan.grid](*args),
                "torch": lambda: torch.matmul(t["a"], t["b"], out=t["c"])}
        res = {n: triton.testing.do_bench(f, return_mode="median") * 1e3 for n, f in runs.items()}
        cpu = {}
        for n, f in runs.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                f()
            cpu[n] = (time.perf_counter() - t0) / 200 * 1e6
            torch.cuda.synchronize()
        print(p.name, inst.name, {n: round(v, 1) for n, v in res.items()}, "us (do_bench);",
              {n: round(v, 1) for n, v in cpu.items()}, "us enqueue per call")


if __name__ == "__main__":
    main()
