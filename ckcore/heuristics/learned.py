"""The ``lightgbm`` heuristic: a LightGBM regressor per (op, arch) predicts each candidate's log
run time from problem, kernel and pair features; candidates are ranked by the prediction in one
batched call. Models ship in the op's plugin (``Operator.models_package``, folder ``models/``):
``<op>_<arch>.txt`` (LightGBM text format) and ``<op>_<arch>.json`` (features, dataset
provenance, metrics, GPU). Without a model for (op, arch), or with one whose features do not
match what the plugins produce, it ranks with ``rules`` and says so in the note.
"""

from __future__ import annotations

import json
import math
import threading
from importlib import resources
from typing import Any, Sequence

import numpy as np

from ..arch import ArchSpec, DeviceSpec
from ..errors import PluginError
from ..keys import ProblemBase
from . import Candidate, Ranked
from .rules import RulesHeuristic

__all__ = ["pair_features", "feature_matrix", "Model", "ModelMismatch", "LightGBMHeuristic", "load_model"]


class ModelMismatch(PluginError):
    """A selection model's feature list does not match the features the installed plugins produce."""


def pair_features(operator, family, problem, key, arch: ArchSpec, device: DeviceSpec) -> dict[str, float]:
    """All features of one (problem, instance) pair: ``p_*`` (the op's problem features),
    ``k_*`` (the family's kernel features), ``x_*`` (the family's pair features and the log of
    the ``rules`` estimate) and ``fam_<family>`` = 1."""
    out = {f"p_{k}": float(v) for k, v in operator.features(problem).items()}
    out.update({f"k_{k}": float(v) for k, v in family.features(key).items()})
    out.update({f"x_{k}": float(v) for k, v in family.pair_features(key, problem, arch).items()})
    out["x_rules_log_ms"] = math.log(max(family.estimate_ms(key, problem, arch, device), 1e-6))
    out[f"fam_{family.name}"] = 1.0
    return out


def feature_matrix(rows: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    """Rows of features in ``names`` order; an absent family flag is 0, any other absent
    feature NaN (LightGBM's missing value)."""
    x = np.full((len(rows), len(names)), np.nan)
    for j, name in enumerate(names):
        default = 0.0 if name.startswith("fam_") else np.nan
        x[:, j] = [r.get(name, default) for r in rows]
    return x


class Model:
    """A trained selection model: a LightGBM booster and its metadata."""

    def __init__(self, booster, meta: dict[str, Any]):
        self.booster = booster
        self.meta = meta
        self.features: list[str] = list(meta["features"])
        self.families = {f[len("fam_"):] for f in self.features if f.startswith("fam_")}

    def predict_log_ms(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        return self.booster.predict(feature_matrix(rows, self.features), num_threads=1)

    def check_features(self, produced: set[str]) -> None:
        """``produced``: the features the op's families produce for some candidates.
        :raises ModelMismatch: they include a feature the model lacks, or the model uses a
        problem feature (``p_*``) the op does not produce."""
        known = set(self.features)
        missing = sorted(f for f in produced - known if not f.startswith("fam_"))
        unknown = sorted(f for f in known - produced if f.startswith("p_"))
        if missing or unknown:
            raise ModelMismatch(f"selection model {self.meta.get('op')}/{self.meta.get('arch')} does not match the "
                                f"installed plugins' features (not in the model: {missing[:5]}; in the model only: "
                                f"{unknown[:5]}); retrain it with `ckcore train`")


def load_model(package: str, op: str, arch: str) -> Model | None:
    """The model of (op, arch) shipped in ``package``'s ``models/`` folder, or None."""
    import lightgbm

    folder = resources.files(package) / "models"
    text, meta = folder / f"{op}_{arch}.txt", folder / f"{op}_{arch}.json"
    if not (text.is_file() and meta.is_file()):
        return None
    info = json.loads(meta.read_text())
    if not isinstance(info.get("features"), list):
        raise ModelMismatch(f"model metadata {meta} has no feature list")
    return Model(lightgbm.Booster(model_str=text.read_text()), info)


class LightGBMHeuristic:
    """Ranks by predicted run time (ms) from the (op, arch) model; ``rules`` where none fits."""

    name = "lightgbm"

    def __init__(self):
        self._models: dict[tuple[str, str], tuple[Model | None, str]] = {}
        self._lock = threading.Lock()
        self._rules = RulesHeuristic()

    def model_for(self, operator, families, arch: ArchSpec, device: DeviceSpec) -> tuple[Model | None, str]:
        """(model or None, why) for the op on ``arch``; checked once against the features the
        op's families produce on a generated problem."""
        key = (operator.name, arch.arch)
        with self._lock:
            if key not in self._models:
                self._models[key] = self._load(operator, families, arch, device)
            return self._models[key]

    def _load(self, operator, families, arch, device):
        package = getattr(operator, "models_package", None)
        if not package:
            return None, f"no selection models for op {operator.name}"
        try:
            model = load_model(package, operator.name, arch.arch)
        except ModelMismatch as exc:
            return None, str(exc)
        if model is None:
            return None, f"no lightgbm model for {operator.name}/{arch.arch} in {package}"
        produced = set()
        try:
            problem = operator.problem(**operator.generate(np.random.default_rng(0)))
            for fam in families:
                sets = fam.kernel_sets()
                keys = sets.get("default", lambda a: [])(arch)
                if keys:
                    produced |= set(pair_features(operator, fam, problem, keys[0], arch, device))
        except NotImplementedError:
            return model, "model features not checked (the op has no problem generator)"
        try:
            model.check_features(produced)
        except ModelMismatch as exc:
            return None, str(exc)
        return model, "lightgbm"

    def rank(self, problem: ProblemBase, candidates: Sequence[Candidate], arch: ArchSpec, device: DeviceSpec) -> list[Ranked]:
        operator = candidates[0].operator if candidates else None
        if operator is None:
            return self._rules.rank(problem, candidates, arch, device)
        families = {c.family.name: c.family for c in candidates}.values()
        model, why = self.model_for(operator, families, arch, device)
        if model is None:
            ranked = self._rules.rank(problem, candidates, arch, device)
            return [Ranked(r.instance, r.score, f"{r.note}; rules fallback: {why}") for r in ranked]
        unseen = sorted({c.family.name for c in candidates} - model.families)
        if unseen:  # the model cannot rank a family it was never trained on
            ranked = self._rules.rank(problem, candidates, arch, device)
            why = f"the {operator.name}/{arch.arch} model has no data for families {', '.join(unseen)}"
            return [Ranked(r.instance, r.score, f"{r.note}; rules fallback: {why}") for r in ranked]
        rows = [pair_features(operator, c.family, problem, c.instance.key, arch, device) for c in candidates]
        pred = np.exp(model.predict_log_ms(rows))
        scored = [Ranked(c.instance, float(ms), "predicted ms (lightgbm)") for c, ms in zip(candidates, pred)]
        return sorted(scored, key=lambda r: (r.score, r.instance.name))
