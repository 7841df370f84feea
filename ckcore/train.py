"""``ckcore train``: fit the ``lightgbm`` selection model of an op from tune datasets, with
cross-validation grouped by problem (no problem in both training and validation folds), and
report on held-out problems, side by side with the ``rules`` heuristic:

- efficiency of a heuristic on a problem = oracle time (the best measured instance) / time of
  the instance it picks among the measured ones; mean, median, P10 and minimum over problems;
- top-1 (it picks the oracle) and top-5 (the oracle is among its 5 best) accuracy.

The regressor learns log(measured ms / ``rules`` estimate) (metadata ``"target":
"log_ms_over_rules"``): the cost model carries the problem's scale, the trees learn where it is
wrong. On the H200 conv datasets this raised held-out P10 efficiency from 0.92 to 0.96 (forward)
and from 0.91 to 0.96 (backward-data) over predicting log ms directly.

A LightGBM ``lambdarank`` ranker is fitted beside it (query groups = problems, relevance =
floor(30 x best time of the problem / measured time), NDCG truncated at 10), and the model
ranks by regressor + rules estimate + :data:`RANK_WEIGHT` x (best ranker score among the
candidates - the candidate's ranker score): the predicted log time, plus a penalty for the
candidates the ranker orders below its first (metadata ``"target":
"log_ms_over_rules+ranker"``, the ranker in ``<op>_<arch>.rank.txt``). The ranker scores the
regressor's first :data:`RANK_TOP` candidates only (metadata ``ranker.top``); the others come
after them, in the regressor's order. Held-out scores are computed per problem the same way.
Same folds (seed 0) on the H200 datasets (2026-11-22), held-out mean / P10 / min, regressor alone -> with the ranker:
gemm 0.971 / 0.908 / 0.494 -> 0.972 / 0.907 / 0.494, forward 0.989 / 0.968 / 0.780 -> 0.993 /
0.990 / 0.841, backward-data 0.985 / 0.959 / 0.526 -> 0.988 / 0.974 / 0.592, backward-weight
0.964 / 0.859 / 0.354 -> 0.965 / 0.872 / 0.354; ``rank_weight=0`` trains the regressor alone.

Then the final model is fitted on all problems and written as ``<op>_<arch>.txt`` (LightGBM text)
and ``<op>_<arch>.rank.txt`` (the ranker) with ``<op>_<arch>.json`` (features, target, dataset
provenance, metrics, GPU, parameters).
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import CkError
from .heuristics.learned import RANKED_TARGET, RESIDUAL_TARGET, feature_matrix, pair_features, predict_matrix
from .tune.dataset import Dataset

__all__ = ["PARAMS", "RANK_PARAMS", "RANK_WEIGHT", "RANK_ROUNDS", "RANK_TOP", "load_training_rows", "reliable", "train", "evaluate"]

# 63 leaves (31 until the twenty-fourth session): with the forward and backward-data datasets
# doubled by the seed-2 problems, held-out mean / P10 (fold seed 0) went from 0.9745 / 0.903 to
# 0.9784 / 0.929 (forward) and from 0.9704 / 0.906 to 0.9696 / 0.907 (backward-data; seed 1
# 0.9705 / 0.903 -> 0.9729 / 0.911); backward-weight on its dataset then 0.9718 / 0.905 -> 0.9758 /
# 0.916, gemm 0.9863 / 0.954 -> 0.9867 / 0.955 (`python benchmarks/train_sweep.py OP --configs`).
PARAMS = {"objective": "regression", "learning_rate": 0.1, "num_leaves": 63, "min_data_in_leaf": 10,
          "feature_fraction": 0.9, "bagging_fraction": 0.9, "bagging_freq": 1, "lambda_l2": 1.0,
          "num_threads": 1, "deterministic": True, "force_row_wise": True, "seed": 0, "verbose": -1}
ROUNDS = 250
RANK_LEVELS = 30  # relevance of a row: floor(RANK_LEVELS x best time of its problem / its time)
RANK_PARAMS = {**PARAMS, "objective": "lambdarank", "lambdarank_truncation_level": 10,
               "label_gain": list(range(RANK_LEVELS + 1))}
RANK_WEIGHT = 0.15  # log-time units per unit of ranker score
# Ranker rounds: 250 since the twenty-fourth session. On the doubled conv datasets (63 leaves),
# held-out mean / P10 with 100 -> 250 rounds (fold seeds 0 / 1): forward 0.9784 / 0.929 and
# 0.9784 / 0.924 -> 0.9802 / 0.935 and 0.9794 / 0.931; backward-data 0.9753 / 0.918 and 0.9755 /
# 0.919 -> 0.9777 / 0.929 and 0.9767 / 0.926; backward-weight 0.9798 / 0.926 and 0.9778 / 0.914
# -> 0.9807 / 0.928 and 0.9806 / 0.930 (`python benchmarks/train_sweep.py OP --configs
# '[{"rank_rounds": 250}]'`), for 2.5x the ranker's prediction cost. (100 had been chosen on the
# H200 datasets of 2026-11-22, where it scored as 250 at weight 0.1.)
RANK_ROUNDS = 250
# The ranker scores the regressor's first RANK_TOP candidates of a problem; the others come after
# (`ckcore.heuristics.learned.ranked`). Held-out on the conv datasets (fold seeds 0 / 1), mean /
# P10 / min with the ranker over every candidate -> over the first 12: forward 0.9802 / 0.935 /
# 0.545 and 0.9794 / 0.931 / 0.591, the same to 4 digits (first 8: 0.9801 / 0.9345 and the same;
# first 4: 0.9802 / 0.935 and 0.9788 / 0.9265). A problem of 35 candidates then has 12 ranker rows
# to predict, one of 200 still 12.
RANK_TOP = 12


def load_training_rows(registry, op: str, paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The ``ok`` rows of ``op`` in the datasets whose instance a kernel set still declares and
    whose family still supports the problem (:class:`Declared`), each with its features (recomputed by today's plugins), log time,
    problem name and ``rules`` estimate."""
    spec = registry.catalog.op(op)
    declared = Declared(registry, op)
    out = []
    for path in paths:
        for r in Dataset(path).rows():
            if r["op"] != op or r["status"] != "ok" or not reliable(r):
                continue
            fam = registry.catalog.families[r["family"]]
            key = fam.key_cls.from_dict(r["key"])
            problem = spec.problem(**r["problem"])
            if not declared.runs(fam.name, problem, r["instance"]):
                continue
            device = registry.arch.device(r["provenance"].get("gpu"))  # each row with its own GPU's peaks
            feats = pair_features(spec, fam, problem, key, registry.arch, device)
            # Rows of one problem measured on different GPUs are different selection tasks.
            out.append({"problem": f"{r['provenance_id']}/{problem.name}", "instance": key.name, "features": feats,
                        "log_ms": math.log(r["time_ms"]), "rules_ms": math.exp(feats["x_rules_log_ms"]),
                        "provenance": r["provenance"]})
    return out


