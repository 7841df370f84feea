"""The lightgbm selection model: training reproduces recorded metrics, model loading checks the
feature list, selection falls back to rules (and says so) without a usable model."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ckcore.cli import main
from ckcore.heuristics import Candidate
from ckcore.heuristics.learned import (RANKED_TARGET, RESIDUAL_TARGET, LightGBMHeuristic, ModelMismatch, feature_matrix,
                                       load_model, pair_features, problem_features)
from ckcore.train import RANK_TOP, RANK_WEIGHT, train

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def reg(h200_gemm_registry):
    return h200_gemm_registry


@pytest.fixture(scope="module")
def trained(tmp_path_factory, reg):
    """A model trained on the small committed dataset, in a package ``ckt_models`` on sys.path."""
    root = tmp_path_factory.mktemp("models")
    pkg = root / "ckt_models"
    (pkg / "models").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    meta = train(reg, "gemm", [DATA / "gemm_small.jsonl.gz"], pkg / "models", folds=3, rounds=100)
    return root, pkg, meta


def test_training_reproduces_recorded_metrics(trained):
    recorded = json.loads((DATA / "gemm_small_metrics.json").read_text())
    _, _, meta = trained
    assert meta["rows"] == recorded["rows"] and meta["problems"] == recorded["problems"]
    for model in ("lightgbm", "rules"):
        assert meta["metrics"][model] == pytest.approx(recorded["metrics"][model], abs=1e-12)
    assert meta["features"] and meta["dataset_provenance"][0]["gpu"] == "NVIDIA H200"
    assert meta["target"] == RANKED_TARGET and meta["ranker"]["weight"] == RANK_WEIGHT


def test_training_without_the_ranker_reproduces_the_regressor_metrics(reg):
    recorded = json.loads((DATA / "gemm_small_metrics.json").read_text())
    meta = train(reg, "gemm", [DATA / "gemm_small.jsonl.gz"], None, folds=3, rounds=100, rank_weight=0)
    assert meta["target"] == RESIDUAL_TARGET and "ranker" not in meta
    assert meta["metrics"]["lightgbm"] == pytest.approx(recorded["metrics_rank_weight_0"]["lightgbm"], abs=1e-12)


def _operator(reg, package):
    op = type(reg.catalog.op("gemm"))()
    op.models_package = package
    return op


def _candidates(reg, op, problem):
    cands, _ = reg.candidates(problem)
    return [Candidate(c.instance, c.family, op) for c in cands if c.family.name in ("gemm_tiled", "gemm_tma")]


def test_model_ranks_by_predicted_time(trained, reg, monkeypatch):
    root, _, _ = trained
    monkeypatch.syspath_prepend(str(root))
    op = _operator(reg, "ckt_models")
    p = reg.problem("gemm", M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    ranked = LightGBMHeuristic().rank(p, _candidates(reg, op, p), reg.arch, reg.device)
    assert ranked and all(r.note == "predicted ms (lightgbm)" for r in ranked)
    assert [r.score for r in ranked] == sorted(r.score for r in ranked)


def test_ranker_penalises_all_but_its_first(trained, reg, monkeypatch):
    """With a ranker, each candidate's predicted log ms is the regressor's plus weight x (best
    ranker score - its score): the ranker's first keeps the regressor's time."""
    root, _, _ = trained
    monkeypatch.syspath_prepend(str(root))
    op = _operator(reg, "ckt_models")
    model = load_model("ckt_models", "gemm", "sm_90")
    assert model.ranker is not None
    p = reg.problem("gemm", M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    p_feats = problem_features(op, p)
    rows = [pair_features(op, c.family, p, c.instance.key, reg.arch, reg.device, p_feats) for c in _candidates(reg, op, p)]
    x = feature_matrix(rows, model.features)
    base = model.booster.predict(x) + x[:, model.features.index("x_rules_log_ms")]
    score = model.ranker.predict(x)
    weight = model.meta["ranker"]["weight"]
    assert model.meta["ranker"]["top"] == RANK_TOP
    model._rank_top = None  # as a model trained before ranker.top: the ranker over every candidate
    pred = model.predict_log_ms(rows)
    assert pred == pytest.approx(base + weight * (score.max() - score))
    assert pred[score.argmax()] == pytest.approx(base[score.argmax()])
    model._rank_top = 3  # fewer than the candidates: the regressor's first three ranked, then the rest
    assert len(rows) > 3
    pred = model.predict_log_ms(rows)
    keep = np.argsort(base, kind="stable")[:3]
    rest = np.setdiff1d(np.arange(len(rows)), keep)
    assert pred[keep] == pytest.approx(base[keep] + weight * (score[keep].max() - score[keep]))
    assert np.exp(pred[rest]).min() > np.exp(pred[keep]).max()


def test_model_with_a_bad_ranker_top_is_rejected(trained, monkeypatch):
    from ckcore.heuristics.learned import Model

    root, _, _ = trained
    monkeypatch.syspath_prepend(str(root))
    model = load_model("ckt_models", "gemm", "sm_90")
    for top in (0, -2, 2.5, "12"):
        meta = {**model.meta, "ranker": {**model.meta["ranker"], "top": top}}
        with pytest.raises(ModelMismatch, match="ranker.top"):
            Model(model.booster, meta, model.ranker)
    meta = {**model.meta, "ranker": {k: v for k, v in model.meta["ranker"].items() if k != "top"}}
    assert Model(model.booster, meta, model.ranker)._rank_top is None


def test_model_without_its_ranker_file_is_rejected(trained, reg, monkeypatch, tmp_path):
    _, pkg, _ = trained
    bad = tmp_path / "ckt_noranker"
    shutil.copytree(pkg, bad)
    (bad / "models" / "gemm_sm_90.rank.txt").unlink()
    monkeypatch.syspath_prepend(str(tmp_path))
    op = _operator(reg, "ckt_noranker")
    p = reg.problem("gemm", M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    ranked = LightGBMHeuristic().rank(p, _candidates(reg, op, p), reg.arch, reg.device)
    assert "rules fallback" in ranked[0].note and "ranker" in ranked[0].note


def test_model_with_a_foreign_feature_list_is_rejected(trained, reg, monkeypatch, tmp_path):
    root, pkg, _ = trained
    bad = tmp_path / "ckt_badmodels"
    shutil.copytree(pkg, bad)
    meta_path = bad / "models" / "gemm_sm_90.json"
    meta = json.loads(meta_path.read_text())
    meta["features"] = [f.replace("p_M", "p_rows") for f in meta["features"]]
    meta_path.write_text(json.dumps(meta))
    monkeypatch.syspath_prepend(str(tmp_path))
    op = _operator(reg, "ckt_badmodels")
    p = reg.problem("gemm", M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    ranked = LightGBMHeuristic().rank(p, _candidates(reg, op, p), reg.arch, reg.device)
    assert "rules fallback" in ranked[0].note and "does not match" in ranked[0].note


def test_without_a_model_rules_rank_and_say_so(reg):
    op = _operator(reg, None)
    p = reg.problem("gemm", M=64, N=4096, K=4096, dtype="bf16", layout="rcr")
    ranked = LightGBMHeuristic().rank(p, _candidates(reg, op, p), reg.arch, reg.device)
    assert "rules fallback: no selection models for op gemm" in ranked[0].note


def test_cli_train_reports_held_out_metrics(capsys, tmp_path):
    assert main(["train", "gemm", "--data", str(DATA / "gemm_small.jsonl.gz"), "--folds", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "lightgbm" in out and "rules" in out and "P10" in out
    assert (tmp_path / "gemm_sm_90.txt").exists() and json.loads((tmp_path / "gemm_sm_90.json").read_text())["folds"] == 3
    assert (tmp_path / "gemm_sm_90.rank.txt").exists()


@pytest.mark.parametrize("fields", [dict(M=64, N=4096, K=4096, dtype="bf16", layout="rcr"),
                                    dict(M=333, N=77, K=1000, dtype="fp16", layout="crr"),
                                    dict(M=8, N=4096, K=14336, dtype="fp32", layout="rcr")])
def test_candidate_matrix_is_the_feature_matrix_of_the_pair_features(trained, reg, monkeypatch, fields):
    """Selection writes the features straight into the model's columns; training builds them
    from per-pair dicts. Both must give the same matrix, missing features (NaN) included."""
    root, _, _ = trained
    monkeypatch.syspath_prepend(str(root))
    op = _operator(reg, "ckt_models")
    model = load_model("ckt_models", "gemm", "sm_90")
    p = reg.problem("gemm", **fields)
    cands, _ = reg.candidates(p)  # every family of the default set, stream-K plugin included
    cands = [Candidate(c.instance, c.family, op) for c in cands]
    p_feats = problem_features(op, p)
    rows = [pair_features(op, c.family, p, c.instance.key, reg.arch, reg.device, p_feats) for c in cands]
    want = feature_matrix(rows, model.features)
    for _ in range(2):  # the second time from the kernel-row cache
        got = model.candidate_matrix(op, p, cands, reg.arch, reg.device)
        np.testing.assert_array_equal(got, want)


def test_training_leaves_out_rows_of_instances_no_kernel_set_declares(reg, tmp_path):
    """A measured instance that no kernel set declares (retired, or added by hand) can never be
    selected, so it neither trains the model nor counts as a candidate in the held-out scores."""
    from ckcore.train import load_training_rows
    from ckcore.tune import Dataset

    src = list(Dataset(DATA / "gemm_small.jsonl.gz").rows())
    ds = Dataset(tmp_path / "with_undeclared.jsonl.gz")
    for r in src:
        ds.append(r)
    odd = dict(src[0], key={**src[0]["key"], "block_k": 16, "num_stages": 7})
    fam = reg.catalog.families[odd["family"]]
    odd["instance"] = fam.key_cls.from_dict(odd["key"]).name
    assert not fam.check(fam.key_cls.from_dict(odd["key"]), reg.arch)  # a valid key, just not declared
    ds.append(odd)
    base = load_training_rows(reg, "gemm", [DATA / "gemm_small.jsonl.gz"])
    rows = load_training_rows(reg, "gemm", [ds.path])
    assert len(rows) == len(base) and odd["instance"] not in {r["instance"] for r in rows}
    assert src[0]["instance"] in {r["instance"] for r in rows}


def test_training_leaves_out_rows_whose_family_refuses_the_problem_today(reg, tmp_path):
    """A declared instance measured on a problem that its family's ``supports`` refuses now (a
    rule added after the measurement) can never be selected there either: the row is left out,
    its problem's other rows stay."""
    from ckcore.train import load_training_rows
    from ckcore.tune import Dataset

    src = list(Dataset(DATA / "gemm_small.jsonl.gz").rows())
    ds = Dataset(tmp_path / "with_refused.jsonl.gz")
    for r in src:
        ds.append(r)
    first = next(r for r in src if r["instance"].endswith("_a16"))
    # The same aligned instance, measured (say) before supports checked pointer alignment.
    refused = dict(first, problem={**first["problem"], "ptr_align": 8})
    fam = reg.catalog.families[refused["family"]]
    problem = reg.catalog.op("gemm").problem(**refused["problem"])
    assert fam.supports(fam.key_cls.from_dict(refused["key"]), problem) is not None
    ds.append(refused)
    base = load_training_rows(reg, "gemm", [DATA / "gemm_small.jsonl.gz"])
    rows = load_training_rows(reg, "gemm", [ds.path])
    assert len(rows) == len(base)
    assert not any(problem.name in r["problem"] for r in rows)


