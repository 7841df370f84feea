"""The ``lightgbm`` heuristic: a LightGBM regressor per (op, arch) predicts each candidate's log
run time from problem, kernel and pair features, corrected by a LightGBM ranker where the model
has one; candidates are ranked by the prediction in one batched call. Models ship in the op's
plugin (``Operator.models_package``, folder ``models/``): ``<op>_<arch>.txt`` (LightGBM text
format), ``<op>_<arch>.rank.txt`` (the ranker, when the metadata names one) and
``<op>_<arch>.json`` (features, target, dataset provenance, metrics, GPU). Without a model for
(op, arch), or with one whose features do not match what the plugins produce, it ranks with
``rules`` and says so in the note.
"""

from __future__ import annotations

import functools

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

__all__ = ["problem_features", "pair_features", "feature_matrix", "predict_matrix", "ranked", "Model", "ModelMismatch", "LightGBMHeuristic", "load_model", "load_model_from",
           "RESIDUAL_TARGET", "RANKED_TARGET"]


RESIDUAL_TARGET = "log_ms_over_rules"
RANKED_TARGET = "log_ms_over_rules+ranker"


class ModelMismatch(PluginError):
    """A selection model's feature list does not match the features the installed plugins produce."""


def problem_features(operator, problem) -> dict[str, float]:
    """The op's problem features, prefixed ``p_`` (the same for every candidate)."""
    return {f"p_{k}": float(v) for k, v in operator.features(problem).items()}


def pair_features(operator, family, problem, key, arch: ArchSpec, device: DeviceSpec,
                  p_features: dict[str, float] | None = None) -> dict[str, float]:
    """All features of one (problem, instance) pair: ``p_*`` (the op's problem features; pass
    ``p_features`` from :func:`problem_features` to reuse them across candidates), ``k_*`` (the
    family's kernel features), ``x_*`` (the family's pair features and the log of the ``rules``
    estimate) and ``fam_<family>`` = 1."""
    out = dict(p_features if p_features is not None else problem_features(operator, problem))
    out.update(_kernel_features(family, key))
    out.update({f"x_{k}": float(v) for k, v in family.pair_features(key, problem, arch).items()})
    out["x_rules_log_ms"] = math.log(max(family.estimate_ms(key, problem, arch, device), 1e-6))
    out[f"fam_{family.name}"] = 1.0
    return out


@functools.lru_cache(maxsize=65536)
def _kernel_features(family, key) -> dict[str, float]:
    """The family's kernel features of ``key``, prefixed ``k_`` (static per instance: cached)."""
    return {f"k_{k}": float(v) for k, v in family.features(key).items()}


