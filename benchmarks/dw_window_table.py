"""Per depthwise row: cuDNN and the shipped pick (a `ckcore bench` result file), and the best
measured instance of each direct depthwise forward family (a `ckcore tune` dataset of the same
rows), in µs; then the geomean of cuDNN time / best time per family.
usage: python benchmarks/dw_window_table.py TUNE.jsonl.gz BENCH.jsonl"""

import gzip
import json
import math
import sys


def main(tune_path, bench_path):
    best = {}
    for line in gzip.open(tune_path, "rt"):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        k = (r["problem_name"], r["family"])
        if k not in best or r["time_ms"] < best[k]["time_ms"]:
            best[k] = r
    families = sorted({f for _, f in best})
    ratios = {f: [] for f in families + ["pick"]}
    print(f"{'row':28s} {'cuDNN':>7s} {'pick':>7s} " + " ".join(f"{f:>10s}" for f in families) + "  best window instance")
    for line in open(bench_path):
        r = json.loads(line)
        if r.get("kind") != "result" or not r.get("ckcore_ms") or not r.get("torch_ms"):
            continue
        torch_us, pick_us = r["torch_ms"] * 1e3, r["ckcore_ms"] * 1e3
        ratios["pick"].append(torch_us / pick_us)
        cells = []
        for f in families:
            b = best.get((r["problem_name"], f))
            cells.append(f"{b['time_ms'] * 1e3:10.1f}" if b else f"{'-':>10s}")
            if b:
                ratios[f].append(torch_us / (b["time_ms"] * 1e3))
        w = best.get((r["problem_name"], "dw_win_fwd"))
        print(f"{r.get('name', '')[:28]:28s} {torch_us:7.1f} {pick_us:7.1f} " + " ".join(cells) + f"  {w['instance'] if w else ''}")
    for f, v in ratios.items():
        if v:
            print(f"geomean cuDNN / {f}: {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)} rows")


if __name__ == "__main__":
    main(*sys.argv[1:3])
