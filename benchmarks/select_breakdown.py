"""Where a first (cold) selection's host time goes, CPU only: on every suite problem, first the
whole `Registry.select` of a problem not seen before (the plugins' per-problem memos are cold
then), then with the registry's memos cleared each step alone: the staged twin lookup,
`Registry.candidates` (specialised variants and `supports` of the problem's bucket), the
`lightgbm` feature matrix, and the prediction (regressor + ranker); the steps find the plugins'
memos of derived sizes warm, except the conv helpers cleared between steps.
Medians in µs. Run `ckcore build` (or pass --prepare) first so the model's trees are compiled
where lleaves is installed.
usage: [CKCORE_DISABLE_PLUGINS=stream_k] python benchmarks/select_breakdown.py [--op gemm --suite benchmarks/suites/gemm.jsonl] [--prepare]
"""

import argparse
import json
import statistics
import time

import attrs

from ckcore import Registry, Settings
from ckcore.heuristics import get_heuristic


def _forget(reg):
    """Every selection memo of ``reg``: selections, derived variants per problem, staged twins,
    and the conv plugin's per-problem helpers (where it memoises them)."""
    reg.forget_selections()
    reg._specialized.clear()
    reg._stagings.clear()
    try:
        from ck_plugin_grouped_conv import family
    except ImportError:
        return
    for helper in (family.int_args, family.int32_reason):
        if hasattr(helper, "cache_clear"):
            helper.cache_clear()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default="gemm")
    ap.add_argument("--suite", default="benchmarks/suites/gemm.jsonl")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--set", default="default")
    args = ap.parse_args()
    reg = Registry("sm_90", settings=attrs.evolve(Settings.from_env(), heuristic="lightgbm"), device_name="NVIDIA H200",
                   interpret=False)
    reg.declare(args.op, args.set)
    how = reg.prepare_selection([args.op]).get(args.op) if args.prepare else None
    rows = [json.loads(line) for line in open(args.suite)]
    problems = [reg.problem(args.op, **{k: v for k, v in r.items() if k not in ("op", "name")}) for r in rows]
    reg.select(problems[0])  # loads the model
    heuristic = get_heuristic("lightgbm")
    steps = {k: [] for k in ("staging", "candidates", "feature_matrix", "predict", "select", "candidates_n")}
    for p in problems:
        _forget(reg)
        t5 = time.perf_counter()
        reg.select(p)
        t6 = time.perf_counter()
        _forget(reg)
        t0 = time.perf_counter()
        reg.staging(p)
        t1 = time.perf_counter()
        cands, _ = reg.candidates(p)
        t2 = time.perf_counter()
        operator = cands[0].operator
        model, _ = heuristic.model_for(operator, {c.family.name: c.family for c in cands}.values(), reg.arch, reg.device)
        x = model.candidate_matrix(operator, p, cands, reg.arch, reg.device)
        t3 = time.perf_counter()
        model.predict_matrix(x, reg.cache)
        t4 = time.perf_counter()
        for k, v in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5)):
            steps[k].append(v * 1e6)
        steps["candidates_n"].append(len(cands))
    print(json.dumps({"op": args.op, "problems": len(problems), "selection": how,
                      **{f"{k}_median": round(statistics.median(v), 1) for k, v in steps.items()}}))


if __name__ == "__main__":
    main()
