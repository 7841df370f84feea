"""Per instance group, the geomean ratio of two tune datasets' times on the pairs both measured
(CPU only): how a kernel change moved each group, when a dataset's problems were measured again.
Groups: family, split (``_k``), taps per step (``_t``) and dtype, parsed from instance names.
Pruned rows are left out on either side: ``ckcore tune`` stops early on instances it judges over
``PRUNE_RATIO`` (10) times slower than the best so far (three samples up to the twenty-second
session, six since: ``ckcore.measure.first_runs``), and a stall then stands alone. So a row of 3
samples or fewer, or of 6 or fewer at ``PRUNE_RATIO`` times its problem's best or more, does not
count.
usage: python benchmarks/dataset_ratio.py OLD.jsonl.gz NEW.jsonl.gz [--match REGEX]
"""

import argparse
import collections
import json
import math
import re

from ckcore.tune import Dataset
from ckcore.tune.worker import PRUNE_RATIO


def times(path):
    rows = [r for r in Dataset(path).rows() if r.get("status") == "ok"]
    best = collections.defaultdict(lambda: math.inf)
    for r in rows:
        best[r["problem_name"]] = min(best[r["problem_name"]], r["time_ms"])

    def pruned(r):
        n = r.get("samples") or 0
        return n <= 3 or (n <= 6 and r["time_ms"] >= PRUNE_RATIO * best[r["problem_name"]])

    return {(r["problem_name"], r["instance"]): r["time_ms"] for r in rows if not pruned(r)}


def group(instance):
    split = re.search(r"_k(\d+)_", instance)
    taps = re.search(r"_t(\d+)_", instance)
    dtype = re.search(r"_(fp16|bf16|fp32)_", instance)
    return (instance.split("_bf16_")[0].split("_fp16_")[0].split("_fp32_")[0],
            f"k{split.group(1) if split else 1}", f"t{taps.group(1) if taps else 1}", dtype.group(1) if dtype else "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--match", default="^dw")
    args = ap.parse_args()
    old, new = times(args.old), times(args.new)
    groups = collections.defaultdict(list)
    for key, t in new.items():
        if key in old and re.search(args.match, key[1]):
            groups[group(key[1])].append(t / old[key])
    for g in sorted(groups):
        v = groups[g]
        print(json.dumps({"group": "/".join(g), "pairs": len(v), "geomean_new_over_old": round(math.exp(sum(map(math.log, v)) / len(v)), 3),
                          "worse_5pct": sum(x > 1.05 for x in v), "max": round(max(v), 2)}))


if __name__ == "__main__":
    main()
