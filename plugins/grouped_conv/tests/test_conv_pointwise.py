"""Pointwise convolutions through the gemm op's kernels (``pointwise.py``): in Triton's
interpreter against the NumPy float64 reference (every direction, ndim and dtype; the tiled,
TMA, persistent and split-K kernels), the problems they must refuse, names, and selection."""

import pytest

from ck_plugin_grouped_conv.pointwise import (DIRECTIONS, LAYOUT, OPERANDS, gemm_fields, gemm_problem, gemm_tensors, gemm_views,
                                              pointwise_reason)
from ckcore.testing import assert_matches_reference

from cases import DTYPES, OPS, case, layout

# 1x1 problems: the GEMM's M = N·pixels; C and K multiples of 16 so aligned kernels apply,
# odd pixel counts so M tiles are partial, and the reduction longer than one K step.
CASES = {
    1: case(1, 3, 1, 48, 32, 45, 1),
    2: case(2, 2, 1, 32, 80, (7, 5), 1),
    3: case(3, 1, 1, 64, 16, (3, 4, 11), 1),
}


PW_OPS = tuple(f"grouped_conv_{d}" for d in DIRECTIONS)


def _pointwise(reg, op, dtype):
    return sorted((i for i in reg.of_op(op) if i.family.startswith("pw_") and i.key.dtype.value == dtype),
                  key=lambda i: i.name)


