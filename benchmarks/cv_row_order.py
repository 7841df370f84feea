"""How much the row order of a dataset moves `ckcore train`'s held-out scores (CPU only).

LightGBM's bagging draws rows by position, and a dataset's order is the order its rows were
appended, so the same measurements appended differently train different models. This reruns the
trainer's 5-fold CV (same folds, parameters and ranker) on each dataset as stored, sorted by
(problem, instance), and shuffled with a few seeds, and prints the held-out mean / P10 / min.
With --served SUITE, the mean over that suite's problems (matched by name) and over the rest too;
with --no-bagging, the trainer's parameters without bagging (regressor and ranker).
usage: python benchmarks/cv_row_order.py OP DATASET.jsonl.gz [DATASET ...] [--shuffles 2] [--served SUITE]
       [--no-bagging]
"""

import argparse
import json
import random

import numpy as np

from ckcore import Registry
from ckcore import train as T


def held_out(rows, params=None, rank_params=None):
    """Held-out efficiency per problem (the trainer's 5-fold CV on ``rows``, in their order)."""
    names = sorted({f for r in rows for f in r["features"]})
    fold_of = T._folds([r["problem"] for r in rows], 5, 0)
    held = T.held_out(rows, names, fold_of, 5, params=params, rank_params=rank_params)
    return {p: e for p, (e, _, _) in T.efficiencies(*held).items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--shuffles", type=int, default=2)
    ap.add_argument("--served", help="suite whose problems are reported apart")
    ap.add_argument("--no-bagging", action="store_true", help="bagging_fraction 1 (regressor and ranker)")
    args = ap.parse_args()
    off = {"bagging_fraction": 1.0, "bagging_freq": 0} if args.no_bagging else {}
    params = {"params": {**T.PARAMS, **off}, "rank_params": {**T.RANK_PARAMS, **off}}
    served = {json.loads(line)["name"] for line in open(args.served)} if args.served else set()
    reg = Registry("sm_90")
    for path in args.datasets:
        base = T.load_training_rows(reg, args.op, [path])
        orders = {"as stored": list(base),
                  "sorted": sorted(base, key=lambda r: (r["problem"].split("/", 1)[1], r["instance"], r["problem"]))}
        for seed in range(1, args.shuffles + 1):
            rows = list(base)
            random.Random(seed).shuffle(rows)
            orders[f"shuffle {seed}"] = rows
        for label, rows in orders.items():
            eff = held_out(rows, **params)
            e = np.array(list(eff.values()))
            line = {"dataset": path, "order": label, "mean": round(float(e.mean()), 4),
                    "p10": round(float(np.percentile(e, 10)), 4), "min": round(float(e.min()), 4)}
            if served:
                mine = [v for p, v in eff.items() if p.split("/", 1)[1] in served]
                rest = [v for p, v in eff.items() if p.split("/", 1)[1] not in served]
                line.update(served_mean=round(float(np.mean(mine)), 4), other_mean=round(float(np.mean(rest)), 4))
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
