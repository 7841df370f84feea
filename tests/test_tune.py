"""``ckcore tune`` in the interpreter: faulting instances are recorded and the run completes,
resume after a killed write, the dataset schema, generators, --describe; ``bench --plot``."""

import gzip
import json
from pathlib import Path

import pytest

from ckcore.cli import main
from ckcore.tune import COLUMNS, SCHEMA, STATUSES, Dataset, describe, generate_problems, tune

PLUGINS = str(Path(__file__).parent / "plugins")
P1 = {"M": 16, "N": 24, "K": 32, "dtype": "fp32", "layout": "rrr"}
P2 = {"M": 33, "N": 8, "K": 40, "dtype": "fp32", "layout": "rrr"}


@pytest.fixture(autouse=True)
def interpreter(monkeypatch, tmp_path):
    monkeypatch.setenv("CKCORE_INTERPRET", "1")
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(PLUGINS)


def test_faulting_instances_are_recorded_and_the_run_completes(tmp_path):
    out = tmp_path / "d.jsonl.gz"
    summary = tune("gemm", [P1], out, kernel_set="faulty", plugin_modules=["ckt_faulty"], timeout_s=10,
                   progress=False)
    rows = {r["instance"]: r for r in Dataset(out).rows()}
    assert summary["measured"] == 5 and len(rows) == 5
    assert summary["pruning_rescued"] == 0  # the interpreter times three runs, never prunes
    assert rows["gemm_faulty_ok"]["status"] == "ok" and rows["gemm_faulty_ok"]["time_ms"] > 0
    assert rows["gemm_faulty_wrong"]["status"] == "wrong_result"
    assert rows["gemm_faulty_raise"]["status"] == "launch_failed"
    assert rows["gemm_faulty_hang"]["status"] == "timed_out"
    assert rows["gemm_faulty_fault"]["status"] == "launch_failed"
    assert "SIGSEGV" in rows["gemm_faulty_fault"]["error"]  # the worker died and was replaced


