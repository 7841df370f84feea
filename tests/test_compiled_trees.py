"""Compiled selection trees (lleaves): the same predictions as LightGBM, stored in the cache
under a fingerprint of the model and the host, loaded when present, and LightGBM's own trees
(said so) whenever they are absent, damaged, disabled or lleaves is missing."""

from pathlib import Path

import attrs
import numpy as np
import pytest

from ckcore import Registry
from ckcore.cache import Cache
from ckcore.heuristics import Candidate, compiled
from ckcore.heuristics.learned import LightGBMHeuristic, feature_matrix, load_model, pair_features, problem_features
from ckcore.train import train

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.skipif(compiled.available() is not None, reason=str(compiled.available()))


@pytest.fixture(scope="module")
def reg(h200_gemm_registry):
    return h200_gemm_registry


@pytest.fixture(scope="module")
def model_pkg(tmp_path_factory, reg):
    """A small model (40 + 100 rounds) trained on the committed dataset, as package ``ckt_fast``."""
    root = tmp_path_factory.mktemp("models")
    (root / "ckt_fast" / "models").mkdir(parents=True)
    (root / "ckt_fast" / "__init__.py").write_text("")
    train(reg, "gemm", [DATA / "gemm_small.jsonl.gz"], root / "ckt_fast" / "models", folds=3, rounds=40)
    return root


@pytest.fixture
def op_model(model_pkg, reg, monkeypatch):
    monkeypatch.syspath_prepend(str(model_pkg))
    op = type(reg.catalog.op("gemm"))()
    op.models_package = "ckt_fast"
    return op, load_model("ckt_fast", "gemm", "sm_90")


def _rows(reg, op, model, **fields):
    p = reg.problem("gemm", **fields)
    cands, _ = reg.candidates(p)
    cands = [Candidate(c.instance, c.family, op) for c in cands if c.family.name in ("gemm_tiled", "gemm_tma")]
    feats = problem_features(op, p)
    return p, cands, [pair_features(op, c.family, p, c.instance.key, reg.arch, reg.device, feats) for c in cands]


@pytest.mark.parametrize("fields", [dict(M=64, N=4096, K=4096, dtype="bf16", layout="rcr"),
                                    dict(M=3000, N=2000, K=1000, dtype="fp16", layout="rrr"),
                                    dict(M=1, N=4096, K=14336, dtype="fp32", layout="rcr")])
def test_compiled_trees_predict_what_lightgbm_predicts(op_model, reg, tmp_path, fields):
    op, model = op_model
    cache = Cache(tmp_path / "cache")
    reg_trees, rank_trees, how = model.evaluators(cache, compile=True)
    assert how == "compiled trees"
    _, _, rows = _rows(reg, op, model, **fields)
    x = feature_matrix(rows, model.features)
    assert np.isnan(x).any()  # absent features (NaN, LightGBM's missing value) take the same branches
    np.testing.assert_allclose(reg_trees.predict(x), model.booster.predict(x), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rank_trees.predict(x), model.ranker.predict(x), rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict_log_ms(rows, cache), model.predict_log_ms(rows), rtol=0, atol=1e-12)


def test_compiled_trees_are_cached_per_model_and_host(op_model, tmp_path):
    _, model = op_model
    cache = Cache(tmp_path / "cache")
    compiled.compile_into(cache, model.texts[0], "regressor")
    fp = compiled.fingerprint(model.texts[0])
    entry = cache.lookup(fp)
    assert entry.ok and entry.meta["kind"] == "compiled_trees" and entry.meta["cpu"]
    assert fp != compiled.fingerprint(model.texts[1]) and fp != compiled.fingerprint(model.texts[0] + "\n")
    assert compiled.load(cache, model.texts[0]) is not None
    assert compiled.load(Cache(tmp_path / "other"), model.texts[0]) is None  # never compiled there


def test_a_damaged_entry_is_not_loaded(op_model, reg, tmp_path):
    op, model = op_model
    cache = Cache(tmp_path / "cache")
    compiled.compile_into(cache, model.texts[0], "regressor")
    obj = cache.lookup(compiled.fingerprint(model.texts[0])).files[compiled.OBJECT]
    obj.write_bytes(b"\0" * 64)
    assert compiled.load(cache, model.texts[0]) is None  # the sha256 no longer matches: treated as missing
    fresh = load_model("ckt_fast", "gemm", "sm_90")
    assert "not compiled yet" in fresh.evaluators(cache)[2]
    _, _, rows = _rows(reg, op, fresh, M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    assert np.isfinite(fresh.predict_log_ms(rows, cache)).all()


def test_selection_uses_compiled_trees_from_the_registry_cache(op_model, reg):
    op, model = op_model
    heuristic = LightGBMHeuristic()
    p, cands, _ = _rows(reg, op, model, M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    plain = heuristic.rank(p, cands, reg.arch, reg.device)
    key = ("gemm", "sm_90")
    loaded, _ = heuristic.model_for(op, {c.family for c in cands}, reg.arch, reg.device)
    assert "not compiled yet" in loaded.evaluators(reg.cache)[2]
    assert loaded.evaluators(reg.cache, compile=True)[2] == "compiled trees"
    fast = heuristic.rank(p, cands, reg.arch, reg.device, registry=reg)
    assert [r.instance.name for r in fast] == [r.instance.name for r in plain]
    assert [r.score for r in fast] == pytest.approx([r.score for r in plain], rel=1e-12)
    assert heuristic._models[key][0] is loaded


def test_prepare_says_what_selection_uses(reg):
    heuristic = LightGBMHeuristic()
    off = Registry("sm_90", settings=attrs.evolve(reg.settings, compiled_trees=False), device_name="NVIDIA H200")
    off.declare("gemm", "default")
    assert heuristic.prepare(off, "gemm") == "lightgbm, LightGBM trees (CKCORE_COMPILED_TREES=0)"


def test_without_lleaves_lightgbm_predicts_and_says_why(op_model, tmp_path, monkeypatch):
    _, model = op_model
    monkeypatch.setattr(compiled, "available", lambda: "lleaves is not installed (test)")
    reg_trees, _, how = model.evaluators(Cache(tmp_path / "cache"), compile=True)
    assert reg_trees is model.booster and how == "LightGBM trees (lleaves is not installed (test))"


def test_an_entry_that_fails_to_load_leaves_selection_to_lightgbm(op_model, tmp_path, monkeypatch):
    _, model = op_model
    cache = Cache(tmp_path / "cache")
    compiled.compile_into(cache, model.texts[0], "regressor")

    def broken(text_path, object_path):
        raise OSError("cannot map the object file")

    monkeypatch.setattr(compiled, "_open", broken)
    fresh = load_model("ckt_fast", "gemm", "sm_90")
    booster, _, how = fresh.evaluators(cache)
    assert booster is fresh.booster and "loading compiled ones failed" in how and "cannot map" in how
