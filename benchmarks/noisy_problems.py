"""Problems of a tune dataset whose measurements are too noisy to train or score selection on,
and how to measure them again (CPU only).

A row's spread is ``time_ms_p80 / time_ms_p20`` (``ckcore tune`` records both); a problem is noisy
when more than ``--frac`` of its ``ok`` rows spread beyond ``--spread``. On the H200 datasets of
2026-11-25 such problems held most of the worst held-out selections: backward-data's worst
(``c320 k1280 7x7``, efficiency 0.25) had its implicit-GEMM instances measured at 21-55 µs with
tight spreads and most pointwise GEMM ones at 74-150 µs with 20th percentiles down to 14 µs
(``docs/selection.md``).

With ``--drop OUT.jsonl.gz --suite OUT.jsonl`` it writes the dataset without those problems' rows
and a suite of the problems, so that on the GPU
``ckcore tune OP --suite OUT.jsonl --out OUT.jsonl.gz`` measures every pair of them again.
usage: python benchmarks/noisy_problems.py DATASET.jsonl.gz [--spread 1.5] [--frac 0.2]
       [--drop OUT.jsonl.gz --suite OUT.jsonl]
"""

import argparse
import collections
import json

from ckcore.tune import Dataset


def noisy(rows, spread: float, frac: float) -> dict[str, float]:
    """{problem name: fraction of its ok rows spreading beyond ``spread``} for the noisy ones."""
    by = collections.defaultdict(list)
    for r in rows:
        if r.get("status") == "ok" and r.get("time_ms_p20") and r.get("time_ms_p80"):
            by[r["problem_name"]].append(r["time_ms_p80"] / r["time_ms_p20"] > spread)
    return {name: sum(f) / len(f) for name, f in by.items() if sum(f) / len(f) > frac}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--spread", type=float, default=1.5)
    ap.add_argument("--frac", type=float, default=0.2)
    ap.add_argument("--drop")
    ap.add_argument("--suite")
    args = ap.parse_args()
    if bool(args.drop) != bool(args.suite):
        ap.error("--drop and --suite go together")
    rows = list(Dataset(args.dataset).rows())
    bad = noisy(rows, args.spread, args.frac)
    for name, f in sorted(bad.items(), key=lambda kv: -kv[1]):
        print(f"{f:5.2f} {name}")
    problems = {r["problem_name"] for r in rows}
    print(json.dumps({"dataset": args.dataset, "problems": len(problems), "noisy": len(bad),
                      "spread": args.spread, "frac": args.frac}))
    if args.drop:
        split_out(rows, set(bad), args.drop, args.suite)


def split_out(rows, names: set[str], drop: str, suite_path: str) -> None:
    """Write the dataset ``rows`` without the problems ``names`` to ``drop`` (a new dataset:
    :meth:`~ckcore.tune.Dataset.create` refuses an existing file) and those problems as a suite to
    ``suite_path``, for ``ckcore tune OP --suite`` to measure them again, every pair."""
    suite = {}
    for r in rows:
        if r["problem_name"] in names:
            suite.setdefault(r["problem_name"], {"op": r["op"], "name": r["problem_name"], **r["problem"]})
    Dataset.create(drop, (r for r in rows if r["problem_name"] not in names))
    with open(suite_path, "w") as f:
        for line in suite.values():
            f.write(json.dumps(line) + "\n")

if __name__ == "__main__":
    main()