class Declared:
    """Which instances the kernel sets of the installed plugins (every set a family names,
    ``default`` and ``full`` included) run for a problem: the declared instances of ``op``, or
    the variants :meth:`~ckcore.registry.Registry.specialized` derives from them (fused
    epilogues, for instance), that the family's ``supports`` accepts for the problem today.
    Dataset rows of other instances are left out of training and of the held-out scores:
    selection can never return them. They are retired instances (the stream-K plugin's atomic
    split-K tiles, which no set declares since they were measured wrong on the H200, were 1251
    ``ok`` rows of the gemm dataset, the best of their problem in some), and pairs measured
    before a family's ``supports`` refused them (the warp-specialised persistent gemm tiles
    with a fused epilogue, refused since they measured slow: the pick of the gemm model's worst
    held-out problem, 0.44, until they were left out)."""

    def __init__(self, registry, op: str):
        from .registry import Registry

        self._reg = Registry(registry.arch.arch, settings=registry.settings, catalog=registry.catalog)
        for name in self._reg.kernel_set_names(op):
            self._reg.declare(op, name)
        self._by_family: dict[str, list] = {}
        for inst in self._reg.of_op(op):
            self._by_family.setdefault(inst.family, []).append(inst)
        self._memo: dict[tuple[str, Any], set[str]] = {}

    def runs(self, family: str, problem, instance: str) -> bool:
        """Whether some declared instance of ``family`` runs ``problem`` as ``instance``."""
        names = self._memo.get((family, problem))
        if names is None:
            names = self._memo[(family, problem)] = set()
            for inst in self._by_family.get(family, []):
                try:
                    runs = self._reg.specialized(inst, problem)
                except CkError:  # a variant invalid for this problem is no candidate
                    continue
                if self._reg.family(runs).supports(runs.key, problem) is None:
                    names.add(runs.name)
        return instance in names


