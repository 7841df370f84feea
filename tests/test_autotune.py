"""The ``autotune`` heuristic in the interpreter: it measures the top-k, picks the fastest that
validates, puts failed candidates last, persists its measurements and resumes from them."""

import json

import pytest

from ckcore.heuristics import autotune
from ckcore.tune.worker import make_registry

P1 = {"M": 16, "N": 24, "K": 32, "dtype": "fp32", "layout": "rrr"}


@pytest.fixture(autouse=True)
def settings(monkeypatch, tmp_path):
    monkeypatch.setenv("CKCORE_INTERPRET", "1")
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CKCORE_HEURISTIC", "autotune")
    monkeypatch.setenv("CKCORE_AUTOTUNE_TOP_K", "3")


def _registry():
    # gemm with the test plugin's instances that are right, wrong, and raise at launch
    return make_registry({"op": "gemm", "kernel_set": "faulty_fast", "plugin_modules": ["ckt_faulty"]})


def _count_measurements(monkeypatch):
    calls = []
    real = autotune._measure

    def counting(registry, problem, name, cache):
        calls.append(name)
        return real(registry, problem, name, cache)

    monkeypatch.setattr(autotune, "_measure", counting)
    return calls


def test_measures_top_k_and_puts_failures_last(monkeypatch):
    calls = _count_measurements(monkeypatch)
    reg = _registry()
    sel = reg.select(reg.problem("gemm", **P1))
    names = [r.instance.name for r in sel.ranked]
    assert sel.instance.name == "gemm_faulty_ok"
    assert sel.ranked[0].note.startswith("measured ms (autotune")
    assert sorted(calls) == sorted(names) and len(calls) == 3
    failed = {r.instance.name: r.note for r in sel.ranked[1:]}
    assert "wrong_result" in failed["gemm_faulty_wrong"] and "launch_failed" in failed["gemm_faulty_raise"]
    assert all(r.score == float("inf") for r in sel.ranked[1:])


def test_persisted_measurements_are_reused_by_a_new_process(monkeypatch):
    first = _registry()
    first.select(first.problem("gemm", **P1))
    calls = _count_measurements(monkeypatch)
    again = _registry()  # a fresh registry: no memoised selection, same cache
    sel = again.select(again.problem("gemm", **P1))
    # times and wrong results are reused; a launch that raised may be transient: measured again
    assert calls == ["gemm_faulty_raise"] and sel.instance.name == "gemm_faulty_ok"


def test_an_interrupted_autotune_resumes(monkeypatch):
    reg = _registry()
    problem = reg.problem("gemm", **P1)
    cands, _ = reg.candidates(problem)
    h = autotune.AutotuneHeuristic()
    store = h.store_for(reg, "gemm")
    key = autotune.entry_key(problem, cands)
    store.put(key, {"times": {"gemm_faulty_ok": 1.0}, "errors": {}})  # one done before a kill
    calls = _count_measurements(monkeypatch)
    sel = reg.select(problem)
    assert sorted(calls) == ["gemm_faulty_raise", "gemm_faulty_wrong"]
    assert sel.instance.name == "gemm_faulty_ok" and sel.ranked[0].score == 1.0
    saved = json.loads(store.path.read_text())[key]
    assert set(saved["errors"]) == {"gemm_faulty_wrong"}  # the raised launch is not persisted


def test_a_damaged_store_is_remeasured_not_fatal():
    reg = _registry()
    store = autotune.AutotuneHeuristic().store_for(reg, "gemm")
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{not json")
    sel = reg.select(reg.problem("gemm", **P1))
    assert sel.instance.name == "gemm_faulty_ok"
    assert json.loads(store.path.read_text())  # rewritten whole


def test_derived_variants_are_measured(monkeypatch, tmp_path):
    """A problem with a fused epilogue ranks the variants the registry derives (``..._bcol_gelu``),
    which are not declared instances: autotune measures them (a failed lookup of every top-k
    variant used to hand the pick to the model's (k+1)-th)."""
    from ckcore import Registry, Settings
    from ck_plugin_gemm.keys import GemmKey

    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path / "c2", heuristic="autotune", interpret=True,
                                              autotune_top_k=2))
    for bn in (32, 64, 128):
        reg.add("gemm_tiled", GemmKey(dtype="fp32", layout="rrr", block_m=32, block_n=bn, block_k=32, num_warps=4,
                                      num_stages=2, group_m=4))
    p = reg.problem("gemm", M=48, N=96, K=32, dtype="fp32", layout="rrr", bias="col", activation="gelu")
    sel = reg.select(p)
    measured = [r for r in sel.ranked if r.note.startswith("measured ms (autotune")]
    assert len(measured) == 2 and all(r.instance.name.endswith("_bcol_gelu") for r in measured)
    assert sel.instance is measured[0].instance
