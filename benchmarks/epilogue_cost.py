"""What each part of a fused epilogue costs on the GPU: one instance (default: the selection
for the plain problem) timed with every epilogue of a list, on a few suite shapes, validated once
each against a float64 recomputation. Prints ms and the ratio to the plain epilogue.
usage: python benchmarks/epilogue_cost.py OUT.jsonl [--instance NAME]
"""

import argparse
import json

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.bench import float64_recompute
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, time_ms

SHAPES = [(4096, 4096, 4096, "rcr"), (4096, 28672, 4096, "rcr"), (4096, 4096, 4096, "rrr"), (4096, 4096, 4096, "crr")]
EPILOGUES = [{}, {"bias": "col"}, {"activation": "relu"}, {"bias": "col", "activation": "relu"},
             {"activation": "gelu_tanh"}, {"activation": "gelu"}, {"bias": "col", "activation": "gelu"},
             {"activation": "silu"}, {"beta": 1.0}, {"num_d": 1}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--instance", action="append", default=[])
    args = ap.parse_args()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare("gemm", "default")
    spec = reg.catalog.op("gemm")
    work = []
    for M, N, K, layout in SHAPES:
        plain = reg.problem("gemm", M=M, N=N, K=K, dtype="bf16", layout=layout)
        names = [n for n in args.instance if reg.instances[n].key.layout.value == layout] or [reg.select(plain).instance.name]
        for n in names:
            for fields in EPILOGUES:
                p = reg.problem("gemm", M=M, N=N, K=K, dtype="bf16", layout=layout, **fields)
                work.append((p, reg.specialized(reg.instances[n], p)))
    reg.build(max_workers=16, progress=False, instances=list({i.name: i for _, i in work}.values()))
    with open(args.out, "w") as out:
        base = None
        for p, inst in work:
            tensors = spec.random_tensors(p, 0, "cuda")
            run = lambda: launch(reg, "gemm", p, dict(tensors), instance=inst.name)  # noqa: E731
            tol = spec.tolerance(p)
            ok = compare_tensors(run(), float64_recompute(spec, p, tensors), tol.atol, tol.rtol).passed
            ms = time_ms(run, interpret=False)
            if p.epilogue == "none":
                base = ms
            row = {"problem": p.name, "instance": inst.name, "epilogue": p.epilogue, "ms": ms, "over_plain": ms / base, "check": ok}
            out.write(json.dumps(row) + "\n")
            print(f"{p.name[:40]:40s} {inst.name[:60]:60s} {ms:.4f} x{ms / base:.3f} {'ok' if ok else 'FAIL'}", flush=True)


if __name__ == "__main__":
    main()
