"""Split-K on the GPU against the float64 reference, both variants, and bitwise determinism."""

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore import Registry, Settings  # noqa: E402
from ckcore.dispatch import launch  # noqa: E402
from ckcore.testing import assert_matches_reference  # noqa: E402


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), deterministic=False))
    r.declare("gemm")
    r.build(max_workers=16, progress=False)
    return r


@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_every_splitk_instance(reg, dtype, layout):
    p = reg.problem("gemm", M=48, N=272, K=9 * 128 + 16, dtype=dtype, layout=layout)
    for inst in reg.of_op("gemm"):
        if inst.family == "gemm_splitk" and reg.family(inst).supports(inst.key, p) is None:
            assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=False, seed=inst.key.split_k)


def test_deterministic_bitwise_on_gpu(reg):
    p = reg.problem("gemm", M=16, N=4096, K=4096, dtype="bf16", layout="rcr")
    a = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16).t()
    for inst in reg.of_op("gemm"):
        if inst.family == "gemm_splitk" and inst.key.deterministic and reg.family(inst).supports(inst.key, p) is None:
            outs = [launch(reg, "gemm", p, {"a": a, "b": b}, instance=inst.name).clone() for _ in range(5)]
            assert all(torch.equal(outs[0], o) for o in outs[1:]), inst.name


@pytest.mark.parametrize("layout", ["rcr", "crr"])
def test_many_tiles_against_fp32(reg, layout):
    """Thousands of tiles, each combined by its last-arriving program: a program must publish
    all its threads' partials before it arrives (tune first caught the atomic variant off by
    ~100 on such shapes, without the barrier). Reference: torch float64."""
    from ckcore.bench import float64_recompute
    from ckcore.measure import compare_tensors

    spec = reg.catalog.op("gemm")
    p = reg.problem("gemm", M=4096, N=8192, K=1536, dtype="bf16", layout=layout)
    tensors = spec.random_tensors(p, 0, "cuda")
    ref = float64_recompute(spec, p, tensors)
    tol = spec.tolerance(p)
    for inst in reg.of_op("gemm"):
        if inst.family == "gemm_splitk" and reg.family(inst).supports(inst.key, p) is None:
            for _ in range(3):
                got = launch(reg, "gemm", p, dict(tensors), instance=inst.name)
                check = compare_tensors(got, ref, tol.atol, tol.rtol)
                assert check.passed, (inst.name, check.max_abs_err)