def test_every_shipped_model_matches_the_installed_plugins():
    """Each installed op's shipped model (where its plugin ships one for sm_90) takes the features
    the plugins produce for every family of its default set; otherwise selection would fall back
    to rules for the whole op."""
    from ckcore import Registry

    reg = Registry("sm_90")
    checked = []
    for op in reg.catalog.ops:
        spec = reg.catalog.op(op)
        if not getattr(spec, "models_package", None) or load_model(spec.models_package, op, "sm_90") is None:
            continue
        reg.declare(op, "default")
        families = [reg.catalog.families[f] for f in {i.family for i in reg.of_op(op)}]
        model, why = LightGBMHeuristic().model_for(spec, families, reg.arch, reg.device)
        assert model is not None, (op, why)
        checked.append(op)
    assert {"gemm", "grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight"} <= set(checked)


def test_ranker_scores_only_the_regressors_first_rows():
    """``ranked``: the ranker scores the regressor's first ``top`` rows only; they get weight x
    (their best score - theirs), every other row comes after them in the regressor's order."""
    from ckcore.heuristics.learned import ranked

    out = np.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.5])
    scores = np.array([0.0, 2.0, 5.0, 1.0, 9.0, 1.0])
    asked = []

    def score_of(idx):
        asked.append(sorted(int(i) for i in idx))
        return scores[idx]

    got = ranked(out, score_of, 0.5, 3)
    assert asked == [[1, 2, 5]]  # the regressor's first three: 0.5, 1.0, 2.0
    assert got[[5, 1, 2]] == pytest.approx([0.5 + 0.5 * 4, 1.0 + 0.5 * 3, 2.0])
    assert min(got[[0, 3, 4]]) > max(got[[1, 2, 5]])
    assert list(np.argsort(got[[0, 4, 3]])) == [0, 1, 2]  # the rest in the regressor's order
    every = ranked(out, lambda idx: scores[idx], 0.5, None)
    assert every == pytest.approx(out + 0.5 * (scores.max() - scores))
    assert ranked(out, lambda idx: scores[idx], 0.5, 6) == pytest.approx(every)


def test_fold_predictions_rank_each_problem_as_run_time_does():
    """``predict_matrix`` over rows of several problems (training folds) equals one call per
    problem (run time), ranker top included."""
    from ckcore.heuristics.learned import predict_matrix

    rng = np.random.default_rng(0)

    class Linear:  # a stand-in booster: a fixed linear score
        def __init__(self, w):
            self.w = w

        def predict(self, x, num_threads=1):
            return x @ self.w

    x = rng.normal(size=(40, 3))
    problems = rng.integers(0, 3, size=40)
    reg_, rank_ = Linear(np.array([1.0, 0.5, 0.0])), Linear(np.array([0.0, 1.0, 2.0]))
    whole = predict_matrix(reg_, x, None, rank_, 0.3, 4, list(problems))
    for p in range(3):
        rows = np.where(problems == p)[0]
        assert whole[rows] == pytest.approx(predict_matrix(reg_, x[rows], None, rank_, 0.3, 4))
