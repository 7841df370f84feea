"""Per row of a sliding-window sweep dataset (benchmarks/run_dw_window_sweep.sh): the best
instance measured (swept, or of the default set the script adds), the best default-set instance,
and the best with each value of num_stages, unroll_rows, block_w, num_warps, split and
filter_rows (µs; the fields an instance's key has: the tap-by-tap backward-weight instances have
no window fields, the windows of forward and backward-data no split); then the geomean of each of
those against the best swept.
usage: python benchmarks/dw_window_sweep_summary.py SWEEP.jsonl.gz [OP, default grouped_conv_fwd]"""

import collections
import gzip
import json
import math
import sys

from ckcore import Registry


def main(path, op="grouped_conv_fwd"):
    reg = Registry("sm_90")
    reg.declare(op, "default")
    default = {i.name for i in reg.of_op(op)}
    by = collections.defaultdict(list)
    for line in gzip.open(path, "rt"):
        r = json.loads(line)
        if r["status"] == "ok":
            by[r["problem_name"]].append(r)
    fields = ("num_stages", "unroll_rows", "block_w", "num_warps", "split", "filter_rows")
    ratios = collections.defaultdict(list)
    for name, rs in sorted(by.items()):
        best = min(rs, key=lambda r: r["time_ms"])
        d = [r for r in rs if r["instance"] in default]
        cells = []
        if d:
            bd = min(d, key=lambda r: r["time_ms"])
            ratios["default"].append(best["time_ms"] / bd["time_ms"])
            cells.append(f"default {bd['time_ms'] * 1e3:6.1f}")
        for f in fields:
            for v in sorted({r["key"][f] for r in rs if f in r["key"]}):
                sub = [r for r in rs if r["key"].get(f) == v]
                t = min(r["time_ms"] for r in sub)
                ratios[f"{f}={v}"].append(best["time_ms"] / t)
        print(f"{name.removeprefix(op + '.')[:63]:64s} best {best['time_ms'] * 1e3:6.1f} {best['instance'].removeprefix('dw_win_'):56s} " + " ".join(cells))
    for k, v in ratios.items():
        print(f"{k:16s} geomean of best / best-with: {math.exp(sum(map(math.log, v)) / len(v)):.3f} ({len(v)} rows)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