def feature_matrix(rows: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    """Rows of features in ``names`` order; an absent family flag is 0, any other absent
    feature NaN (LightGBM's missing value)."""
    defaults = [(name, 0.0 if name.startswith("fam_") else np.nan) for name in names]
    return np.array([[r.get(name, d) for name, d in defaults] for r in rows], dtype=float).reshape(len(rows), len(names))


def predict_matrix(booster, x: np.ndarray, rules_column: int | None, ranker=None, rank_weight: float = 0.0,
                   rank_top: int | None = None, problems: Sequence[Any] | None = None) -> np.ndarray:
    """Predicted log ms of the feature rows ``x``: the regressor's output, plus the ``rules``
    estimate in column ``rules_column`` for residual models, then with a ``ranker`` per problem
    (:func:`ranked`): rank_weight x (the best ranker score - the row's score) added to the
    ``rank_top`` rows the regressor ranks first (every row when None), the other rows after
    them. ``problems``: the problem of each row (training folds: the ranker scores every row in
    one call, and each problem's ranking takes its first rows' scores); None: the rows are one
    problem's candidates (run time)."""
    out = booster.predict(x, num_threads=1)
    if rules_column is not None:
        out = out + x[:, rules_column]
    if ranker is None or not len(out):
        return out
    if problems is None:
        return ranked(out, lambda idx: ranker.predict(x[idx], num_threads=1), rank_weight, rank_top)
    score = ranker.predict(x, num_threads=1)
    result = np.empty_like(out)
    groups: dict[Any, list[int]] = {}
    for i, p in enumerate(problems):
        groups.setdefault(p, []).append(i)
    for rows in groups.values():
        idx = np.asarray(rows)
        result[idx] = ranked(out[idx], lambda sub, idx=idx: score[idx[sub]], rank_weight, rank_top)
    return result


_AFTER = 1e-6  # log-ms margin between the last ranked row and the first row after them


def ranked(out: np.ndarray, score_of, rank_weight: float, top: int | None) -> np.ndarray:
    """One problem's candidates ranked by regressor and ranker: ``out`` the regressor's
    predicted log ms, ``score_of(indices)`` the ranker's scores of those rows. The ``top`` rows
    the regressor ranks first (every row when None or when there are no more) get rank_weight x
    (the best ranker score among them - the row's score) added; the others are placed after all
    of them, in the regressor's order, and the ranker never scores them (their values then order
    the candidates, they are no predicted time). On the conv datasets a ranker over the
    regressor's first 12 picked what one over every candidate picks on all but a few held-out
    problems, with the same mean / P10 (``ckcore/train.py``)."""
    n = len(out)
    if top is None or n <= top:
        s = score_of(np.arange(n))
        return out + rank_weight * (s.max() - s)
    keep = np.argsort(out, kind="stable")[:top]
    s = score_of(keep)
    kept = out[keep] + rank_weight * (s.max() - s)
    result = np.empty_like(out)
    rest = np.ones(n, dtype=bool)
    rest[keep] = False
    result[keep] = kept
    # out[rest] >= out[keep].max(): every other row lands after the largest kept value, by a
    # margin that survives the exp the heuristic takes of these log values
    result[rest] = kept.max() + _AFTER + (out[rest] - out[keep].max())
    return result


class Model:
    """A trained selection model: a LightGBM booster and its metadata."""

    def __init__(self, booster, meta: dict[str, Any], ranker=None, texts: tuple[str, str | None] | None = None):
        self.booster = booster
        self.meta = meta
        self.texts = texts  # (regressor, ranker) LightGBM text: what compiled trees are made of
        self._compiled: dict[str, tuple[Any, Any, str]] = {}
        self._kernel_rows: dict[tuple[str, Any], list[tuple[int, float]]] = {}
        self.features: list[str] = list(meta["features"])
        self.families = {f[len("fam_"):] for f in self.features if f.startswith("fam_")}
        target = meta.get("target")
        self._rules_column = self.features.index("x_rules_log_ms") if target in (RESIDUAL_TARGET, RANKED_TARGET) else None
        self.ranker, self._rank_weight, self._rank_top = None, 0.0, None
        if target == RANKED_TARGET:
            if ranker is None or not isinstance(meta.get("ranker"), dict):
                raise ModelMismatch(f"selection model {meta.get('op')}/{meta.get('arch')} has target {RANKED_TARGET!r} "
                                    f"but no ranker")
            self.ranker = ranker
            self._rank_weight = float(meta["ranker"]["weight"])
            top = meta["ranker"].get("top")  # models trained before it rank every candidate
            if top is not None and (not isinstance(top, int) or top < 1):
                raise ModelMismatch(f"selection model {meta.get('op')}/{meta.get('arch')}: ranker.top={top!r}, "
                                    f"expected a positive integer or none")
            self._rank_top = top

    def candidate_matrix(self, operator, problem, candidates: Sequence[Candidate], arch: ArchSpec,
                         device: DeviceSpec) -> np.ndarray:
        """The feature rows of ``candidates`` on ``problem`` in this model's column order: the
        matrix :func:`feature_matrix` makes of their :func:`pair_features`, written straight into
        an array (problem features once for all rows, kernel features from a per-instance cache,
        only the pair features and the ``rules`` estimate per candidate)."""
        cols, rules_col = self._columns, self._rules_column_any
        base = [0.0 if name.startswith("fam_") else math.nan for name in self.features]
        for name, value in problem_features(operator, problem).items():
            col = cols.get(name)
            if col is not None:
                base[col] = value
        rows = []
        for c in candidates:  # Python lists: per-element numpy stores cost more than the features
            fam, key = c.family, c.instance.key
            row = base.copy()
            for col, value in self._kernel_row(fam, key):
                row[col] = value
            for name, value in fam.pair_features(key, problem, arch).items():
                col = cols.get("x_" + name)
                if col is not None:
                    row[col] = value
            if rules_col is not None:
                row[rules_col] = math.log(max(fam.estimate_ms(key, problem, arch, device), 1e-6))
            rows.append(row)
        return np.array(rows, dtype=float).reshape(len(rows), len(self.features))

    @functools.cached_property
    def _columns(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.features)}

    @functools.cached_property
    def _rules_column_any(self) -> int | None:
        return self._columns.get("x_rules_log_ms")

    def _kernel_row(self, family, key) -> list[tuple[int, float]]:
        """(column, value) of ``key``'s kernel features and family flag in this model (cached per
        instance; they are static)."""
        found = self._kernel_rows.get((family.name, key))
        if found is None:
            cols = self._columns
            feats = {**_kernel_features(family, key), f"fam_{family.name}": 1.0}
            found = [(cols[k], v) for k, v in feats.items() if k in cols]
            self._kernel_rows[(family.name, key)] = found
        return found

    def evaluators(self, cache=None, *, compile: bool = False) -> tuple[Any, Any, str]:
        """(regressor, ranker, how): the compiled trees of both models from ``cache`` when
        present there (with ``compile``: compiled into it first), else the LightGBM boosters;
        ``how`` says which, and why not compiled. Memoised per cache root."""
        if cache is None or self.texts is None:
            return self.booster, self.ranker, "LightGBM trees (no cache to hold compiled ones)"
        root = str(cache.root)
        found = self._compiled.get(root)
        if found is not None and (not compile or found[2] == "compiled trees"):
            return found
        from . import compiled

        why = compiled.available()
        if why is not None:
            found = (self.booster, self.ranker, f"LightGBM trees ({why})")
        else:
            label = f"selection model {self.meta.get('op')}/{self.meta.get('arch')}"
            get = (lambda text, what: compiled.compile_into(cache, text, f"{label} {what}")) if compile else \
                (lambda text, what: compiled.load(cache, text))
            try:
                reg = get(self.texts[0], "regressor")
                rank = get(self.texts[1], "ranker") if self.ranker is not None and self.texts[1] else None
            except Exception as exc:
                if compile:
                    raise
                # an entry that lleaves or LLVM cannot load must not fail selection
                found = (self.booster, self.ranker, f"LightGBM trees (loading compiled ones failed: {exc!r})")
                self._compiled[root] = found
                return found
            if reg is None or (self.ranker is not None and rank is None):
                found = (self.booster, self.ranker, "LightGBM trees (not compiled yet: `ckcore build` compiles them)")
            else:
                found = (reg, rank, "compiled trees")
        self._compiled[root] = found
        return found

    def predict_matrix(self, x: np.ndarray, cache=None) -> np.ndarray:
        """Predicted log run time (ms) of the feature rows ``x`` (:meth:`candidate_matrix`);
        see :meth:`predict_log_ms`."""
        booster, ranker, _ = self.evaluators(cache)
        return predict_matrix(booster, x, self._rules_column, ranker, self._rank_weight, self._rank_top)

    def predict_log_ms(self, rows: Sequence[dict[str, float]], cache=None) -> np.ndarray:
        """Predicted log run time (ms) of each feature row (``rows``: the candidates of one
        problem). A model whose metadata says ``"target": "log_ms_over_rules"`` predicts the log
        of measured / ``rules`` estimate, and the estimate (feature ``x_rules_log_ms``) is added
        back; with ``"target": "log_ms_over_rules+ranker"``, ``ranker.weight`` x (the best
        ranker score among the rows - the row's score) is added too: the ranker's first keeps
        the regressor's time, the candidates it orders below are penalised. With ``ranker.top``
        = K in the metadata only the regressor's first K rows are ranked so; the others come
        after them (:func:`ranked`)."""
        return self.predict_matrix(feature_matrix(rows, self.features), cache)

    def check_features(self, produced: set[str], *, exact_prefix: str | None = None) -> None:
        """``produced``: features a plugin produces. :raises ModelMismatch: one of them is not
        in the model, or (with ``exact_prefix``) the model has a feature of that prefix that is
        not produced (the op's problem features must match exactly; each family produces only
        its own kernel features)."""
        known = set(self.features)
        missing = sorted(f for f in produced - known if not f.startswith("fam_"))
        unknown = sorted(f for f in known - produced if exact_prefix and f.startswith(exact_prefix))
        if missing or unknown:
            raise ModelMismatch(f"selection model {self.meta.get('op')}/{self.meta.get('arch')} does not match the "
                                f"installed plugins' features (not in the model: {missing[:5]}; in the model only: "
                                f"{unknown[:5]}); retrain it with `ckcore train`")


