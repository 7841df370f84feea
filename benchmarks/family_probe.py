"""Families of the full set that the default set leaves out (stream-K, GEMV) against ckcore's
default selection and torch.matmul, per gemm suite row (GPU).

For each row: the instance ckcore selects from the default set (CKCORE_HEURISTIC, e.g. lightgbm)
and every instance of the named families (full set) that supports it, each validated once
against a float64 recomputation and timed with do_bench (median, L2 flushed), next to
torch.matmul in the same process. Writes one JSON line per row and prints a summary (geomean of
the best probed instance over the default pick, and how many rows it wins).
usage: python benchmarks/family_probe.py OUT.jsonl [--families gemm_streamk,gemm_gemv]
       [--suite benchmarks/suites/gemm.jsonl] [--limit N]
"""

import argparse
import json
import math

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.bench import float64_recompute, problem_fields
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, time_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--suite", default="benchmarks/suites/gemm.jsonl")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--families", default="gemm_streamk,gemm_gemv")
    args = ap.parse_args()
    arch, name = detect()
    base = Registry(arch.arch, settings=Settings.from_env(), device_name=name)  # selects, as users get it
    base.declare("gemm", "default")
    base.build(progress=False)
    families = set(args.families.split(","))
    reg = Registry(arch.arch, settings=base.settings, device_name=name)  # the probed instances
    for inst in Registry(arch.arch, settings=base.settings).declare("gemm", "full"):
        if inst.family in families:
            reg.add(inst.family, inst.key)
    reg.build(progress=False)
    spec = reg.catalog.op("gemm")
    rows = [json.loads(line) for line in open(args.suite) if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    ratios, wins = [], 0
    with open(args.out, "w") as out:
        for row in rows:
            p = reg.problem("gemm", **problem_fields(row))
            tensors = spec.random_tensors(p, 0, "cuda")
            ref = float64_recompute(spec, p, tensors)
            tol = spec.tolerance(p)
            cands, _ = reg.candidates(p)
            default_pick = base.select(p).instance
            runs = {default_pick.name: base}
            runs.update({c.instance.name: reg for c in cands})
            result = {"problem": row["name"], "default_pick": default_pick.name, "times_ms": {}, "checks": {}}
            for n, r in runs.items():
                run = lambda n=n, r=r: launch(r, "gemm", p, dict(tensors), instance=n)  # noqa: E731
                result["checks"][n] = compare_tensors(run(), ref, tol.atol, tol.rtol).passed
                result["times_ms"][n] = time_ms(run, interpret=False)
            a, b = tensors["a"], tensors["b"]
            result["torch_ms"] = time_ms(lambda: a @ b, interpret=False)
            probed = {n: t for n, t in result["times_ms"].items() if n != default_pick.name and result["checks"][n]}
            if probed:
                best = min(probed, key=probed.get)
                result["best_probed"] = best
                ratios.append(result["times_ms"][default_pick.name] / probed[best])
                wins += probed[best] < result["times_ms"][default_pick.name]
            out.write(json.dumps(result) + "\n")
            out.flush()
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    print(json.dumps({"rows": len(rows), "probed_rows": len(ratios), "probed_wins": wins,
                      "geomean_default_over_best_probed": geo,
                      "all_checks_passed": all(all(json.loads(line)["checks"].values()) for line in open(args.out))}))


if __name__ == "__main__":
    main()
