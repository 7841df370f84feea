"""Pre-packing on the GPU: where does packing B once measure faster than what dispatch does
without it? One JSON line per problem and variant (GPU, torch path, every output checked against
the float64 recomputation):

- quantized row-major B (fp8 e4m3 and int8, layout ``rrr``): ckcore staged per call (a K-major
  copy of B on every dispatch), ckcore with ``ckcore.prepack``, torch with the per-call
  transpose ``torch._scaled_mm`` / ``torch._int_mm`` need, and torch on a B transposed once;
- 16-bit with unaligned leading dimensions (4095³): staged per call against B prepacked;
- 16-bit row-major B against column-major B (``rrr`` against ``rcr``, same sizes, both aligned):
  would a K-major copy of B speed up the 16-bit kernels (which read either layout)?

usage: python benchmarks/prepack_bench.py OUT.jsonl [--rounds 3]
"""

import argparse
import json

import numpy as np
import torch

from ckcore import Registry, Settings
from ckcore.bench import float64_recompute
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, environment, time_ms

# Shapes of the Llama-3 rows of benchmarks/suites/gemm_fp8.jsonl (M tokens, N out, K in).
LLAMA = [(1024, 6144, 4096), (4096, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336), (8192, 28672, 4096),
         (16384, 4096, 14336)]


def timed(fn, rounds):
    return float(np.median([time_ms(fn, interpret=False) for _ in range(rounds)]))


def check(spec, p, tensors, out):
    tol = spec.tolerance(p)
    return compare_tensors(out, float64_recompute(spec, p, tensors), tol.atol, tol.rtol).passed


def run_staged_vs_prepacked(reg, spec, p, name, rounds, torch_packed=None):
    tensors = spec.random_tensors(p, 0, "cuda")
    packed = dict(tensors, **reg.prepack("gemm", p, b=tensors["b"]))
    sel = reg.select(p)
    base = spec.torch_baseline(p, dict(tensors))
    rec = {"kind": "result", "name": name, "problem": p.to_dict(), "instance": sel.instance.name,
           "staged": sel.staging.reason if sel.staging else None,
           "staged_ms": timed(lambda: launch(reg, "gemm", p, tensors), rounds),
           "prepacked_ms": timed(lambda: launch(reg, "gemm", p, packed), rounds),
           "torch_ms": timed(base, rounds)}
    rec["staged_check"] = check(spec, p, tensors, launch(reg, "gemm", p, tensors))
    rec["prepacked_check"] = check(spec, p, tensors, launch(reg, "gemm", p, packed))
    if torch_packed is not None:
        rec["torch_packed_ms"] = timed(torch_packed(tensors), rounds)
    print(json.dumps({k: v for k, v in rec.items() if k != "problem"}), flush=True)
    return rec


def scaled_mm_packed(tensors):
    a, bt = tensors["a"], tensors["b"].t().contiguous().t()  # B transposed once, outside the timing
    sa, sb = tensors["scale_a"].reshape(()), tensors["scale_b"].reshape(())
    return lambda: torch._scaled_mm(a, bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def int_mm_packed(tensors):
    a, bt = tensors["a"], tensors["b"].t().contiguous().t()
    return lambda: torch._int_mm(a, bt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    reg = Registry(settings=Settings.from_env())
    reg.declare("gemm")
    spec = reg.catalog.op("gemm")
    rows = [{"kind": "env", **environment(False), "heuristic": reg.settings.heuristic}]
    for M, N, K in LLAMA:
        p = reg.problem("gemm", M=M, N=N, K=K, dtype="fp8e4m3", layout="rrr", scale="tensor")
        rows.append(run_staged_vs_prepacked(reg, spec, p, f"fp8.rrr.{M}x{N}x{K}", args.rounds, scaled_mm_packed))
    for M, N, K in LLAMA[:3]:
        p = reg.problem("gemm", M=M, N=N, K=K, dtype="int8", layout="rrr")
        rows.append(run_staged_vs_prepacked(reg, spec, p, f"int8.rrr.{M}x{N}x{K}", args.rounds, int_mm_packed))
    for dtype in ("bf16", "fp16"):
        p = reg.problem("gemm", M=4095, N=4095, K=4095, dtype=dtype, layout="rcr")
        rows.append(run_staged_vs_prepacked(reg, spec, p, f"{dtype}.odd.4095", args.rounds))
    for M, N, K in LLAMA:
        rec = {"kind": "layout", "name": f"bf16.{M}x{N}x{K}"}
        for layout in ("rrr", "rcr"):
            p = reg.problem("gemm", M=M, N=N, K=K, dtype="bf16", layout=layout)
            tensors = spec.random_tensors(p, 0, "cuda")
            rec[f"{layout}_instance"] = reg.select(p).instance.name
            rec[f"{layout}_ms"] = timed(lambda: launch(reg, "gemm", p, tensors), args.rounds)
            rec[f"{layout}_torch_ms"] = timed(spec.torch_baseline(p, dict(tensors)), args.rounds)
            rec[f"{layout}_check"] = check(spec, p, tensors, launch(reg, "gemm", p, tensors))
        print(json.dumps(rec), flush=True)
        rows.append(rec)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
