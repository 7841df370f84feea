"""Summarises a depthwise sweep dataset (benchmarks/run_dw_sweep.sh): per problem, the best
measured time for each value of ``unroll`` (taps per step or pass) and the best instance.
usage: python benchmarks/dw_sweep_summary.py DATASET.jsonl.gz"""

import sys
from collections import defaultdict

from ckcore.tune.dataset import Dataset


def main(path):
    best = defaultdict(dict)
    top = {}
    for r in Dataset(path).rows():
        if r["status"] != "ok":
            continue
        name = r["problem_name"]
        u = r["key"].get("unroll", 1)
        t = r["time_ms"] * 1e3
        best[name][u] = min(best[name].get(u, t), t)
        if name not in top or t < top[name][0]:
            top[name] = (t, r["instance"])
    unrolls = sorted({u for b in best.values() for u in b})
    print("problem".ljust(60), *(f"t{u}".rjust(8) for u in unrolls), " best instance (µs)")
    for name in sorted(best):
        print(name[:60].ljust(60), *(f"{best[name].get(u, float('nan')):8.1f}" for u in unrolls), top[name][1])


if __name__ == "__main__":
    main(sys.argv[1])
