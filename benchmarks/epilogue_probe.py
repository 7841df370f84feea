"""What a fused epilogue costs per instance (GPU): for each suite row (which carries epilogue
fields, e.g. benchmarks/suites/gemm_bias_gelu.jsonl), the top-k instances of the selection's
ranking are timed on the plain problem and on the fused one, next to torch (matmul alone, and
the unfused torch sequence of the epilogue) in the same process. Every fused run is validated
against a float64 recomputation first. The variants are compiled in parallel before timing.

Writes one JSON line per row; prints the geomean of fused over plain time per family and how
often the plain ranking's best instance stays the best fused one.
usage: python benchmarks/epilogue_probe.py OUT.jsonl [--suite S] [--top 5] [--limit N] [--every K]
"""

import argparse
import json
import math
from collections import defaultdict

import attrs

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.bench import float64_recompute, problem_fields
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, time_ms


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--suite", default="benchmarks/suites/gemm_bias_gelu.jsonl")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--every", type=int, default=1, help="take every K-th row")
    args = ap.parse_args()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare("gemm", "default")
    spec = reg.catalog.op("gemm")
    rows = [json.loads(line) for line in open(args.suite) if line.strip()][:: args.every]
    rows = rows[: args.limit] if args.limit else rows
    work = []
    for row in rows:
        fused = reg.problem("gemm", **problem_fields(row))
        plain = attrs.evolve(fused, alpha=1.0, beta=0.0, bias="none", num_d=0, activation="identity")
        top = [r.instance for r in reg.select(plain).ranked[: args.top]]
        work.append((row, plain, fused, top))
    variants = {reg.specialized(i, f).name: reg.specialized(i, f) for _, _, f, top in work for i in top}
    plains = {i.name: i for _, _, _, top in work for i in top}
    print(json.dumps(reg.build(max_workers=16, progress=False, instances=[*variants.values(), *plains.values()]).to_dict())[:300])
    by_family, kept = defaultdict(list), 0
    with open(args.out, "w") as out:
        for row, plain, fused, top in work:
            tensors = spec.random_tensors(fused, 0, "cuda")
            ref = float64_recompute(spec, fused, tensors)
            tol = spec.tolerance(fused)
            plain_tensors = {"a": tensors["a"], "b": tensors["b"]}
            res = {"name": row["name"], "problem": fused.to_dict(), "plain_ms": {}, "fused_ms": {}, "checks": {}}
            for inst in top:
                run_p = lambda n=inst.name: launch(reg, "gemm", plain, dict(plain_tensors), instance=n)  # noqa: E731
                run_f = lambda n=inst.name: launch(reg, "gemm", fused, dict(tensors), instance=n)  # noqa: E731
                res["checks"][inst.name] = compare_tensors(run_f(), ref, tol.atol, tol.rtol).passed
                res["plain_ms"][inst.name] = time_ms(run_p, interpret=False)
                res["fused_ms"][inst.name] = time_ms(run_f, interpret=False)
                by_family[(inst.family, getattr(inst.key, "warp_specialize", False))].append(
                    res["fused_ms"][inst.name] / res["plain_ms"][inst.name])
            res["torch_matmul_ms"] = time_ms(spec.torch_baseline(plain, dict(plain_tensors)), interpret=False)
            res["torch_unfused_ms"] = time_ms(spec.torch_baseline(fused, dict(tensors)), interpret=False)
            best_plain = min(res["plain_ms"], key=res["plain_ms"].get)
            best_fused = min(res["fused_ms"], key=res["fused_ms"].get)
            kept += best_plain == best_fused
            res["best_plain"], res["best_fused"] = best_plain, best_fused
            out.write(json.dumps(res) + "\n")
            print(f"{row['name']:34s} plain {res['plain_ms'][best_plain]:.3f} fused {res['fused_ms'][best_fused]:.3f} "
                  f"torch {res['torch_matmul_ms']:.3f}/{res['torch_unfused_ms']:.3f} {best_fused}", flush=True)
    for (fam, ws), ratios in sorted(by_family.items()):
        print(f"{fam}{' ws' if ws else ''}: fused/plain geomean {geomean(ratios):.3f} over {len(ratios)} runs")
    print(f"best plain instance is the best fused one on {kept}/{len(work)} rows")


if __name__ == "__main__":
    main()
