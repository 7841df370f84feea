"""Every gemm instance of the default set, and the selected instance on random odd shapes, against
the NumPy float64 reference in Triton's interpreter (CPU)."""

import pytest
from hypothesis import given, settings, strategies as st

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r.declare("gemm", "default")
    return r


def _problem_for(reg, inst):
    k = inst.key
    if inst.family == "gemm_tiled" and not k.aligned:
        M, N, K = 37, 45, 70
    else:
        M, N, K = 48, 80, 96 + k.block_k  # two K steps, partial tiles in M and N
    return reg.problem("gemm", M=M, N=N, K=K, dtype=k.dtype.value, layout=k.layout.value)


def test_every_default_instance_matches_reference(reg):
    names = []
    mine = [i for i in reg.of_op("gemm") if i.family in ("gemm_tiled", "gemm_tma")]  # this plugin's families
    for inst in sorted(mine, key=lambda i: i.name):
        p = _problem_for(reg, inst)
        assert reg.family(inst).supports(inst.key, p) is None, inst.name
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=len(names))
        names.append(inst.name)
    assert len(names) == len(mine) > 50


@settings(max_examples=30, deadline=None)
@given(M=st.integers(1, 70), N=st.integers(1, 70), K=st.integers(1, 90),
       dtype=st.sampled_from(DTYPES), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_selected_instance_on_random_odd_shapes(reg, M, N, K, dtype, layout, seed):
    p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout)
    assert_matches_reference(reg, "gemm", p, interpret=True, seed=seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_padded_leading_dimensions(reg, dtype, layout):
    M, N, K = 33, 40, 56
    packed = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout).packed_ld()
    p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout,
                    lda=packed["lda"] + 8, ldb=packed["ldb"] + 3, ldc=packed["ldc"] + 16)
    assert_matches_reference(reg, "gemm", p, interpret=True)


def test_dispatch_from_tensors_matches_torch(reg):
    import torch

    from ckcore.dispatch import launch

    op = reg.catalog.op("gemm")
    a = torch.randn(40, 24, dtype=torch.float16)
    w = torch.randn(56, 24, dtype=torch.float16)  # nn.Linear weight [N, K]
    p = op.problem_from_tensors(a=a, b=w.t())
    assert p.layout.value == "rcr" and (p.M, p.N, p.K) == (40, 56, 24)
    c = launch(reg, "gemm", p, {"a": a, "b": w.t()}, interpret=True)
    torch.testing.assert_close(c.float(), a.float() @ w.float().t(), rtol=2e-3, atol=2e-2)


def test_fp32_uses_tf32_within_documented_tolerance(reg):
    p = reg.problem("gemm", M=64, N=64, K=512, dtype="fp32", layout="rrr")
    tol = reg.catalog.op("gemm").tolerance(p)
    assert tol.rtol >= 1e-3  # tf32 inputs: 10-bit mantissa
    assert_matches_reference(reg, "gemm", p, interpret=True)
