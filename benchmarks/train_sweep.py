"""Held-out selection metrics of training settings, and the worst held-out problems (CPU only).

Runs ``ckcore train``'s cross-validation (5 folds grouped by problem, fold seeds 0 and 1) for each
setting in ``--configs`` (JSON list; keys ``params`` and ``rparams``: LightGBM parameters over
``ckcore.train.PARAMS`` / ``RANK_PARAMS``, ``rounds``, ``rank_rounds``, ``rank_weight``,
``rank_top``: null ranks every candidate) and prints one JSON line of metrics per (seed,
setting). With ``--worst N`` it then lists the N held-out problems of the shipped settings
(seed 0) with the lowest efficiency: the picked and the best instance, measured and predicted
times. Features are recomputed by the installed plugins, so a
feature change can be scored before the shipped model is retrained.

usage: python benchmarks/train_sweep.py OP [--configs '[{}, {"params": {"num_leaves": 63}}]'] [--worst 40]
"""

import argparse
import json
import math
import time

from ckcore import Registry
from ckcore import train as T
from ckcore.heuristics.learned import feature_matrix, predict_matrix


def held_out(rows, names, fold_of, cfg):
    """(rows, predicted log ms) of every fold's held-out problems under setting ``cfg``."""
    params = {**T.PARAMS, **cfg.get("params", {})}
    rparams = {**T.RANK_PARAMS, **cfg.get("params", {}), **cfg.get("rparams", {})}
    rounds, rank_rounds = cfg.get("rounds", T.ROUNDS), cfg.get("rank_rounds", T.RANK_ROUNDS)
    weight = cfg.get("rank_weight", T.RANK_WEIGHT)
    rules = names.index("x_rules_log_ms")
    out_rows, out_pred = [], []
    for k in sorted(set(fold_of.values())):
        train = [r for r in rows if fold_of[r["problem"]] != k]
        test = [r for r in rows if fold_of[r["problem"]] == k]
        booster = T._fit(train, names, params, rounds)
        ranker = T._fit_ranker(train, names, rparams, rank_rounds) if weight else None
        out_rows += test
        out_pred += list(predict_matrix(booster, feature_matrix([r["features"] for r in test], names), rules, ranker,
                                        weight, cfg.get("rank_top", T.RANK_TOP), [r["problem"] for r in test]))
    return out_rows, out_pred


def worst(rows, pred, n):
    by = {}
    for r, s in zip(rows, pred):
        by.setdefault(r["problem"], []).append((s, r))
    out = []
    for problem, items in by.items():
        items.sort(key=lambda t: (t[0], t[1]["instance"]))
        pick, best = items[0], min(items, key=lambda t: t[1]["log_ms"])
        out.append((math.exp(best[1]["log_ms"] - pick[1]["log_ms"]), problem.split("/", 1)[-1], pick, best))
    for eff, name, pick, best in sorted(out, key=lambda t: t[0])[:n]:
        print(f"{eff:.3f} {name}\n      pick {pick[1]['instance']} {math.exp(pick[1]['log_ms']) * 1e3:.1f} us "
              f"(predicted {math.exp(pick[0]) * 1e3:.1f}) | best {best[1]['instance']} "
              f"{math.exp(best[1]['log_ms']) * 1e3:.1f} us (predicted {math.exp(best[0]) * 1e3:.1f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("--data", default=None, help="dataset (default benchmarks/datasets/<op>_h200.jsonl.gz)")
    ap.add_argument("--configs", default="[{}]")
    ap.add_argument("--worst", type=int, default=0)
    args = ap.parse_args()
    reg = Registry("sm_90")
    rows = T.load_training_rows(reg, args.op, [args.data or f"benchmarks/datasets/{args.op}_h200.jsonl.gz"])
    names = sorted({f for r in rows for f in r["features"]})
    for seed in (0, 1):
        fold_of = T._folds([r["problem"] for r in rows], 5, seed)
        for cfg in json.loads(args.configs):
            t0 = time.perf_counter()
            metrics = T.evaluate(*held_out(rows, names, fold_of, cfg))
            print(json.dumps({"op": args.op, "fold_seed": seed, "setting": cfg, **{k: round(v, 4) for k, v in metrics.items()},
                              "seconds": round(time.perf_counter() - t0, 1)}), flush=True)
    if args.worst:
        worst(*held_out(rows, names, T._folds([r["problem"] for r in rows], 5, 0), {}), args.worst)


if __name__ == "__main__":
    main()
