"""The ckcore command, in the interpreter on the CPU."""

import json


from ckcore.cli import main

P = '{"M": 40, "N": 24, "K": 56, "dtype": "bf16", "layout": "crr"}'


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_run_validate_json(capsys, ck_cache_dir):
    rc, out, _ = run(capsys, "run", "gemm", "--problem", P, "--validate", "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["status"] == "ok"
    assert rec["validation"]["passed"] and rec["validation"]["max_abs_err"] < 1
    assert rec["device"].startswith("triton-interpreter") and rec["time_ms"] > 0
    assert set(rec) >= {"op", "problem", "instance", "device", "time_ms", "tflops", "validation", "status"}


def test_run_bad_problem_is_error_object(capsys, ck_cache_dir):
    rc, out, _ = run(capsys, "run", "gemm", "--problem", '{"M": -1, "N": 2, "K": 3, "dtype": "bf16", "layout": "rcr"}', "--json")
    rec = json.loads(out)
    assert rc != 0 and rec["status"] == "error" and rec["error"]["type"] == "UnsupportedProblem"
    rc, out, _ = run(capsys, "run", "gemm", "--problem", "{not json", "--json")
    assert rc != 0 and json.loads(out)["status"] == "error"


def test_build_json_and_cache_commands(capsys, ck_cache_dir, small_set):
    rc, out, _ = run(capsys, "build", "gemm", "--kernel-set-file", str(small_set), "--arch", "sm_90", "--workers", "1", "--json")
    rec = json.loads(out)
    assert rc == 0 and (rec["compiled"], rec["cached"], rec["failed"]) == (2, 0, 0) and rec["seconds"] > 0
    rc, out, _ = run(capsys, "build", "gemm", "--kernel-set-file", str(small_set), "--arch", "sm_90", "--json")
    assert json.loads(out)["cached"] == 2
    rc, out, _ = run(capsys, "cache", "list")
    trees = out.count("selection model gemm/sm_90")  # the compiled trees of the gemm model (with lleaves)
    assert out.count(" ok ") == 2 + trees and trees in (0, 2)
    rc, out, _ = run(capsys, "cache", "size")
    assert f"{2 + trees} entries" in out
    rc, out, _ = run(capsys, "cache", "clear")
    assert f"removed {2 + trees}" in out


def test_select_explain_list_plugins(capsys, ck_cache_dir):
    rc, out, _ = run(capsys, "select", "gemm", "--problem", P, "--explain")
    assert rc == 0 and out.splitlines()[0].startswith("gemm_") and "reason: lightgbm" in out
    rc, out, _ = run(capsys, "list", "gemm")
    assert rc == 0 and "gemm_tiled_bf16_rcr" in out
    rc, out, _ = run(capsys, "plugins")
    assert "ck-plugin-gemm" in out and "op gemm" in out


def test_bench_and_profile_in_interpreter(capsys, ck_cache_dir, tmp_path):
    suite = tmp_path / "s.jsonl"
    suite.write_text('{"op": "gemm", "name": "tiny", "M": 16, "N": 32, "K": 48, "dtype": "fp16", "layout": "rcr"}\n')
    out_file = tmp_path / "r.jsonl"
    rc, out, _ = run(capsys, "bench", "gemm", "--suite", str(suite), "--out", str(out_file), "--warmup", "1", "--rep", "1")
    lines = [json.loads(l) for l in out_file.read_text().splitlines()]
    assert rc == 0 and [l["kind"] for l in lines] == ["env", "result", "summary"]
    assert lines[1]["check"]["passed"] and lines[2]["count"] == 1
    rc, out, _ = run(capsys, "profile", "gemm", "--problem", '{"M": 16, "N": 32, "K": 48, "dtype": "fp16", "layout": "rcr"}',
                     "--json", "--warmup", "1", "--rep", "1")
    rec = json.loads(out)
    assert rc == 0 and len(rec["instances"]) >= 3 and rec["selected"]


def test_unknown_op_exit_code(capsys, ck_cache_dir):
    rc, _, err = run(capsys, "select", "gemv", "--problem", P)
    assert rc == 2 and "unknown op" in err