def test_resume_after_a_killed_write_skips_measured_pairs(tmp_path):
    out = tmp_path / "d.jsonl.gz"
    first = tune("gemm", [P1], out, kernel_set="faulty_fast", plugin_modules=["ckt_faulty"], progress=False)
    assert first["measured"] == 3
    # A run killed while writing: half of a compressed row at the end of the file.
    partial = gzip.compress(b'{"schema": "ckcore-tune/1", "op": "gemm"}\n')
    with open(out, "ab") as f:
        f.write(partial[: len(partial) // 2])
    assert len(list(Dataset(out).rows())) == 3
    second = tune("gemm", [P1, P2], out, kernel_set="faulty_fast", plugin_modules=["ckt_faulty"], progress=False)
    assert second["skipped"] == 3 and second["measured"] == 3
    rows = list(Dataset(out).rows())
    pairs = [(r["problem_name"], r["instance"]) for r in rows]
    assert len(rows) == 6 == len(set(pairs))  # the truncated row is dropped, nothing measured twice


def test_rows_follow_the_schema(tmp_path):
    out = tmp_path / "d.jsonl.gz"
    tune("gemm", [P1], out, kernel_set="faulty_fast", plugin_modules=["ckt_faulty"], progress=False)
    for r in Dataset(out).rows():
        assert set(r) == set(COLUMNS)
        assert r["schema"] == SCHEMA and r["status"] in STATUSES
        assert all(isinstance(v, float) for v in r["problem_features"].values())
        assert all(isinstance(v, float) for v in r["kernel_features"].values())
        assert {"gpu", "sm_count", "driver", "cuda", "versions", "date", "interpreter"} <= set(r["provenance"])
        assert "ckcore" in r["provenance"]["versions"]
        if r["status"] == "ok":
            assert r["time_ms_p20"] <= r["time_ms"] <= r["time_ms_p80"] and r["tflops"] > 0 and r["gbps"] > 0
        else:
            assert r["time_ms"] is None and r["error"]
    info = describe(out)
    assert info["rows"] == 3 and info["ops"]["gemm"]["status"] == {"ok": 1, "wrong_result": 1, "launch_failed": 1}


def test_cli_tune_generate_and_describe(tmp_path, capsys):
    out = tmp_path / "g.jsonl.gz"
    # Generated gemm problems are mostly not fp32 rrr <= 64: the faulty set supports few or none.
    assert main(["tune", "gemm", "--suite", str(_suite(tmp_path)), "--set", "faulty_fast", "--plugin-module",
                 "ckt_faulty", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["measured"] == 6
    assert main(["tune", "--describe", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 6 and info["ops"]["gemm"]["problems"] == 2


def _suite(tmp_path):
    p = tmp_path / "suite.jsonl"
    p.write_text("\n".join(json.dumps({"op": "gemm", "name": f"p{i}", **f}) for i, f in enumerate((P1, P2))) + "\n")
    return p


@pytest.mark.parametrize("op", ["gemm", "grouped_conv_fwd", "grouped_conv_bwd_weight"])
def test_generators_are_seeded_valid_and_not_the_public_suite(op, ck_registry):
    spec = ck_registry.catalog.op(op)
    a = generate_problems(spec, 300, seed=7)
    assert len(a) == 300 and a == generate_problems(spec, 300, seed=7)
    assert a != generate_problems(spec, 300, seed=8)
    names = {spec.problem(**f).name for f in a}
    assert len(names) == 300
    suite = Path(__file__).parents[1] / "benchmarks" / "suites" / ("gemm.jsonl" if op == "gemm" else "conv.jsonl")
    lines = [json.loads(line) for line in suite.read_text().splitlines() if line.strip()]
    public = {spec.problem(**{k: v for k, v in row.items() if k not in ("op", "name")}).name for row in lines
              if row.get("op", op) in (op, *spec.suite_ops)}
    assert len(names & public) <= 3


def test_bench_plot_and_profile_rejections(tmp_path, capsys):
    png = tmp_path / "speedups.png"
    assert main(["bench", "gemm", "--suite", str(_suite(tmp_path)), "--plot", str(png), "--warmup", "1",
                 "--rep", "1"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["profile", "gemm", "--problem", json.dumps(P1), "--warmup", "1", "--rep", "1"]) == 0
    out = capsys.readouterr().out
    assert "rank" in out and "gbps" in out and "rejected" in out


def test_max_seconds_stops_early_and_a_rerun_finishes(tmp_path):
    out = tmp_path / "d.jsonl.gz"
    first = tune("gemm", [P1, P2], out, kernel_set="faulty_fast", plugin_modules=["ckt_faulty"], progress=False,
                 max_seconds=0.0)
    assert first["measured"] == 0 and first["remaining"] == 6
    second = tune("gemm", [P1, P2], out, kernel_set="faulty_fast", plugin_modules=["ckt_faulty"], progress=False)
    assert second["measured"] == 6 and second["remaining"] == 0


def test_compact_keeps_rows_and_refuses_a_damaged_tail(tmp_path):
    ds = Dataset(tmp_path / "d.jsonl.gz")
    for i in range(50):
        ds.append({"i": i})
    size = ds.path.stat().st_size
    ds.compact()
    assert [r["i"] for r in ds.rows()] == list(range(50)) and ds.path.stat().st_size < size
    with open(ds.path, "ab") as f:
        f.write(b"\x1f\x8b\x08 cut short")
    ds.compact()  # a damaged tail is left for repair(), nothing is dropped
    assert ds.repair() == len(b"\x1f\x8b\x08 cut short")
    ds.append({"i": 50})
    assert [r["i"] for r in ds.rows()] == list(range(51))


def test_create_writes_a_new_dataset_and_refuses_an_existing_file(tmp_path):
    ds = Dataset.create(tmp_path / "d.jsonl.gz", ({"i": i} for i in range(5)))
    assert [r["i"] for r in ds.rows()] == list(range(5))
    ds.append({"i": 5})  # appends follow the single member
    assert [r["i"] for r in ds.rows()] == list(range(6))
    with pytest.raises(FileExistsError, match="exists"):
        Dataset.create(ds.path, [{"i": 0}])
    assert len(list(ds.rows())) == 6


def test_kernel_set_file_measures_only_its_instances_of_the_op(tmp_path):
    from ckcore import Registry, Settings

    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path / "c"))
    reg.declare("gemm", "default")
    gemm = [c.instance for c in reg.candidates(reg.problem("gemm", **P1))[0]][:2]
    reg.declare("grouped_conv_fwd", "default")
    path = tmp_path / "set.json"
    reg.export_json(path)  # every declared instance; tune keeps the gemm ones it names
    data = json.loads(path.read_text())
    data["instances"] = [d for d in data["instances"] if d["name"] in {i.name for i in gemm}] + \
        [d for d in data["instances"] if d["op"] != "gemm"][:1]
    path.write_text(json.dumps(data))
    summary = tune("gemm", [P1], tmp_path / "d.jsonl.gz", kernel_set_file=path, progress=False)
    assert summary["measured"] == 2
    assert {r["instance"] for r in Dataset(tmp_path / "d.jsonl.gz").rows()} == {i.name for i in gemm}


def test_first_runs_prunes_only_on_two_slow_triples():
    """``measure.first_runs``: an instance is pruned only when two triples of first runs are all
    over the bound; a stalled first triple is measured again and, when the second is fast, the
    full measurement goes on from it, and the rescue is reported (``ckcore tune``'s summary
    counts them as ``pruning_rescued``)."""
    from ckcore.measure import first_runs

    def timer(*triples):
        calls = iter(triples)
        return lambda n: (lambda t: (t if len(t) == n else pytest.fail(f"asked {n} runs")))(list(next(calls)))

    assert first_runs(timer([1.0, 1.1, 1.2]), None) == ([1.0, 1.1, 1.2], False, False)
    assert first_runs(timer([0.01, 2.0, 2.0]), 1.0) == ([0.01, 2.0, 2.0], False, False)
    # a stall over the first three runs only: not pruned, the second triple kept, a rescue
    assert first_runs(timer([1.9, 1.2, 1.5], [0.02, 0.02, 0.03]), 1.0) == ([0.02, 0.02, 0.03], False, True)
    # slow twice: pruned, six samples
    assert first_runs(timer([1.9, 1.2, 1.5], [1.4, 1.3, 1.6]), 1.0) == ([1.9, 1.2, 1.5, 1.4, 1.3, 1.6], True, False)
