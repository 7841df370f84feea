"""Summaries of ``ckcore bench`` conv results: per file, the geomean of cuDNN time / ckcore time over
the grouped (G > 1, C/G > 1), dense (G = 1) and depthwise (C/G = 1) rows and all rows, the rows
below 1x, and how many ckcore outputs failed their check; with ``--old``, each row's old / new
ckcore time for rows present in both (same-machine A/B), and their geomean.
usage: python benchmarks/conv_suite_summary.py BENCH.jsonl [BENCH.jsonl ...] [--old OLD.jsonl ...]
"""

import argparse
import json
import math


def results(path):
    return {r["name"]: r for r in map(json.loads, open(path)) if r.get("kind") == "result"}


def kind(p: dict) -> str:
    cg = p["C"] // p["G"]
    return "depthwise" if cg == 1 else "dense" if p["G"] == 1 else "grouped"


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--old", nargs="*", default=[], help="the same benches from the old tree, in the same order")
    args = ap.parse_args()
    for i, path in enumerate(args.bench):
        rs = results(path)
        groups = {}
        for r in rs.values():
            groups.setdefault(kind(r["problem"]), []).append(r["torch_ms"] / r["ckcore_ms"])
        parts = [f"{k} ({len(v)}) {geomean(v):.3f}" for k, v in sorted(groups.items())]
        all_rows = [r["torch_ms"] / r["ckcore_ms"] for r in rs.values()]
        failed = sum(not r["check"]["passed"] for r in rs.values())
        print(f"{path}: all ({len(all_rows)}) {geomean(all_rows):.3f}; " + "; ".join(parts) + f"; failed checks {failed}")
        below = sorted((r["torch_ms"] / r["ckcore_ms"], n) for n, r in rs.items() if kind(r["problem"]) == "grouped"
                       and r["torch_ms"] < r["ckcore_ms"])
        print("  grouped rows below 1x:", ", ".join(f"{n} {x:.2f}" for x, n in below))
        if i < len(args.old):
            old = results(args.old[i])
            ratios = []
            for n, r in rs.items():
                if n in old:
                    ratios.append(old[n]["ckcore_ms"] / r["ckcore_ms"])
                    print(f"  {n:24s} {old[n]['ckcore_ms'] * 1e3:8.1f} -> {r['ckcore_ms'] * 1e3:8.1f} us "
                          f"(cuDNN {r['torch_ms'] * 1e3:8.1f}) {r['instance'][:48]}"
                          f"{'' if old[n]['instance'] == r['instance'] else ' (pick changed)'}")
            print(f"  old / new kernel time, geomean over {len(ratios)} rows: {geomean(ratios):.4f}")


if __name__ == "__main__":
    main()
