"""Every bad-input case raises the right ckcore error, naming field and value, and writes nothing."""

import pytest
import torch

import ckcore
from ckcore import CkError, UnknownOperatorError, UnsupportedProblem
from ckcore.dispatch import launch


@pytest.mark.parametrize("fields, field", [
    (dict(M=0), "M"), (dict(N=-3), "N"), (dict(K=1.5), "K"), (dict(M=True), "M"), (dict(K=2**31), "K"),
    (dict(dtype="fp64"), "dtype"), (dict(dtype="int4"), "dtype"), (dict(layout="rcc"), "layout"),
    (dict(layout="RCR "), "layout"), (dict(lda=10), "lda"), (dict(ldc=0), "ldc"), (dict(ptr_align=3), "ptr_align"),
])
def test_bad_problem_fields(ck_registry, fields, field):
    base = dict(M=32, N=48, K=64, dtype="bf16", layout="rcr")
    with pytest.raises(UnsupportedProblem) as e:
        ck_registry.problem("gemm", **{**base, **fields})
    assert e.value.field == field
    assert field in str(e.value) and "expected" in str(e.value)
    assert isinstance(e.value, CkError)


def test_unknown_op(ck_registry):
    with pytest.raises(UnknownOperatorError, match="gemm"):
        ck_registry.problem("conv9d", M=1)


def _gemm(ck_registry, **kw):
    return ck_registry.problem("gemm", **{**dict(M=32, N=48, K=64, dtype="fp16", layout="rcr"), **kw})


def _tensors(M=32, N=48, K=64, dtype=torch.float16):
    return {"a": torch.randn(M, K, dtype=dtype), "b": torch.randn(N, K, dtype=dtype).t()}


@pytest.mark.parametrize("mutate, field", [
    (lambda t: t.update(a=torch.randn(33, 64, dtype=torch.float16)), "a.shape"),
    (lambda t: t.update(b=torch.randn(48, 64, dtype=torch.float16)), "b.shape"),
    (lambda t: t.update(a=t["a"].float()), "a.dtype"),
    (lambda t: t.update(b=t["b"].to(torch.bfloat16)), "b.dtype"),
    (lambda t: t.update(a=torch.randn(64, 32, dtype=torch.float16).t()), "a.stride"),
    (lambda t: t.update(a=torch.randn(32, 128, dtype=torch.float16)[:, ::2]), "a.stride"),
    (lambda t: t.update(c=torch.empty(32, 48, dtype=torch.float16).t().contiguous().t()), "c.stride"),
    (lambda t: t.update(c=torch.empty(32, 47, dtype=torch.float16)), "c.shape"),
    (lambda t: t.update(a=torch.randn(32 * 64 + 1, dtype=torch.float16)[1:].view(32, 64)), "a.data_ptr"),
    (lambda t: t.update(b=t["b"].to("meta")), "b.device"),
    (lambda t: t.update(a=None), "a"),
    (lambda t: t.update(x=t["a"]), "x"),
])
def test_bad_tensors(ck_registry, ck_cache_dir, mutate, field):
    ck_registry.declare("gemm")
    t = _tensors()
    mutate(t)
    with pytest.raises(UnsupportedProblem) as e:
        launch(ck_registry, "gemm", _gemm(ck_registry), t, interpret=True)
    assert e.value.field == field, str(e.value)
    assert not any(ck_cache_dir.rglob("meta.json")), "a rejected problem wrote to the cache"


def test_problem_must_match_op(ck_registry):
    ck_registry.declare("gemm")
    with pytest.raises(UnsupportedProblem, match="problem"):
        launch(ck_registry, "gemm", object(), _tensors(), interpret=True)


def test_problem_from_tensors_rejects_inner_stride(ck_registry):
    op = ck_registry.catalog.op("gemm")
    a = torch.randn(32, 128, dtype=torch.float16)[:, ::2]
    with pytest.raises(UnsupportedProblem, match="a.stride"):
        op.problem_from_tensors(a=a, b=torch.randn(64, 48, dtype=torch.float16))


def test_named_instance_must_support_problem(ck_registry):
    ck_registry.declare("gemm")
    p = _gemm(ck_registry)
    with pytest.raises(UnsupportedProblem, match="instance"):
        launch(ck_registry, "gemm", p, _tensors(), instance="gemm_tiled_bf16_rrr_64x64x64_g8_w4_s4_a16", interpret=True)
    with pytest.raises(UnsupportedProblem, match="instance"):
        launch(ck_registry, "gemm", p, _tensors(), instance="no_such_kernel", interpret=True)


def test_no_kernel_found_lists_rejections(ck_registry):
    ck_registry.add("gemm_tiled", {"dtype": "bf16", "layout": "rrr", "block_m": 64, "block_n": 64, "block_k": 32})
    with pytest.raises(ckcore.NoKernelFound) as e:
        ck_registry.select(_gemm(ck_registry))
    assert "layout rrr != rcr" in str(e.value) or "dtype" in str(e.value)


@pytest.mark.parametrize("key, reason", [
    ({"block_m": 24}, "power of two"),
    ({"num_stages": 0}, "integer in"),
    ({"aligned": "yes"}, "true or false"),
    ({"block_m": 256, "block_n": 256, "block_k": 128, "num_stages": 4}, "shared memory"),
    ({"block_m": 256, "block_n": 256, "num_warps": 4}, "accumulator registers"),
])
def test_invalid_keys(ck_registry, key, reason):
    base = {"dtype": "bf16", "layout": "rcr", "block_m": 64, "block_n": 64, "block_k": 64}
    with pytest.raises(ckcore.InvalidKernelKey, match=reason):
        ck_registry.add("gemm_tiled", {**base, **key})


def test_tma_family_invalid_before_hopper(ck_cache_dir):
    from ckcore import Registry, Settings

    reg = Registry("sm_80", settings=Settings(cache_dir=ck_cache_dir))
    with pytest.raises(ckcore.InvalidKernelKey, match="no TMA"):
        reg.add("gemm_tma", {"dtype": "bf16", "layout": "rcr", "block_m": 64, "block_n": 64, "block_k": 64})
    reg.declare("gemm")
    assert not [i for i in reg.instances.values() if i.family == "gemm_tma"]
