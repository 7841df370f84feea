"""Summary of a multiplier-two sweep (``ckcore tune OP --suite benchmarks/suites/dw_m2_OP.jsonl
--kernel-set-file benchmarks/sweep_dw_m2_OP.json``: the swept ``_m2`` windows next to every
default-set bf16 instance, in one run). Per problem: the best instance without ``multiplier_two``
(the kernels K/G = 2 had before) and the best ``_m2`` one (µs, GB/s), and their ratio; the
geomean of the ratios; then a greedy choice of ``_m2`` instances (each step adds the one that
raises the geomean of best-measured / best of (the instances before and the chosen) the most)
with that geomean after each step.
usage: python benchmarks/dw_m2_sweep_summary.py SWEEP.jsonl.gz [--greedy N]"""

import argparse
import collections
import gzip
import json
import math


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--greedy", type=int, default=8)
    args = ap.parse_args()
    by = collections.defaultdict(dict)
    for line in gzip.open(args.dataset, "rt"):
        r = json.loads(line)
        if r["status"] == "ok":
            by[r["problem_name"]][r["instance"]] = r
    ratios = []
    for name, rs in sorted(by.items()):
        old = [r for i, r in rs.items() if "_m2_" not in i]
        new = [r for i, r in rs.items() if "_m2_" in i]
        if not old or not new:
            print(f"{name}: {len(old)} old, {len(new)} m2 rows")
            continue
        bo, bn = min(old, key=lambda r: r["time_ms"]), min(new, key=lambda r: r["time_ms"])
        ratios.append(bo["time_ms"] / bn["time_ms"])
        print(f"{name}\n  before {bo['time_ms'] * 1e3:8.1f} us {bo['gbps']:6.0f} GB/s {bo['instance']}\n"
              f"  m2     {bn['time_ms'] * 1e3:8.1f} us {bn['gbps']:6.0f} GB/s {bn['instance']}  x{ratios[-1]:.2f}")
    if ratios:
        print(f"geomean before / m2 over {len(ratios)} problems: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    problems = {n: ({i: r["time_ms"] for i, r in rs.items() if "_m2_" in i},
                    min(r["time_ms"] for i, r in rs.items() if "_m2_" not in i)) for n, rs in by.items()
                if any("_m2_" in i for i in rs) and any("_m2_" not in i for i in rs)}
    chosen = []
    names = sorted({i for t, _ in problems.values() for i in t})
    for _ in range(args.greedy if names else 0):
        def score(extra):
            logs = []
            for t, before in problems.values():
                have = [t[i] for i in chosen + [extra] if i in t] + [before]
                logs.append(math.log(min([*t.values(), before]) / min(have)))
            return math.exp(sum(logs) / len(logs))
        best = max(names, key=score)
        chosen.append(best)
        print(f"greedy {len(chosen)}: {score(best):.3f} {best}")


if __name__ == "__main__":
    main()
