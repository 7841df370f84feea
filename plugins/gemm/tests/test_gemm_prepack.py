"""Pre-packed GEMM inputs (ckcore.prepack): B copied once into the layout of the problem's staged
twin, passed to dispatch in place of B; quantized problems with a row-major B (layout rrr),
which run only that way or staged per call. Interpreter, against the NumPy float64 reference."""

import attrs
import pytest
import torch

from ckcore import Registry, Settings, UnsupportedProblem
from ckcore.dispatch import launch
from ckcore.measure import validate
from ckcore.packing import Prepacked


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), heuristic="rules"),
                 device_name="NVIDIA H100 80GB HBM3")
    r.declare("gemm")
    return r


@pytest.mark.parametrize("dtype, fields", [("fp8e4m3", {"scale": "tensor"}), ("fp8e5m2", {"scale": "row"}),
                                           ("int8", {}), ("fp8e4m3", {"fast_accum": True})])
def test_quantized_row_major_b(reg, dtype, fields):
    """rrr: no quantized kernel reads a row-major B; selection stages a K-major copy, and a
    prepacked B runs the same twin without it."""
    p = reg.problem("gemm", M=40, N=48, K=96, dtype=dtype, layout="rrr", **fields)
    sel = reg.select(p)
    assert sel.staging is not None and sel.direct is None and sel.staging.problem.layout.value == "rcr"
    assert "layout rrr -> rcr" in sel.reason
    assert validate(reg, "gemm", p, interpret=True).passed
    assert validate(reg, "gemm", p, interpret=True, prepack=("b",), seed=1).passed


def test_prepacked_b_is_k_major_and_never_copied_again(tmp_path):
    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path, heuristic="rules"))
    reg.declare("gemm")
    p = reg.problem("gemm", M=33, N=40, K=64, dtype="fp8e4m3", layout="rrr")
    b = torch.randn(64, 40).to(torch.float8_e4m3fn)
    packed = reg.prepack("gemm", p, b=b)["b"]
    assert isinstance(packed, Prepacked) and packed.tensor.stride() == (1, 128)
    assert torch.equal(packed.tensor.float(), b.float())
    a = torch.randn(33, 64).to(torch.float8_e4m3fn)
    c = launch(reg, "gemm", p, {"a": a, "b": packed}, interpret=True)
    assert not any(k[-1].startswith("staging/") for k in reg.workspaces._buffers)  # nothing copied
    ref = (a.double() @ b.double())
    torch.testing.assert_close(c.double(), ref, atol=0.5, rtol=2 ** -7 * 2)


def _tma_only(tmp_path):
    """A registry whose only bf16 rcr instance is a persistent TMA tile: unaligned problems run
    staged (nothing runs them as they are)."""
    from ck_plugin_gemm.persistent import PersistentGemmKey

    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path, heuristic="rules"))
    r.add("gemm_persistent", PersistentGemmKey(dtype="bf16", layout="rcr", block_m=32, block_n=64, block_k=32,
                                               num_warps=4, num_stages=3, group_m=2, flatten=True))
    return r


@pytest.mark.parametrize("names", [("b",), ("a",), ("a", "b")])
def test_unaligned_operands_prepacked(tmp_path, names):
    """16-bit unaligned leading dimensions: the prepacked operands are passed as they are, the
    others staged per call (the op's first input included)."""
    reg = _tma_only(tmp_path)
    p = reg.problem("gemm", M=45, N=37, K=29, dtype="bf16", layout="rcr")
    assert reg.select(p).staging is not None
    tensors = reg.catalog.op("gemm").random_tensors(p, 0, "cpu")
    packed = reg.prepack("gemm", p, **{n: tensors[n] for n in names})
    assert all(isinstance(v, Prepacked) for v in packed.values())
    assert validate(reg, "gemm", p, interpret=True, prepack=names).passed


def test_problems_selection_runs_directly_are_not_packed(reg):
    """The copies of a small unaligned problem cost more than they save: selection runs it
    directly, so its B stays as it is."""
    p = reg.problem("gemm", M=33, N=20, K=27, dtype="bf16", layout="rcr")
    assert reg.staging(p) is not None and reg.select(p).staging is None
    b = torch.randn(20, 27, dtype=torch.bfloat16).t()
    assert reg.prepack("gemm", p, b=b)["b"] is b


def test_aligned_tensors_come_back_unchanged(reg):
    p = reg.problem("gemm", M=32, N=32, K=64, dtype="bf16", layout="rcr")
    b = torch.randn(32, 64, dtype=torch.bfloat16).t()
    assert reg.prepack("gemm", p, b=b)["b"] is b
    q = reg.problem("gemm", M=32, N=30, K=64, dtype="bf16", layout="rcr")  # only C unaligned: B as it is
    b2 = torch.randn(30, 64, dtype=torch.bfloat16).t()
    assert reg.prepack("gemm", q, b=b2)["b"] is b2


def test_prepacked_for_another_problem_is_refused(reg):
    p = reg.problem("gemm", M=16, N=32, K=64, dtype="fp8e4m3", layout="rrr")
    q = reg.problem("gemm", M=24, N=32, K=64, dtype="fp8e4m3", layout="rrr")
    packed = reg.prepack("gemm", p, b=torch.zeros(64, 32).to(torch.float8_e4m3fn))["b"]
    a = torch.zeros(24, 64).to(torch.float8_e4m3fn)
    with pytest.raises(UnsupportedProblem, match="prepacked for gemm_fp8e4m3_rrr_M24"):
        launch(reg, "gemm", q, {"a": a, "b": packed}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="'a'"):
        launch(reg, "gemm", p, {"a": packed, "b": packed}, interpret=True)


@pytest.mark.parametrize("tensors, field", [
    ({"x": torch.zeros(64, 32)}, "x"),
    ({"b": None}, "b"),
    ({"b": torch.zeros(32, 64).to(torch.float8_e4m3fn)}, "b.shape"),
    ({"b": torch.zeros(64, 32)}, "b.dtype"),
])
def test_bad_prepack_inputs(reg, tensors, field):
    p = reg.problem("gemm", M=16, N=32, K=64, dtype="fp8e4m3", layout="rrr")
    with pytest.raises(UnsupportedProblem, match=field):
        reg.prepack("gemm", p, **tensors)


def test_quantized_row_major_b_needs_batch_one(reg):
    with pytest.raises(UnsupportedProblem, match="batch"):
        reg.problem("gemm", M=32, N=32, K=64, dtype="int8", layout="rrr", batch=2)
    p = reg.problem("gemm", M=32, N=32, K=64, dtype="int8", layout="rrr", ptr_align=8)
    assert reg.select(p).staging is not None  # unaligned pointers: the twin's generic kernels


def test_no_kernel_names_the_problem_asked_for(tmp_path):
    from ckcore import NoKernelFound

    reg = _tma_only(tmp_path)
    with pytest.raises(NoKernelFound, match="gemm_int8_rrr_M33_N48_K64"):
        reg.select(reg.problem("gemm", M=33, N=48, K=64, dtype="int8", layout="rrr"))


def test_prepacked_runs_with_staging_off(tmp_path):
    off = Registry("sm_90", settings=Settings(cache_dir=tmp_path, heuristic="rules", staging=False))
    off.declare("gemm")
    p = off.problem("gemm", M=40, N=48, K=64, dtype="int8", layout="rrr")
    assert validate(off, "gemm", p, interpret=True, prepack=("b",)).passed
    from ckcore import NoKernelFound

    with pytest.raises(NoKernelFound):
        off.select(p)  # nothing reads a row-major int8 B, and staging is off