UNRELIABLE_BELOW_MS = 1.0


def reliable(row: dict[str, Any]) -> bool:
    """Whether an ``ok`` row's time can be trusted: not a single sample under
    :data:`UNRELIABLE_BELOW_MS`. The first timed run of a tune measurement carried ~0.1 ms of
    launch latency on an H200 (a ~10 µs kernel read 0.12 ms), so the one-sample rows that
    ``ckcore tune`` kept for instances it judged 10x slower than the best were wrong for small
    problems. Rows without ``samples`` (written before it was recorded) count as one sample
    when p20 == p80 == median."""
    samples = row.get("samples")
    if samples is None:
        samples = 1 if row["time_ms_p20"] == row["time_ms_p80"] == row["time_ms"] else 3
    return samples > 1 or row["time_ms"] >= UNRELIABLE_BELOW_MS


def _folds(problems: Sequence[str], k: int, seed: int) -> dict[str, int]:
    names = sorted(set(problems))
    order = np.random.default_rng(seed).permutation(len(names))
    return {names[i]: n % k for n, i in enumerate(order)}


def efficiencies(rows: Sequence[dict], scores: Sequence[float]) -> dict[str, tuple[float, bool, bool]]:
    """Per problem: (oracle time / time of the lowest-scored row, whether that row is the oracle,
    whether the oracle is among the 5 lowest-scored), ties broken by instance name as the
    heuristics do at run time."""
    by_problem: dict[str, list[tuple[float, str, float]]] = {}
    for r, s in zip(rows, scores):
        by_problem.setdefault(r["problem"], []).append((s, r["instance"], math.exp(r["log_ms"])))
    out = {}
    for problem, items in by_problem.items():
        oracle = min(t for _, _, t in items)
        ranked = sorted(items)
        out[problem] = (oracle / ranked[0][2], ranked[0][2] == oracle, any(t == oracle for _, _, t in ranked[:5]))
    return out


def evaluate(rows: Sequence[dict], scores: Sequence[float]) -> dict[str, float]:
    """Efficiency and accuracy of picking the lowest score per problem (see the module docstring)."""
    per = efficiencies(rows, scores).values()
    eff = [e for e, _, _ in per]
    top1, top5 = sum(t1 for _, t1, _ in per), sum(t5 for _, _, t5 in per)
    if not eff:
        raise ValueError("no problems to evaluate")
    e = np.array(eff)
    n = len(eff)
    return {"problems": n, "mean": float(e.mean()), "median": float(np.median(e)), "p10": float(np.percentile(e, 10)),
            "min": float(e.min()), "top1": top1 / n, "top5": top5 / n}


def _fit(rows, names, params, rounds):
    import lightgbm

    x = feature_matrix([r["features"] for r in rows], names)
    y = np.array([r["log_ms"] - r["features"]["x_rules_log_ms"] for r in rows])
    return lightgbm.train(params, lightgbm.Dataset(x, y, feature_name=list(names), free_raw_data=False),
                          num_boost_round=rounds)


def _fit_ranker(rows, names, params, rounds):
    """The ``lambdarank`` ranker: one query group per problem, relevance from each row's time
    relative to the best of its problem."""
    import lightgbm

    by_problem: dict[str, list[dict]] = {}
    for r in rows:
        by_problem.setdefault(r["problem"], []).append(r)
    ordered, groups, labels = [], [], []
    for items in by_problem.values():
        best = min(r["log_ms"] for r in items)
        ordered += items
        groups.append(len(items))
        labels += [int(math.floor(RANK_LEVELS * math.exp(best - r["log_ms"]))) for r in items]
    x = feature_matrix([r["features"] for r in ordered], names)
    return lightgbm.train(params, lightgbm.Dataset(x, np.array(labels), group=groups, feature_name=list(names),
                                                   free_raw_data=False), num_boost_round=rounds)


