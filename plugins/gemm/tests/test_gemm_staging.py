"""Staged GEMMs (ckcore.staging): problems whose leading dimensions are not multiples of 16
bytes run on padded copies through the TMA families, against the NumPy float64 reference in
Triton's interpreter; the twin problem, the copies' cost, and when selection stages."""

import attrs
import pytest
import torch

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference
from ck_plugin_gemm.persistent import PersistentGemmKey

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), heuristic="rules"),
                 device_name="NVIDIA H100 80GB HBM3")
    r.catalog.families["gemm_persistent"].sm_count = 3
    yield r
    r.catalog.families["gemm_persistent"].sm_count = 132


def _persistent(reg, dtype, layout, block_n=64):
    return reg.add("gemm_persistent", PersistentGemmKey(dtype=dtype, layout=layout, block_m=32, block_n=block_n,
                                                        block_k=32, num_warps=4, num_stages=3, group_m=2,
                                                        flatten=True))


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_staged_twin_matches_reference(reg, dtype, layout):
    """Odd sizes and leading dimensions (every operand's rows unaligned) through a TMA kernel
    that cannot run the problem as it is."""
    inst = _persistent(reg, dtype, layout)
    p = reg.problem("gemm", M=45, N=37, K=29, dtype=dtype, layout=layout)
    fam = reg.family(inst)
    assert "TMA needs" in fam.supports(inst.key, p)
    staging = reg.catalog.op("gemm").staging(p)
    assert staging is not None and fam.supports(inst.key, staging.problem) is None
    assert reg.staging_for(inst, p) == staging
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_staged_fused_epilogue_copies_c_in_and_d(reg):
    """beta != 0 and a D tensor share C's strides: both are staged inputs, C the staged output;
    the row bias is passed through."""
    inst = _persistent(reg, "bf16", "rcr")
    p = reg.problem("gemm", M=40, N=27, K=32, dtype="bf16", layout="rcr", alpha=0.5, beta=1.0, bias="row",
                    num_d=1, activation="gelu")
    staging = reg.catalog.op("gemm").staging(p)
    assert [(t.name, t.output) for t in staging.tensors] == [("c_in", False), ("d0", False), ("c", True)]
    assert staging.problem.ldc == 64 and staging.problem.lda == p.lda == 32
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_padding_is_never_read(reg):
    """Staging buffers keep whatever earlier launches left; NaN in every byte of them changes
    nothing (the twin's sizes are the problem's: TMA zero-fills past them)."""
    inst = _persistent(reg, "fp16", "rcr")
    p = reg.problem("gemm", M=33, N=19, K=21, dtype="fp16", layout="rcr")
    for name in ("a", "b", "c"):
        reg.workspaces.get(torch.device("cpu"), 1 << 16, f"staging/gemm/{name}").fill_(255)  # fp16 NaN
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=3)


def test_caller_output_receives_the_result(reg):
    """A caller's C with its own (unaligned) leading dimension gets the staged result."""
    from ckcore.dispatch import launch

    inst = _persistent(reg, "fp32", "rcr")
    p = reg.problem("gemm", M=9, N=11, K=7, dtype="fp32", layout="rcr", ldc=13)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(9, 7, generator=g), torch.randn(11, 7, generator=g).t()
    c = torch.full((9, 13), 7.0)[:, :11]
    out = launch(reg, "gemm", p, {"a": a, "b": b, "c": c}, instance=inst.name, interpret=True)
    assert out is c
    torch.testing.assert_close(c, a @ b, atol=1e-2, rtol=1e-2)  # tf32 tensor cores
    assert torch.all(c.as_strided((9, 2), (13, 1), 11) == 7.0)  # the caller's padding untouched


def test_twin_of_each_field():
    from ck_plugin_gemm.op import GemmOperator

    op = GemmOperator()
    p = op.problem(M=100, N=300, K=50, dtype="bf16", layout="crr", ldb=301)
    s = op.staging(p)
    assert (s.problem.lda, s.problem.ldb, s.problem.ldc) == (128, 320, 320)
    assert s.reason == "lda 100 -> 128, ldb 301 -> 320, ldc 300 -> 320"
    assert {t.name: t.strides for t in s.tensors} == {"a": (1, 128), "b": (320, 1), "c": (320, 1)}
    assert s.copy_bytes == 2 * 2 * (100 * 50 + 50 * 300 + 100 * 300)
    fp8 = op.problem(M=64, N=64, K=40, dtype="fp8e4m3", layout="rcr")
    assert op.staging(fp8).problem.lda == 128  # 1-byte elements: 128 per row
    assert op.staging(op.problem(M=64, N=64, K=64, dtype="bf16", layout="rcr")) is None  # aligned already
    assert op.staging(op.problem(M=64, N=64, K=63, dtype="bf16", layout="rcr", ptr_align=2)) is None
    assert op.staging(op.problem(M=64, N=64, K=63, dtype="bf16", layout="rcr", batch=2)) is None


def test_selection_stages_large_unaligned_problems(tmp_path):
    settings = Settings(cache_dir=tmp_path, heuristic="rules")
    reg = Registry("sm_90", settings=settings, device_name="NVIDIA H100 80GB HBM3")
    reg.declare("gemm")
    big = reg.problem("gemm", M=4095, N=4095, K=4095, dtype="bf16", layout="rcr")
    sel = reg.select(big)
    assert sel.staging is not None and sel.staging.problem.lda == 4096
    assert reg.family(sel.instance).name in ("gemm_persistent", "gemm_tma")
    assert sel.direct is not None and sel.direct.instance.key.aligned is False
    assert "staged (lda 4095 -> 4096" in sel.reason
    small = reg.problem("gemm", M=33, N=20, K=27, dtype="bf16", layout="rcr")
    assert reg.select(small).staging is None  # copies cost more than they save
    off = Registry("sm_90", settings=attrs.evolve(settings, staging=False), device_name="NVIDIA H100 80GB HBM3")
    off.declare("gemm")
    assert off.select(big).staging is None and off.select(big).instance.key.aligned is False


def test_staging_setting_from_env():
    assert Settings.from_env({"CKCORE_STAGING": "0"}).staging is False
    assert Settings.from_env({}).staging is True