def _per_family(insts):
    """The smallest-tile instance of each wrapped family (interpreter time grows with the tile)."""
    first = {}
    for inst in sorted(insts, key=lambda i: (i.key.block_m * i.key.block_n * i.key.block_k, i.name)):
        first.setdefault(inst.family, inst)
    return sorted(first.values(), key=lambda i: i.name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ndim", sorted(CASES))
@pytest.mark.parametrize("op", PW_OPS)
def test_pointwise_instances_match_reference(reg, op, ndim, dtype):
    p = reg.problem(op, **CASES[ndim], dtype=dtype, layout=layout(ndim, True))
    insts = _per_family(i for i in _pointwise(reg, op, dtype) if reg.family(i).supports(i.key, p) is None)
    families = {i.family for i in insts}
    direction = op.removeprefix("grouped_conv_")
    assert f"pw_{direction}_tiled" in families
    if direction == "bwd_weight":  # the reduction over N·pixels may be split
        assert "pw_bwd_weight_splitk" in families
    if dtype != "fp32":
        assert f"pw_{direction}_persistent" in families
    for n, inst in enumerate(insts):
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


@pytest.mark.parametrize("op", PW_OPS)
def test_unaligned_channels_take_the_generic_kernels(reg, op):
    """C = 24, K = 20: no 16-element rows, so only the generic tiled kernels apply, and they match."""
    p = reg.problem(op, **case(2, 2, 1, 24, 20, (3, 5), 1), dtype="fp16", layout="nhwgc")
    ok = [i for i in _pointwise(reg, op, "fp16") if reg.family(i).supports(i.key, p) is None]
    assert ok and all(not i.key.aligned for i in ok), [i.name for i in ok]
    assert_matches_reference(reg, op, p, instance=ok[0].name, interpret=True)


REFUSED = {
    "filter 3": (case(2, 1, 1, 16, 16, (5, 5), 3, pad=1), "filter=[3, 3]"),
    "stride 2": (case(2, 1, 1, 16, 16, (6, 6), 1, stride=2), "stride=[2, 2]"),
    "padding": (case(2, 1, 1, 16, 16, (6, 6), 1, pad=1), "pad=[1, 1]"),
    "groups": (case(2, 1, 2, 32, 32, (6, 6), 1), "G=2"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("op", PW_OPS)
def test_refuses_problems_that_are_not_a_gemm_of_their_tensors(reg, op, name):
    fields, expected = REFUSED[name]
    p = reg.problem(op, **fields, dtype="bf16", layout="nhwgc")
    insts = _pointwise(reg, op, "bf16")
    assert insts
    for inst in insts:
        assert expected in reg.family(inst).supports(inst.key, p)


@pytest.mark.parametrize("op", PW_OPS)
def test_refuses_channels_first(reg, op):
    p = reg.problem(op, **CASES[2], dtype="bf16", layout="ngchw")
    assert pointwise_reason(p) == "layout=ngchw: the GEMM path takes channels-last tensors"
    cands, rejected = reg.candidates(p)
    assert not any(c.instance.family.startswith("pw_") for c in cands)


def test_gemm_of_each_direction():
    """M = N·pixels; the reduction is C (forward), K (backward-data) or M (backward-weight)."""
    from ck_plugin_grouped_conv.op import OPERATORS

    fields = dict(CASES[2], dtype="bf16", layout="nhwgc")
    want = {"fwd": (70, 80, 32), "bwd_data": (70, 32, 80), "bwd_weight": (80, 32, 70)}
    for op_cls in OPERATORS:
        p = op_cls().problem(**fields)
        direction = p.op.removeprefix("grouped_conv_")
        g = gemm_fields(direction, p)
        assert (g["M"], g["N"], g["K"], g["layout"]) == (*want[direction], LAYOUT[direction])
        assert gemm_problem(direction, p).K == want[direction][2]


@pytest.mark.parametrize("op", OPS)
def test_kernels_get_the_conv_tensors_whose_storage_is_the_gemm(op):
    """The kernels receive the conv tensors themselves: each one's storage, from the same
    address, is the matrix of ``gemm_views`` with the packed strides of the GEMM's layout, and
    the views compute the convolution (the interpreter tests check the kernels on top)."""
    import numpy as np
    import torch

    from ck_plugin_grouped_conv.op import OPERATORS

    spec = next(o() for o in OPERATORS if o.name == op)
    p = spec.problem(**CASES[2], dtype="fp32", layout="nhwgc")
    direction = op.removeprefix("grouped_conv_")
    arrays = spec.random_inputs(p, np.random.default_rng(0))
    t = spec.to_torch(p, arrays, "cpu")
    t[spec.output] = spec.empty_output(p, t[spec.inputs[0]])
    views, passed = gemm_views(direction, p, t), gemm_tensors(direction, p, t)
    g = gemm_fields(direction, p)
    packed = {"r": lambda rows, cols: (cols, 1), "c": lambda rows, cols: (1, rows)}
    shapes = {"a": (g["M"], g["K"]), "b": (g["K"], g["N"]), "c": (g["M"], g["N"])}
    for operand, order in zip("abc", LAYOUT[direction]):
        assert passed[operand] is t[dict(zip("abc", OPERANDS[direction]))[operand]]
        assert views[operand].data_ptr() == passed[operand].data_ptr()
        assert tuple(views[operand].shape) == shapes[operand]
        assert views[operand].stride() == packed[order](*shapes[operand])
    views["c"].copy_(views["a"].double().matmul(views["b"].double()).float())
    assert np.allclose(t[spec.output].double().numpy(), spec.reference(p, arrays), atol=1e-4)
    # A tensor that is not channels-last has no such view: an error, never a copy.
    with pytest.raises(RuntimeError):
        gemm_views(direction, p, {**t, spec.inputs[0]: t[spec.inputs[0]].contiguous()})


def test_names_are_prefixed_and_distinct_from_the_gemm_op(reg):
    assert DIRECTIONS == ("fwd", "bwd_data", "bwd_weight")
    names = [i.name for op in OPS for i in reg.of_op(op) if i.family.startswith("pw_")]
    assert len(names) == len(set(names))
    for op in OPS:
        prefix = f"pw_{op.removeprefix('grouped_conv_')}_gemm_"
        assert all(i.name.startswith(prefix) for i in reg.of_op(op) if i.family.startswith("pw_"))
    # Only deterministic kernels with the direction's layout and a conv dtype are declared.
    for op in OPS:
        for inst in reg.of_op(op):
            if inst.family.startswith("pw_"):
                assert reg.family(inst).deterministic(inst.key)
                assert inst.key.layout.value == LAYOUT[op.removeprefix("grouped_conv_")]
                assert inst.key.dtype.value in DTYPES


def test_pointwise_problems_get_gemm_candidates_and_others_do_not(reg):
    p = reg.problem("grouped_conv_fwd", **CASES[2], dtype="bf16", layout="nhwgc")
    cands, _ = reg.candidates(p)
    assert any(c.instance.family == "pw_fwd_persistent" for c in cands)
    assert any(c.instance.family.startswith("conv_") and not c.instance.family.startswith("pw_") for c in cands)
    q = reg.problem("grouped_conv_fwd", **case(2, 2, 1, 32, 80, (7, 5), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert not any(c.instance.family.startswith("pw_") for c in reg.candidates(q)[0])


def test_pointwise_backward_weight_keeps_the_accumulator_limit(reg):
    """N·output pixels past MAX_UNSPLIT_REDUCTION in one fp32 accumulator failed the fp16 check
    on every unsplit pointwise kernel (778688 pixels); such problems keep the split conv kernels."""
    from ck_plugin_grouped_conv.family import MAX_UNSPLIT_REDUCTION

    op = "grouped_conv_bwd_weight"
    pw = [i for i in reg.of_op(op) if i.family.startswith("pw_") and getattr(i.key, "split_k", 1) == 1]
    assert pw
    for n, refused in ((MAX_UNSPLIT_REDUCTION // 64, False), (MAX_UNSPLIT_REDUCTION // 64 + 1, True)):
        p = reg.problem(op, ndim=1, N=n, G=1, C=32, K=16, spatial=[64], filter=[1], stride=[1], pad=[0],
                        dilation=[1], dtype="fp16", layout="nwgc")
        reasons = [reg.family(i).supports(i.key, p) for i in pw if i.key.dtype.value == "fp16"]
        assert reasons and all((r is not None and "one accumulator" in r) == refused for r in reasons), reasons[:3]
        cands, _ = reg.candidates(p)
        assert cands and (not refused or not any(c.instance.family.startswith("pw_") and
                                                 getattr(c.instance.key, "split_k", 1) == 1 for c in cands))
