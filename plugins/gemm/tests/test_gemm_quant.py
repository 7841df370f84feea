"""int8 and fp8 GEMM against the NumPy float64 reference in Triton's interpreter: every
quantized type, output type and scale mode, aligned and odd sizes, the tiled and persistent
families; and the errors of quantized problems.

Tolerances (``GemmOperator.tolerance``): int8 → int32 is exact (atol = rtol = 0); int8 with a
float output rounds once; fp8 products are exact and their fp32 sums carry 2^-13 · sqrt(K) per
unit product (Hopper's fp8 MMA may accumulate without rounding to nearest), then C's rounding.
"""

import attrs
import pytest
import torch

from ckcore import Registry, Settings, UnsupportedProblem
from ckcore.dispatch import launch
from ckcore.testing import assert_matches_reference
from ck_plugin_gemm.persistent import PersistentGemmKey

QUANT = ["int8", "fp8e4m3", "fp8e5m2"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r.declare("gemm", "default")
    return r


@pytest.mark.parametrize("dtype", QUANT)
@pytest.mark.parametrize("out", [None, "fp16", "bf16", "fp32"])
@pytest.mark.parametrize("scale", ["none", "tensor", "row"])
def test_types_and_scales(reg, dtype, out, scale):
    # Aligned sizes (the a16 tiles) and odd ones (the generic tiles).
    if dtype == "int8" and out is None and scale != "none":  # int32 output: the exact product, unscaled
        with pytest.raises(UnsupportedProblem, match="out_dtype"):
            reg.problem("gemm", M=16, N=16, K=64, dtype=dtype, layout="rcr", scale=scale)
        return
    for M, N, K in ((48, 64, 256), (19, 37, 75)):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", out_dtype=out, scale=scale)
        assert p.out.value == (out or ("int32" if dtype == "int8" else "bf16"))
        assert_matches_reference(reg, "gemm", p, interpret=True, seed=M)


@pytest.mark.parametrize("dtype", QUANT)
def test_with_a_fused_epilogue(reg, dtype):
    p = reg.problem("gemm", M=40, N=64, K=128, dtype=dtype, layout="rcr", out_dtype="bf16", scale="row",
                    bias="col", beta=0.5, activation="silu")
    assert_matches_reference(reg, "gemm", p, interpret=True)


@pytest.mark.parametrize("dtype", QUANT)
def test_persistent_family(reg, dtype):
    inst = reg.add("gemm_persistent", PersistentGemmKey(dtype=dtype, layout="rcr", block_m=32, block_n=128, block_k=64,
                                                        num_warps=4, num_stages=3, flatten=True, subtile=True))
    for fields in ({}, {"out_dtype": "fp16", "scale": "row", "activation": "gelu"}):
        if dtype != "int8" and not fields:
            fields = {"scale": "tensor"}
        p = reg.problem("gemm", M=72, N=200, K=192, dtype=dtype, layout="rcr", **fields)
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_fast_accumulation_variant(reg):
    p = reg.problem("gemm", M=40, N=64, K=256, dtype="fp8e4m3", layout="rcr", scale="tensor", fast_accum=True)
    inst = reg.select(p).instance
    assert inst.key.fast_accum and "_fastacc" in inst.name
    assert "max_num_imprecise_acc" not in reg.job(inst).source
    plain = reg.problem("gemm", M=40, N=64, K=256, dtype="fp8e4m3", layout="rcr", scale="tensor")
    assert "max_num_imprecise_acc=128" in reg.job(reg.select(plain).instance).source
    assert "fast_accum" in reg.family(inst).supports(inst.key, plain)
    assert_matches_reference(reg, "gemm", p, interpret=True)


def test_dispatch_from_tensors_matches_torch(reg):
    op = reg.catalog.op("gemm")
    a = torch.randint(-8, 8, (24, 64), dtype=torch.int8)
    w = torch.randint(-8, 8, (40, 64), dtype=torch.int8)  # [N, K]
    p = op.problem_from_tensors(a=a, b=w.t())
    assert (p.dtype.value, p.out.value, p.layout.value) == ("int8", "int32", "rcr")
    c = launch(reg, "gemm", p, {"a": a, "b": w.t()}, interpret=True)
    assert c.dtype == torch.int32 and torch.equal(c, (a.int() @ w.int().t()))


@pytest.mark.parametrize("fields, field", [
    ({"dtype": "int4"}, "dtype"),
    ({"dtype": "int8", "layout": "crr"}, "layout"),
    ({"dtype": "fp8e4m3", "layout": "ccr"}, "layout"),
    ({"dtype": "fp8e4m3", "out_dtype": "int32"}, "out_dtype"),
    ({"dtype": "bf16", "out_dtype": "fp16"}, "out_dtype"),
    ({"dtype": "int8", "scale": "row"}, "out_dtype"),  # int32 output is the exact product: no scales
    ({"dtype": "int8", "activation": "relu"}, "out_dtype"),
    ({"dtype": "int8", "out_dtype": "int64"}, "out_dtype"),
    ({"dtype": "fp8e4m3", "scale": "channel"}, "scale"),
    ({"dtype": "bf16", "fast_accum": True}, "fast_accum"),
])
def test_bad_quantized_problems(reg, fields, field):
    base = {"M": 16, "N": 16, "K": 64, "layout": "rcr", **fields}
    with pytest.raises(UnsupportedProblem, match=field):
        reg.problem("gemm", **base)


def test_bad_scale_tensors(reg):
    p = reg.problem("gemm", M=16, N=32, K=64, dtype="fp8e4m3", layout="rcr", scale="row")
    a = torch.randn(16, 64).to(torch.float8_e4m3fn)
    b = torch.randn(32, 64).to(torch.float8_e4m3fn).t()
    with pytest.raises(UnsupportedProblem, match="scale_a"):
        launch(reg, "gemm", p, {"a": a, "b": b, "scale_b": torch.ones(32)}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="scale_b.shape"):
        launch(reg, "gemm", p, {"a": a, "b": b, "scale_a": torch.ones(16), "scale_b": torch.ones(1)}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="scale_a.dtype"):
        launch(reg, "gemm", p, {"a": a, "b": b, "scale_a": torch.ones(16, dtype=torch.float16),
                                "scale_b": torch.ones(32)}, interpret=True)


@pytest.mark.parametrize("dtype, layout, fields", [
    ("fp8e4m3", "rcr", {"scale": "tensor"}),
    ("fp8e5m2", "rcr", {"scale": "row", "out_dtype": "fp16", "bias": "col", "activation": "gelu"}),
    ("fp8e4m3", "rcr", {"scale": "tensor", "fast_accum": True}),
    ("int8", "rcr", {}),
    ("bf16", "crr", {}),
    ("fp16", "rrr", {"beta": 0.5}),
])
def test_halves_tiles(reg, dtype, layout, fields):
    """Two row halves with their own accumulators (GemmKey.halves): M inside the first half, across
    both, and odd sizes; fp8 promotes each K step's partial into its half's fp32 accumulator."""
    from ck_plugin_gemm.keys import GemmKey

    key = GemmKey(dtype=dtype, layout=layout, block_m=128, block_n=64, block_k=64 if dtype in ("bf16", "fp16") else 128,
                  num_warps=4, num_stages=3, halves=True, aligned=False)
    inst = reg.add("gemm_tiled", key)
    for M, N, K in ((40, 48, 256), (200, 64, 384), (131, 37, 75)):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout, **fields)
        run = reg.specialized(inst, p)
        assert run.key.halves and "_h2_" in run.name
        source = reg.job(run).source
        promoted = dtype.startswith("fp8") and not fields.get("fast_accum")
        assert ("acc0 += tl.dot(a0, b)" in source) == promoted and "max_num_imprecise_acc" not in source
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=M)


