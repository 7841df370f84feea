"""Sweep of tile / grouping / warps / stages for bf16 GEMM on a few large shapes, both layouts
rcr and rrr, both families (GPU machine). Writes JSON lines; prints the best per shape.
usage: python benchmarks/sweep_rcr.py OUT.jsonl
"""

import itertools
import json
import sys

import triton.testing

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.dispatch import launch
from ck_plugin_gemm.tma import TmaGemmKey

SHAPES = [(4096, 28672, 4096, "rcr"), (1024, 6144, 4096, "rcr"), (8192, 8192, 8192, "rcr"), (2048, 4096, 4096, "rcr"),
          (4096, 4096, 28672, "rrr"), (6144, 4096, 4096, "crr")]


def main():
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    for layout in ("rcr", "rrr", "crr"):
        for (bm, bn, bk), g, s in itertools.product([(128, 256, 64), (128, 128, 64), (128, 128, 128), (128, 256, 32), (256, 128, 64)],
                                                    (8, 16), (2, 3, 4, 5)):
            key = TmaGemmKey(dtype="bf16", layout=layout, block_m=bm, block_n=bn, block_k=bk, group_m=g, num_warps=4,
                             num_stages=s, warp_specialize=True)
            if not reg.catalog.families["gemm_tma"].check(key, reg.arch):
                reg.add("gemm_tma", key)
        reg.declare("gemm", "default")
    rep = reg.build(progress=False)
    print(len(reg.instances), "instances", rep.seconds, "failed", rep.failed, list(rep.failures.items())[:2], flush=True)
    spec = reg.catalog.op("gemm")
    with open(sys.argv[1], "w") as f:
        for M, N, K, layout in SHAPES:
            p = spec.problem(M=M, N=N, K=K, dtype="bf16", layout=layout)
            t = spec.random_tensors(p, 0, "cuda")
            t["c"] = spec.empty_output(p, t["a"])
            torch_ms = triton.testing.do_bench(spec.torch_baseline(p, t), warmup=10, rep=40, return_mode="median")
            res = []
            for inst in reg.of_op("gemm"):
                if inst.key.layout.value != layout or reg.family(inst).supports(inst.key, p):
                    continue
                fn = lambda: launch(reg, "gemm", p, t, instance=inst.name, interpret=False)
                fn()
                ms = triton.testing.do_bench(fn, warmup=3, rep=12, return_mode="median")
                res.append((ms, inst.name))
                f.write(json.dumps({"problem": p.to_dict(), "instance": inst.name, "time_ms": ms, "torch_ms": torch_ms}) + "\n")
            res.sort()
            print(M, N, K, layout, f"torch {torch_ms:.4f}", " | ".join(f"{n} x{torch_ms / ms:.2f}" for ms, n in res[:6]), flush=True)


if __name__ == "__main__":
    main()
