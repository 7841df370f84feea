"""Per problem of a tune dataset of benchmarks/make_tail_split_set.py's instances: the best
split-tail instance (``_ts``) against the best of the same tiles without a split, in µs, where
a split-tail instance ran; then the geomean of the ratio (without / with: above 1, the split
tail is faster) and its range.
usage: python benchmarks/tail_split_summary.py DATASET.jsonl.gz"""

import ast
import collections
import gzip
import json
import math
import sys


def main(path):
    by = collections.defaultdict(lambda: ([], []))
    for line in gzip.open(path, "rt"):
        r = json.loads(line)
        if r["status"] != "ok":
            continue
        key = r["key"] if isinstance(r["key"], dict) else ast.literal_eval(r["key"])
        by[r["problem_name"]][1 if key.get("tail_split") else 0].append(r)
    ratios = []
    for name, (plain, split) in sorted(by.items()):
        if not (plain and split):
            continue
        bp = min(plain, key=lambda r: r["time_ms"])
        bs = min(split, key=lambda r: r["time_ms"])
        ratios.append(bp["time_ms"] / bs["time_ms"])
        print(f"{name[:60]:60s} plain {bp['time_ms'] * 1e3:8.1f} split {bs['time_ms'] * 1e3:8.1f} "
              f"x{ratios[-1]:.3f}  {bs['instance'][16:]}")
    if ratios:
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"rows {len(ratios)}: best plain / best split geomean {g:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")


if __name__ == "__main__":
    main(sys.argv[1])
