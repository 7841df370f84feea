"""The gemm op's fused epilogue through the split-K, stream-K and GEMV families (one shared
template piece, ``ck_plugin_gemm/epilogue.j2``) against the float64 reference in Triton's
interpreter; batched problems go to the families that walk a batch."""

import pytest

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference
from ck_plugin_stream_k.gemv import GemvKey
from ck_plugin_stream_k.splitk import SplitKKey
from ck_plugin_stream_k.streamk import StreamKKey

EPILOGUES = [
    {"bias": "col", "activation": "gelu"},
    {"alpha": 0.5, "beta": -1.5, "bias": "row", "num_d": 2, "activation": "silu"},
    {"num_d": 1, "activation": "gelu_tanh"},
]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    return Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), deterministic=False))


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("fields", EPILOGUES)
def test_splitk(reg, deterministic, fields):
    inst = reg.add("gemm_splitk", SplitKKey(dtype="fp16", layout="rcr", block_m=16, block_n=32, block_k=32,
                                            split_k=3, deterministic=deterministic, num_warps=4, num_stages=2))
    p = reg.problem("gemm", M=20, N=48, K=7 * 32, dtype="fp16", layout="rcr", **fields)
    assert reg.family(inst).supports(reg.specialized(inst, p).key, p) is None
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


@pytest.mark.parametrize("hybrid", [True, False])
@pytest.mark.parametrize("fields", EPILOGUES)
def test_streamk(reg, hybrid, fields):
    # 3 x 2 tiles on 4 programs: whole tiles, split tiles and (hybrid) a data-parallel wave.
    inst = reg.add("gemm_streamk", StreamKKey(dtype="bf16", layout="rrr", block_m=16, block_n=32, block_k=32,
                                              programs=4, hybrid=hybrid, num_warps=4, num_stages=2))
    p = reg.problem("gemm", M=48, N=64, K=5 * 32, dtype="bf16", layout="rrr", **fields)
    assert reg.family(inst).supports(reg.specialized(inst, p).key, p) is None
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


@pytest.mark.parametrize("split", [1, 3])
@pytest.mark.parametrize("fields", EPILOGUES)
def test_gemv(reg, split, fields):
    inst = reg.add("gemm_gemv", GemvKey(dtype="fp32", layout="rcr", rows=4, block_n=16, block_k=32, split_k=split,
                                        num_warps=1, num_stages=1))
    p = reg.problem("gemm", M=3, N=37, K=83, dtype="fp32", layout="rcr", **fields)
    assert reg.family(inst).supports(reg.specialized(inst, p).key, p) is None
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_batched_problems_go_to_families_that_walk_a_batch(reg):
    reg.declare("gemm", "full")
    p = reg.problem("gemm", M=16, N=64, K=1024, dtype="bf16", layout="rcr", batch=2, bias="col")
    cands, rejected = reg.candidates(p)
    assert cands and {c.instance.family for c in cands} <= {"gemm_tiled", "gemm_tma"}
    for name, reason in rejected.items():
        if name.startswith(("gemm_splitk_bf16_rcr", "gemm_streamk_bf16_rcr", "gemm_gemv_bf16_rcr")):
            assert "kernels take one matrix" in reason or "M=16 > rows" in reason, (name, reason)
    assert_matches_reference(reg, "gemm", p, interpret=True)
