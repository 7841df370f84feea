"""GEMV-style small-M GEMM against the float64 reference in Triton's interpreter: every layout
and dtype, M from 1 to the instance's rows, unaligned K and N, split-K that does and does not
divide the K steps, and bitwise reproducibility."""

import pytest
import torch

from ckcore import Registry, Settings
from ckcore.dispatch import launch
from ckcore.testing import assert_matches_reference
from ck_plugin_stream_k.gemv import GemvKey

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    return Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))


def _instance(reg, dtype, layout, rows, split):
    return reg.add("gemm_gemv", GemvKey(dtype=dtype, layout=layout, rows=rows, block_n=16, block_k=32,
                                        split_k=split, num_warps=1, num_stages=1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_matches_reference(reg, dtype, layout):
    # N = 37 (3 column blocks, the last partial), K = 83 (3 steps of 32, unaligned)
    for rows, split, M in ((1, 1, 1), (4, 3, 3), (4, 2, 4), (8, 1, 5)):
        inst = _instance(reg, dtype, layout, rows, split)
        p = reg.problem("gemm", M=M, N=37, K=83, dtype=dtype, layout=layout)
        assert reg.family(inst).supports(inst.key, p) is None
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=rows * 10 + split)


def test_more_splits_than_k_steps(reg):
    inst = _instance(reg, "fp32", "rcr", 2, 5)
    p = reg.problem("gemm", M=2, N=20, K=40, dtype="fp32", layout="rcr")  # 2 K steps, 5 splits
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_rows_bound_m(reg):
    inst = _instance(reg, "bf16", "rcr", 4, 1)
    p = reg.problem("gemm", M=5, N=32, K=32, dtype="bf16", layout="rcr")
    assert "M=5 > rows=4" in reg.family(inst).supports(inst.key, p)


def test_bitwise_reproducible(reg):
    inst = _instance(reg, "fp32", "rrr", 2, 3)
    p = reg.problem("gemm", M=2, N=40, K=200, dtype="fp32", layout="rrr")
    a, b = torch.randn(2, 200), torch.randn(200, 40)
    outs = [launch(reg, "gemm", p, {"a": a, "b": b}, instance=inst.name, interpret=True).clone() for _ in range(3)]
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_full_set_compiles_to_valid_keys():
    keys = [i for i in Registry("sm_90", settings=Settings()).declare("gemm", "full") if i.family == "gemm_gemv"]
    assert len(keys) == 3 * 4 * 10
    assert not [i for i in Registry("sm_90", settings=Settings()).declare("gemm", "default") if i.family == "gemm_gemv"]
