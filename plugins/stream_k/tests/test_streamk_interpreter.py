"""Stream-K GEMM against the float64 reference in Triton's interpreter: every layout and
dtype, pure stream-K and data-parallel + stream-K tail, program counts that do and do not divide
the K steps, more programs than steps, and bitwise reproducibility."""

import pytest
import torch

from ckcore import Registry, Settings
from ckcore.dispatch import launch
from ckcore.testing import assert_matches_reference
from ck_plugin_stream_k.streamk import StreamKKey, dp_tiles

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    return Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))


def _instance(reg, dtype, layout, programs, hybrid, bk=32):
    key = StreamKKey(dtype=dtype, layout=layout, block_m=32, block_n=32, block_k=bk, num_warps=2, num_stages=2,
                     programs=programs, hybrid=hybrid)
    return reg.add("gemm_streamk", key)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_schedules_match_reference(reg, dtype, layout):
    # 80 x 96: 3 x 3 = 9 tiles; K = 80: 3 steps of 32 (the last half masked): 27 steps.
    p = reg.problem("gemm", M=80, N=96, K=80, dtype=dtype, layout=layout)
    for programs, hybrid in ((4, False), (7, False), (4, True), (3, True), (64, False)):
        inst = _instance(reg, dtype, layout, programs, hybrid)
        assert reg.family(inst).supports(inst.key, p) is None
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=programs)


def test_hybrid_split_of_tiles(reg):
    key = lambda programs, hybrid: StreamKKey(dtype="fp32", layout="rrr", block_m=32, block_n=32, block_k=32,  # noqa: E731
                                              num_warps=2, num_stages=2, programs=programs, hybrid=hybrid)
    p = reg.problem("gemm", M=80, N=96, K=80, dtype="fp32", layout="rrr")  # 9 tiles
    assert dp_tiles(key(4, True), p) == 4       # one whole wave data-parallel, 5 tiles stream-K
    assert dp_tiles(key(3, True), p) == 9       # three whole waves: no stream-K
    assert dp_tiles(key(5, True), p) == 0       # fewer than two waves: all stream-K
    assert dp_tiles(key(4, False), p) == 0


def test_m1_and_long_k(reg):
    p = reg.problem("gemm", M=1, N=64, K=16 * 32 + 16, dtype="bf16", layout="rcr")
    for programs in (5, 6):
        inst = _instance(reg, "bf16", "rcr", programs, False)
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=programs)


def test_bitwise_reproducible(reg):
    p = reg.problem("gemm", M=64, N=64, K=320, dtype="fp32", layout="rrr")
    inst = _instance(reg, "fp32", "rrr", 5, False)
    a, b = torch.randn(64, 320), torch.randn(320, 64)
    outs = [launch(reg, "gemm", p, {"a": a, "b": b}, instance=inst.name, interpret=True).clone() for _ in range(3)]
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_only_in_the_full_set():
    r = Registry("sm_90", settings=Settings())
    assert not [i for i in r.declare("gemm", "default") if i.family == "gemm_streamk"]
    full = [i for i in Registry("sm_90", settings=Settings()).declare("gemm", "full") if i.family == "gemm_streamk"]
    assert full and all(i.key.programs == 132 for i in full)


def test_compiles_for_sm90(tmp_path):
    """The interpreter does not type-check loop-carried values; compiling for sm_90 does (a
    32/64-bit mix in the schedule once passed the interpreter and failed to compile)."""
    full = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    bf16_rcr = [i for i in full.declare("gemm", "full") if i.key.dtype.value == "bf16" and i.key.layout.value == "rcr"]
    picked = ([i for i in bf16_rcr if i.family == "gemm_streamk"][:2]
              + [i for i in bf16_rcr if i.family == "gemm_gemv" and i.key.rows in (1, 4)][:2])
    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    for inst in picked:
        reg.add(inst.family, inst.key)
    report = reg.build(max_workers=1, progress=False)
    assert {i.family for i in picked} == {"gemm_streamk", "gemm_gemv"}
    assert report.failed == 0, report.failures