def load_model(package: str, op: str, arch: str) -> Model | None:
    """The model of (op, arch) shipped in ``package``'s ``models/`` folder, or None."""
    return load_model_from(resources.files(package) / "models", op, arch)


def load_model_from(folder, op: str, arch: str) -> Model | None:
    """The model of (op, arch) in ``folder`` (``<op>_<arch>.txt`` and ``.json``, a ``pathlib`` or
    ``importlib.resources`` path), or None. :raises ModelMismatch: the metadata is incomplete."""
    import lightgbm

    text, meta = folder / f"{op}_{arch}.txt", folder / f"{op}_{arch}.json"
    if not (text.is_file() and meta.is_file()):
        return None
    info = json.loads(meta.read_text())
    if not isinstance(info.get("features"), list):
        raise ModelMismatch(f"model metadata {meta} has no feature list")
    ranker, ranker_text = None, None
    if info.get("target") == RANKED_TARGET:
        rank_file = folder / str((info.get("ranker") or {}).get("file", f"{op}_{arch}.rank.txt"))
        if not rank_file.is_file():
            raise ModelMismatch(f"model metadata {meta} names a ranker, but {rank_file} is missing")
        ranker_text = rank_file.read_text()
        ranker = lightgbm.Booster(model_str=ranker_text)
    model_text = text.read_text()
    return Model(lightgbm.Booster(model_str=model_text), info, ranker, (model_text, ranker_text))