def held_out(rows, names, fold_of: dict[str, int], folds: int, *, rounds: int = ROUNDS, rank_weight: float = RANK_WEIGHT,
             rank_rounds: int = RANK_ROUNDS, params: dict | None = None, rank_params: dict | None = None):
    """(rows, predicted log ms) of the cross-validation: each fold's rows predicted by models
    fitted on the other folds (``params`` / ``rank_params``: LightGBM's, default the shipped
    :data:`PARAMS` / :data:`RANK_PARAMS`)."""
    params, rank_params = params or PARAMS, rank_params or RANK_PARAMS
    rules_column = names.index("x_rules_log_ms")
    held_rows, held_pred = [], []
    for k in range(folds):
        train_rows = [r for r in rows if fold_of[r["problem"]] != k]
        test_rows = [r for r in rows if fold_of[r["problem"]] == k]
        if not test_rows or not train_rows:
            continue
        booster = _fit(train_rows, names, params, rounds)
        ranker = _fit_ranker(train_rows, names, rank_params, rank_rounds) if rank_weight else None
        x = feature_matrix([r["features"] for r in test_rows], names)
        held_rows += test_rows
        held_pred += list(predict_matrix(booster, x, rules_column, ranker, rank_weight, RANK_TOP,
                                         [r["problem"] for r in test_rows]))
    return held_rows, held_pred


def train(registry, op: str, paths: Sequence[str | Path], out_dir: str | Path | None = None, *, folds: int = 5,
          seed: int = 0, rounds: int = ROUNDS, rank_weight: float = RANK_WEIGHT,
          rank_rounds: int = RANK_ROUNDS) -> dict[str, Any]:
    """Cross-validate, fit on everything, write the model (when ``out_dir`` is given) and
    return the metadata (held-out metrics for ``lightgbm`` and ``rules``). ``rounds``: the
    regressor's boosting rounds; ``rank_weight`` and ``rank_rounds``: the ranker's weight (0: the
    regressor alone, metadata ``"target": "log_ms_over_rules"``) and rounds."""
    rows = load_training_rows(registry, op, paths)
    if len({r["problem"] for r in rows}) < folds:
        raise ValueError(f"need at least {folds} problems of op {op!r} with ok rows in {list(map(str, paths))}")
    names = sorted({f for r in rows for f in r["features"]})
    fold_of = _folds([r["problem"] for r in rows], folds, seed)
    held_rows, held_pred = held_out(rows, names, fold_of, folds, rounds=rounds, rank_weight=rank_weight,
                                    rank_rounds=rank_rounds)
    metrics = {"lightgbm": evaluate(held_rows, held_pred),
               "rules": evaluate(held_rows, [r["rules_ms"] for r in held_rows])}
    booster = _fit(rows, names, PARAMS, rounds)
    stem = f"{op}_{registry.arch.arch}"
    ranker, ranker_meta = None, None
    if rank_weight:
        ranker = _fit_ranker(rows, names, RANK_PARAMS, rank_rounds)
        ranker_meta = {"file": f"{stem}.rank.txt", "weight": rank_weight, "rounds": rank_rounds,
                       "params": RANK_PARAMS, "levels": RANK_LEVELS, "top": RANK_TOP}
    provs = {json.dumps(r["provenance"], sort_keys=True) for r in rows}
    meta = {"op": op, "arch": registry.arch.arch, "features": names,
            "target": RANKED_TARGET if ranker else RESIDUAL_TARGET, "metrics": metrics, "folds": folds, "seed": seed, "rounds": rounds, "params": PARAMS,
            **({"ranker": ranker_meta} if ranker_meta else {}), "rows": len(rows),
            "problems": len(fold_of), "datasets": [str(p) for p in paths],
            "dataset_provenance": [json.loads(p) for p in sorted(provs)],
            "gpu": sorted({json.loads(p).get("gpu") or "interpreter" for p in provs}),
            "trained": datetime.date.today().isoformat(), "lightgbm": _lgb_version()}
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{stem}.txt").write_text(booster.model_to_string())
        if ranker is not None:
            (out_dir / ranker_meta["file"]).write_text(ranker.model_to_string())
        (out_dir / f"{stem}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def _lgb_version() -> str:
    import lightgbm

    return lightgbm.__version__
