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