class LightGBMHeuristic:
    """Ranks by predicted run time (ms) from the (op, arch) model; ``rules`` where none fits."""

    name = "lightgbm"
    uses_registry = True  # for the cache that holds compiled trees

    def __init__(self):
        self._models: dict[tuple[str, str], tuple[Model | None, str]] = {}
        self._checked: dict[tuple[tuple[str, str], str], str | None] = {}
        self._probes: dict[tuple[str, str], Any] = {}  # a generated problem per (op, arch)
        self._lock = threading.Lock()
        self._rules = RulesHeuristic()

    def model_for(self, operator, families, arch: ArchSpec, device: DeviceSpec) -> tuple[Model | None, str]:
        """(model or None, why) for the op on ``arch``. The model's problem features are checked
        once; each family's features are checked the first time one of its instances is ranked
        (families the model never saw are left to the caller)."""
        key = (operator.name, arch.arch)
        with self._lock:
            if key not in self._models:
                self._models[key] = self._load(operator, arch, device)
            model, why = self._models[key]
            if model is None:
                return None, why
            for fam in families:
                if fam.name in model.families and (key, fam.name) not in self._checked:
                    self._checked[(key, fam.name)] = self._check_family(model, operator, fam, arch, device)
            bad = [self._checked[(key, f.name)] for f in families if self._checked.get((key, f.name))]
            return (None, bad[0]) if bad else (model, why)

    def _load(self, operator, arch, device):
        package = getattr(operator, "models_package", None)
        if not package:
            return None, f"no selection models for op {operator.name}"
        try:
            model = load_model(package, operator.name, arch.arch)
        except ModelMismatch as exc:
            return None, str(exc)
        except Exception as exc:  # an unreadable model file: fall back, and say why
            return None, f"the {operator.name}/{arch.arch} model in {package} failed to load: {exc!r}"
        if model is None:
            return None, f"no lightgbm model for {operator.name}/{arch.arch} in {package}"
        try:
            self._probes[(operator.name, arch.arch)] = probe = operator.problem(
                **operator.generate(np.random.default_rng(0)))
        except NotImplementedError:
            return model, "lightgbm (features not checked: the op has no problem generator)"
        produced = set(problem_features(operator, probe))
        try:
            model.check_features(produced, exact_prefix="p_")
        except ModelMismatch as exc:
            return None, str(exc)
        return model, "lightgbm"

    def _check_family(self, model, operator, fam, arch, device) -> str | None:
        """Why ``fam``'s features do not match the model, or None."""
        probe = self._probes.get((operator.name, arch.arch))
        keys = fam.kernel_sets().get("default", lambda a: [])(arch)
        if probe is None or not keys:
            return None
        produced = {f for f in pair_features(operator, fam, probe, keys[0], arch, device) if not f.startswith("p_")}
        try:
            model.check_features(produced)
        except ModelMismatch as exc:
            return str(exc)
        return None

    def prepare(self, registry, op: str) -> str:
        """Compile ``op``'s model for ``registry.arch`` into ``registry.cache`` (when
        ``registry.settings.compiled_trees``) and say what selection will predict with."""
        operator = registry.catalog.op(op)
        families = [registry.catalog.families[f] for f in {i.family for i in registry.of_op(op)}]
        model, why = self.model_for(operator, families, registry.arch, registry.device)
        if model is None:
            return f"rules ({why})"
        if not registry.settings.compiled_trees:
            return "lightgbm, LightGBM trees (CKCORE_COMPILED_TREES=0)"
        try:
            return f"lightgbm, {model.evaluators(registry.cache, compile=True)[2]}"
        except Exception as exc:  # a compiler failure must not fail the kernel build: predict with LightGBM
            return f"lightgbm, LightGBM trees (compiling them failed: {exc.__class__.__name__}: {exc})"

    def rank(self, problem: ProblemBase, candidates: Sequence[Candidate], arch: ArchSpec, device: DeviceSpec,
             registry=None) -> list[Ranked]:
        """``registry``: where compiled trees are looked up (its cache, when its settings allow
        them); without one, LightGBM predicts."""
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
        cache = registry.cache if registry is not None and registry.settings.compiled_trees else None
        pred = np.exp(model.predict_matrix(model.candidate_matrix(operator, problem, candidates, arch, device), cache))
        scored = [Ranked(c.instance, float(ms), "predicted ms (lightgbm)") for c, ms in zip(candidates, pred)]
        return sorted(scored, key=lambda r: (r.score, r.instance.name))
