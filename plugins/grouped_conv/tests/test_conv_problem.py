"""Conv problems, tensor checks, errors, the PyTorch baseline on the CPU, the CLI."""

import json

import numpy as np
import pytest
import torch

from ckcore import UnsupportedProblem
from ckcore.cli import main
from ckcore.dispatch import launch

from cases import OPS, case, layout

SUITE_LINE = {"op": "grouped_conv", "name": "resnext50.l2.g32", "ndim": 2, "N": 32, "C": 256, "K": 256, "G": 32,
              "spatial": [28, 28], "filter": [3, 3], "stride": [1, 1], "pad": [1, 1], "dilation": [1, 1],
              "dtype": "bf16", "layout": "nhwgc"}


@pytest.mark.parametrize("op", OPS)
def test_suite_line_is_a_problem(reg, op):
    p = reg.problem(op, **SUITE_LINE)
    assert (p.Cg, p.Kg, p.out_spatial) == (8, 8, (28, 28))
    assert reg.catalog.op(op).suite_ops == ("grouped_conv",)
    assert reg.select(p).instance.op == op


@pytest.mark.parametrize("field,value,expected", [
    ("C", 250, "a multiple of G=32"),
    ("K", 100, "a multiple of G=32"),
    ("layout", "ndhwgc", "nhwgc or ngchw"),
    ("layout", "nchw", "one of"),
    ("spatial", [28], "2 values"),
    ("spatial", [1, 1], "non-empty output"),
    ("stride", [0, 1], "integers >= 1"),
    ("pad", [-1, 0], "integers >= 0"),
    ("ndim", 4, "1, 2 or 3"),
    ("dtype", "fp64", "one of"),
    ("op", "gemm", "'grouped_conv'"),
])
def test_bad_fields_name_field_and_expectation(reg, field, value, expected):
    fields = dict(SUITE_LINE, **{field: value})
    if field == "spatial" and value == [1, 1]:
        fields["pad"] = [0, 0]
    with pytest.raises(UnsupportedProblem) as err:
        reg.problem("grouped_conv_fwd", **fields)
    assert field in str(err.value) and expected in str(err.value)


def test_missing_field_is_a_clear_error(reg):
    fields = {k: v for k, v in SUITE_LINE.items() if k != "filter"}
    with pytest.raises(UnsupportedProblem, match="filter"):
        reg.problem("grouped_conv_fwd", **fields)


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("cl", [True, False])
def test_problem_from_tensors_round_trip(reg, ndim, cl):
    fields = case(ndim, 2, 2, 4, 6, (5,) * ndim, 3, stride=2, pad=1, dilation=1)
    want = reg.problem("grouped_conv_fwd", **fields, dtype="fp16", layout=layout(ndim, cl))
    spec = reg.catalog.op("grouped_conv_fwd")
    t = spec.random_tensors(want, 0, "cpu")
    got = spec.problem_from_tensors(**t, stride=2, pad=1, groups=2)
    assert got == want


@pytest.mark.parametrize("mutate,field", [
    (lambda t: t["x"].float(), "x.dtype"),
    (lambda t: t["x"][:, :, :-1], "x.shape"),
    (lambda t: t["x"].contiguous(), "x.stride"),   # channels-last problem, contiguous tensor
    (lambda t: t["w"][:1], "w.shape"),
])
def test_tensors_that_contradict_the_problem(reg, mutate, field):
    p = reg.problem("grouped_conv_fwd", **case(2, 2, 2, 4, 6, (5, 5), 3, pad=1), dtype="fp16", layout="nhwgc")
    spec = reg.catalog.op("grouped_conv_fwd")
    t = spec.random_tensors(p, 0, "cpu")
    t["x" if field.startswith("x") else "w"] = mutate(t)
    with pytest.raises(UnsupportedProblem, match=field.replace(".", r"\.")):
        launch(reg, "grouped_conv_fwd", p, t, interpret=True)


def test_output_tensor_is_checked_too(reg):
    p = reg.problem("grouped_conv_bwd_weight", **case(2, 2, 2, 4, 6, (5, 5), 3, pad=1), dtype="fp16", layout="ngchw")
    spec = reg.catalog.op("grouped_conv_bwd_weight")
    t = spec.random_tensors(p, 0, "cpu")
    t["dw"] = torch.empty(6, 2, 3, 3, dtype=torch.float16).to(memory_format=torch.channels_last)
    with pytest.raises(UnsupportedProblem, match=r"dw\.stride"):
        launch(reg, "grouped_conv_bwd_weight", p, t, interpret=True)


def test_int32_overflow_goes_to_the_64_bit_fallback(reg):
    # x has 2**31 + elements: 32-bit instances refuse it, the generic family takes it.
    p = reg.problem("grouped_conv_fwd", **case(2, 64, 1, 64, 64, (768, 768), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert p.numel()["x"] > 2**31
    sel = reg.select(p)
    assert sel.instance.key.access.value == "generic"
    assert any("32-bit offsets" in r for r in sel.rejected.values())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("cl", [True, False])
def test_torch_baseline_matches_reference_on_cpu(reg, op, cl):
    p = reg.problem(op, **case(2, 2, 2, 4, 6, (7, 6), 3, stride=2, pad=1, dilation=1), dtype="fp32",
                    layout=layout(2, cl))
    spec = reg.catalog.op(op)
    arrays = spec.random_inputs(p, np.random.default_rng(0))
    tensors = spec.to_torch(p, arrays, "cpu")
    out = spec.torch_baseline(p, tensors)()
    np.testing.assert_allclose(out.double().numpy(), spec.reference(p, arrays), rtol=1e-4, atol=1e-4)


def test_flops_and_bytes(reg):
    p = reg.problem("grouped_conv_fwd", **SUITE_LINE)
    spec = reg.catalog.op("grouped_conv_fwd")
    assert spec.flops(p) == 2 * 32 * 256 * 8 * 28 * 28 * 9
    assert spec.min_bytes(p) == 2 * (32 * 256 * 28 * 28 * 2 + 256 * 8 * 9)


def test_cli_select_and_run(reg, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CKCORE_INTERPRET", "1")
    small = dict(SUITE_LINE, N=1, spatial=[6, 6], C=64, K=64, G=8)
    assert main(["select", "grouped_conv_bwd_data", "--problem", json.dumps(small), "--explain"]) == 0
    assert "conv_bwd_data" in capsys.readouterr().out
    assert main(["run", "grouped_conv_bwd_weight", "--problem", json.dumps(small), "--validate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "ok" and out["validation"]["passed"]