def test_halves_only_where_the_template_has_them(reg):
    from ck_plugin_gemm.keys import GemmKey
    from ck_plugin_gemm.tma import TmaGemmKey

    tiled, tma = reg.catalog.families["gemm_tiled"], reg.catalog.families["gemm_tma"]
    assert any("block_m >= 128" in r for r in tiled.check(GemmKey(dtype="fp8e4m3", layout="rcr", block_m=64,
                                                                  block_n=128, block_k=128, halves=True), reg.arch))
    assert any("block_k <= 128" in r for r in tiled.check(GemmKey(dtype="fp8e4m3", layout="rcr", block_m=128,
                                                                  block_n=64, block_k=256, halves=True), reg.arch))
    assert any("no two-accumulator tile" in r for r in tma.check(TmaGemmKey(dtype="fp8e4m3", layout="rcr", block_m=128,
                                                                            block_n=128, block_k=128, halves=True), reg.arch))


@pytest.mark.parametrize("dtype, layout, flatten, fields", [
    ("fp8e4m3", "rcr", False, {"scale": "tensor"}),
    ("fp8e5m2", "rcr", True, {"scale": "row", "out_dtype": "fp16", "bias": "col", "activation": "silu"}),
    ("int8", "rcr", True, {}),
    ("bf16", "crr", False, {"alpha": 0.5, "bias": "row", "activation": "gelu_tanh"}),
])
def test_persistent_halves_and_programs_per_sm(reg, dtype, layout, flatten, fields):
    """The persistent family with two row halves and two programs per SM: each program walks
    tiles pid, pid + P, ...; the halves load, accumulate and store their own rows (subtiled or
    not), the second half partly or wholly outside M."""
    bk = 64 if dtype == "bf16" else 128
    key = PersistentGemmKey(dtype=dtype, layout=layout, block_m=128, block_n=128, block_k=bk, num_warps=4,
                            num_stages=3, flatten=flatten, subtile=flatten, halves=True, programs_per_sm=2)
    inst = reg.add("gemm_persistent", key)
    assert "_h2" in inst.name and inst.name.endswith("_p2")
    for M, N, K in ((64, 128, 256), (200, 256, 384)):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout, **fields)
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=M)
    fam = reg.catalog.families["gemm_persistent"]
    assert fam.grid(key, reg.problem("gemm", M=4096, N=4096, K=256, dtype=dtype, layout=layout, **fields))[0] == 2 * 132
    assert fam.grid(key, reg.problem("gemm", M=256, N=256, K=256, dtype=dtype, layout=layout, **fields))[0] == 4


def test_persistent_halves_checks(reg):
    fam = reg.catalog.families["gemm_persistent"]
    ws = PersistentGemmKey(dtype="fp8e4m3", layout="rcr", block_m=128, block_n=128, block_k=128, num_warps=4,
                           num_stages=3, flatten=False, warp_specialize=True, halves=True)
    assert any("warp_specialize" in r for r in fam.check(ws, reg.arch))
    big = PersistentGemmKey(dtype="fp8e4m3", layout="rcr", block_m=128, block_n=256, block_k=128, num_warps=8,
                            num_stages=4, programs_per_sm=2)
    assert any("per SM" in r for r in fam.check(big, reg.arch))
    # C-shaped epilogue inputs take a layout-conversion buffer: two such programs do not fit an SM.
    two = PersistentGemmKey(dtype="bf16", layout="rcr", block_m=128, block_n=128, block_k=64, num_warps=8,
                            num_stages=3, subtile=True, programs_per_sm=2)
    assert not fam.check(two, reg.arch)
    assert any("per SM" in r for r in fam.check(attrs.evolve(two, epilogue="beta"), reg.arch))
