"""Host-side cost of selection (CPU only, no GPU needed): first (cold) selection of a problem
over the declared set, and the memoised lookup that every later dispatch of it pays.
usage: python benchmarks/select_overhead.py [--set default] [--heuristic rules|lightgbm]
       [--op gemm|grouped_conv_fwd|... --suite benchmarks/suites/conv.jsonl] [--prepare]
(--prepare: compile the model's trees into the cache first, as `ckcore build` does, so the
lightgbm driver predicts with them where lleaves is installed; the output's "selection" says which)
(with lightgbm, run with CKCORE_DISABLE_PLUGINS=stream_k: the shipped gemm model has no split-K data)
"""

import argparse
import json
import statistics
import time

import attrs

from ckcore import Registry, Settings


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="default")
    ap.add_argument("--heuristic", default="rules")
    ap.add_argument("--op", default="gemm")
    ap.add_argument("--suite", default="benchmarks/suites/gemm.jsonl")
    ap.add_argument("--prepare", action="store_true")
    args = ap.parse_args()
    settings = attrs.evolve(Settings.from_env(), heuristic=args.heuristic)
    reg = Registry("sm_90", settings=settings, device_name="NVIDIA H200")
    reg.declare(args.op, args.set)
    how = reg.prepare_selection([args.op]).get(args.op) if args.prepare else None
    rows = [json.loads(l) for l in open(args.suite)]
    problems = [reg.problem(args.op, **{k: v for k, v in r.items() if k not in ("op", "name")}) for r in rows]
    reg.select(problems[0])  # loads the heuristic (and its model) once
    reg.forget_selections()
    cold, warm, cands, notes = [], [], [], set()
    for p in problems:
        t0 = time.perf_counter()
        sel = reg.select(p)
        cold.append((time.perf_counter() - t0) * 1e6)
        cands.append(len(sel.ranked))
        notes.add(sel.ranked[0].note)
        t0 = time.perf_counter()
        for _ in range(1000):
            reg.select(p)
        warm.append((time.perf_counter() - t0) * 1e3)  # us per call
    print(json.dumps({"op": args.op, "heuristic": args.heuristic, "instances": len(reg.instances), "problems": len(problems),
                      "candidates_median": statistics.median(cands), "candidates_max": max(cands),
                      "cold_select_us_median": statistics.median(cold), "cold_select_us_max": max(cold),
                      "memoised_select_us_median": statistics.median(warm), "notes": sorted(notes),
                      "selection": how}))


if __name__ == "__main__":
    main()
