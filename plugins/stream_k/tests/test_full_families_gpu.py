"""Stream-K and GEMV (the families of the full set only) on the GPU: every instance that
supports each problem against a float64 recomputation, and bitwise reproducibility. Stream-K
shapes: tile counts that do and do not fill whole waves; GEMV: aligned and unaligned decode
shapes, column-major A too."""

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore import Registry, Settings  # noqa: E402
from ckcore.bench import float64_recompute  # noqa: E402
from ckcore.dispatch import launch  # noqa: E402
from ckcore.measure import compare_tensors  # noqa: E402

STREAMK = [(1000, 1000, 4096), (4096, 4096, 512), (128, 11008, 4096), (16, 4096, 14336)]
GEMV = [(1, 4096, 4096), (7, 8544, 1788), (16, 11008, 4096), (3, 1000, 14337)]
CASES = [(s, lay) for s in STREAMK for lay in ("rcr", "rrr")] + [(s, lay) for s in GEMV for lay in ("rcr", "rrr", "ccr")]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    full = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r = Registry("sm_90", settings=Settings(cache_dir=full.settings.cache_dir))
    for inst in full.declare("gemm", "full"):
        if inst.family in ("gemm_streamk", "gemm_gemv"):
            r.add(inst.family, inst.key)
    r.build(max_workers=16, progress=False)
    return r


@pytest.mark.parametrize("shape, layout", CASES)
def test_every_instance_against_float64(reg, shape, layout):
    M, N, K = shape
    spec = reg.catalog.op("gemm")
    for dtype in ("bf16", "fp16", "fp32"):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout)
        tensors = spec.random_tensors(p, 0, "cuda")
        ref = float64_recompute(spec, p, tensors)
        tol = spec.tolerance(p)
        for inst in reg.of_op("gemm"):
            if reg.family(inst).supports(inst.key, p) is None:
                outs = [launch(reg, "gemm", p, dict(tensors), instance=inst.name).clone() for _ in range(3)]
                check = compare_tensors(outs[0], ref, tol.atol, tol.rtol)
                assert check.passed, (inst.name, check.max_abs_err)
                assert all(torch.equal(outs[0], o) for o in outs[1:]), f"{inst.name} not bitwise reproducible"
