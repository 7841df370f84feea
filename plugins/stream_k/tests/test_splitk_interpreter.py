"""Split-K GEMM against the float64 reference in Triton's interpreter."""

import pytest
import torch

from ckcore import Registry, Settings
from ckcore.dispatch import launch
from ckcore.testing import assert_matches_reference

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), deterministic=False))
    r.declare("gemm")
    _add_atomic(r)
    return r


def _add_atomic(reg):
    """The atomic twins of the 16-bit default split-K tiles at split 4 (no kernel set declares
    them: see ck_plugin_stream_k.splitk), so the interpreter still checks their protocol."""
    import attrs

    for inst in list(reg.of_op("gemm")):
        key = inst.key
        if inst.family == "gemm_splitk" and key.split_k == 4 and key.dtype.value != "fp32":
            reg.add("gemm_splitk", attrs.evolve(key, deterministic=False))


def _splitk(reg, dtype, layout):
    return [i for i in reg.of_op("gemm") if i.family == "gemm_splitk"
            and i.key.dtype.value == dtype and i.key.layout.value == layout]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_instance_matches_reference(reg, dtype, layout):
    # K = 9 blocks of the largest BLOCK_K in play + a tail: split factors 2, 4, 8 do not divide it.
    insts = _splitk(reg, dtype, layout)
    assert insts
    # M = 1 where A is row-major (a column-major A makes M its contiguous dimension, which the
    # aligned split-K class needs divisible by 16: those problems go to other families); then a K
    # that 2, 4 and 8 divide.
    for M, K in ((1 if layout[0] == "r" else 16, 9 * 128 + 16), (48, 8 * 128)):
        p = reg.problem("gemm", M=M, N=80, K=K, dtype=dtype, layout=layout)
        for inst in insts:
            assert reg.family(inst).supports(inst.key, p) is None, inst.name
            assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=M)


def test_deterministic_variant_is_bitwise_reproducible(reg):
    p = reg.problem("gemm", M=16, N=64, K=1040, dtype="fp32", layout="rrr")
    inst = next(i for i in _splitk(reg, "fp32", "rrr") if i.key.deterministic and i.key.split_k == 8)
    a = torch.randn(16, 1040)
    b = torch.randn(1040, 64)
    outs = [launch(reg, "gemm", p, {"a": a, "b": b}, instance=inst.name, interpret=True).clone() for _ in range(3)]
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_atomic_selected_only_when_allowed(tmp_path):
    strict = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    strict.declare("gemm")
    _add_atomic(strict)
    p = strict.problem("gemm", M=16, N=64, K=4096, dtype="bf16", layout="rcr")
    sel = strict.select(p)
    assert all(strict.family(r.instance).deterministic(r.instance.key) for r in sel.ranked)
    assert any("not deterministic" in why for why in sel.rejected.values())


def test_no_kernel_set_declares_atomic_instances():
    reg = Registry("sm_90", settings=Settings(deterministic=False))
    for name in ("default", "full"):
        reg.declare("gemm", name)
    assert not [i.name for i in reg.of_op("gemm") if i.family == "gemm_splitk" and not i.key.deterministic]


def test_split_needs_enough_k_blocks(reg):
    p = reg.problem("gemm", M=16, N=64, K=128, dtype="bf16", layout="rcr")
    inst = next(i for i in _splitk(reg, "bf16", "rcr") if i.key.split_k == 8)
    assert "fewer than split_k" in reg.family(inst).supports(inst.key, p)


def test_workspaces_are_per_instance_and_stream(reg):
    ws = reg.workspaces
    a = ws.get(torch.device("cpu"), 1000, "x")
    assert ws.get(torch.device("cpu"), 500, "x") is a
    assert ws.get(torch.device("cpu"), 500, "y") is not a
    assert int(a.sum()) == 0
