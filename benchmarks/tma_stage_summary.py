"""Per problem of a TMA stage sweep (benchmarks/run_tma_stage_sweep.sh): the best instance, the
best with 3-4 stages (the depths the default set was chosen among) and with 5-6, in µs; then the
geomean of (best with 3-4) / (best overall).
usage: python benchmarks/tma_stage_summary.py DATASET.jsonl.gz"""

import gzip
import json
import math
import sys
from collections import defaultdict


def main():
    best = defaultdict(dict)
    for line in gzip.open(sys.argv[1], "rt"):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        depth = "s56" if r["key"]["num_stages"] >= 5 else "s34"
        for k in ("all", depth):
            if r["time_ms"] < best[r["problem_name"]].get(k, (math.inf,))[0]:
                best[r["problem_name"]][k] = (r["time_ms"], r["instance"])
    ratios = []
    for name, b in sorted(best.items()):
        print(name[:70], " ".join(f"{k} {v[0] * 1e3:.1f} {v[1]}" for k, v in sorted(b.items())))
        if "s34" in b:
            ratios.append(b["s34"][0] / b["all"][0])
    if ratios:
        print(f"geomean best(3-4 stages) / best: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} over {len(ratios)}")


if __name__ == "__main__":
    main()
