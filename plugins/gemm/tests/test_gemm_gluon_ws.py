"""The ``gemm_gluon_ws`` family (Gluon, warp-specialised fp8 with promoted accumulation).

Gluon kernels do not run in Triton's interpreter, so on the CPU every default instance (plain
and with per-tensor scales, each output type) is compiled for sm_90a and its parameters are
compared with the family's signature; the registry must refuse the family where kernels are
interpreted; ``check`` must refuse what the kernel does not implement. On the GPU (marker
``gpu``) every default instance runs against the NumPy float64 reference on problems with
partial tiles (TMA clips M and N and zero-fills the last K block), per-tensor scales, e4m3 and
e5m2 and every output type; the tolerance is the op's (``GemmOperator.tolerance``: fp8 products
are exact in fp32, the sums are promoted every 128 products, the bound is the output's rounding)."""

import json

import pytest
import torch

from ckcore import InvalidKernelKey, Registry, Settings
from ckcore.testing import assert_matches_reference, instances_of, kernel_parameters
from ck_plugin_gemm.gluon_ws import GluonWsGemmKey

FAMILY = "gemm_gluon_ws"


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r.declare("gemm", "default")
    return r


def _key(**kw):
    base = dict(dtype="fp8e4m3", layout="rcr", block_m=128, block_n=256, block_k=128, num_warps=4, num_stages=4,
                n_split=2)
    return GluonWsGemmKey(**{**base, **kw})


def test_default_set(reg):
    names = [i.name for i in instances_of(reg, "gemm", FAMILY)]
    assert names and all(n.startswith("gemm_gluon_ws_fp8e") for n in names)
    assert {n.split("_")[3] for n in names} == {"fp8e4m3", "fp8e5m2"}


@pytest.mark.parametrize("variant", [dict(), dict(scale="tensor"), dict(scale="tensor", out_dtype="fp16"),
                                     dict(out_dtype="fp32"), dict(scale="row")], ids=["plain", "sten", "sten_fp16", "fp32", "srow"])
def test_compiles_for_sm90(reg, variant):
    """Every default instance's variant compiles for sm_90a (CPU), within the shared-memory limit,
    with the parameters the family's signature names."""
    p = reg.problem("gemm", M=1000, N=3000, K=528, dtype="fp8e4m3", layout="rcr", **variant)
    insts = []
    for inst in instances_of(reg, "gemm", FAMILY):
        if inst.key.dtype.value == "fp8e4m3":
            try:
                insts.append(reg.specialized(inst, p))
            except InvalidKernelKey as exc:  # fp32 staging of the deepest 128x256 ring: over the limit
                assert "shared memory" in str(exc) and variant.get("out_dtype") == "fp32"
    assert insts
    report = reg.build(max_workers=1, progress=False, instances=insts)
    assert not report.failed, report.failed
    for inst in insts:
        job = reg.job(inst)
        assert kernel_parameters(job.source, inst.name) == list(reg.family(inst).signature(inst.key))
        assert reg.family(inst).supports(inst.key, p) is None, inst.name
        files = reg.cache.lookup(reg.fingerprint(inst)).files
        meta = json.loads(files["kernel.json"].read_text())
        assert meta["shared"] <= reg.family(inst).smem_bytes(inst.key) <= reg.arch.smem_per_block_bytes
        assert meta["num_warps"] == 12 and ".target sm_90a" in files["kernel.ptx"].read_text()


def test_refused_where_kernels_are_interpreted(tmp_path):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path, interpret=True))
    r.declare("gemm", "default")
    p = r.problem("gemm", M=256, N=512, K=256, dtype="fp8e4m3", layout="rcr", scale="tensor")
    cands, rejected = r.candidates(p)
    assert cands and all(c.family.name != FAMILY for c in cands)
    reasons = [rejected[r.specialized(i, p).name] for i in instances_of(r, "gemm", FAMILY) if i.key.dtype.value == "fp8e4m3"]
    assert reasons and all("interpreter" in why for why in reasons)
    assert r.select(p).instance.family != FAMILY
    # Selecting as on the GPU (a selection study on a CPU): the family is a candidate again.
    gpu_like = Registry("sm_90", settings=Settings(cache_dir=tmp_path, interpret=True), interpret=False)
    gpu_like.declare("gemm", "default")
    assert any(c.family.name == FAMILY for c in gpu_like.candidates(p)[0])


@pytest.mark.parametrize("change, words", [
    (dict(dtype="fp16"), "fp8"), (dict(layout="rrr"), "rcr"), (dict(fast_accum=True), "fast_accum"),
    (dict(block_k=64), "block_k"), (dict(block_m=64), "block_m"), (dict(num_warps=8), "num_warps"),
    (dict(n_split=1), "block_n / n_split"), (dict(epilogue="srow_bcol"), "epilogue"), (dict(batched=True), "batched"),
    (dict(out_dtype="fp32", num_stages=4), "shared memory"),
])
def test_check_refuses(reg, change, words):
    reasons = reg.catalog.families[FAMILY].check(_key(**change), reg.arch)
    assert any(words in r for r in reasons), reasons


def test_invalid_n_split():
    with pytest.raises(InvalidKernelKey):
        _key(n_split=4)


def test_supports_needs_tma_alignment(reg):
    fam = reg.catalog.families[FAMILY]
    assert "ldb" in fam.supports(_key(), reg.problem("gemm", M=256, N=512, K=208, ldb=216, dtype="fp8e4m3", layout="rcr"))
    assert "fp8e5m2" in fam.supports(_key(), reg.problem("gemm", M=256, N=512, K=256, dtype="fp8e5m2", layout="rcr"))


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def gpu_reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("g")))
    r.declare("gemm", "full")
    return r


# (M, N, K, extra problem fields): partial tiles in M and N, a partial last K block, K below one
# block, more tiles than SMs (several tiles per program), per-tensor and per-row scales (the rows
# and columns of partial tiles masked), every output type.
GPU_CASES = [(1000, 3000, 528, dict()), (256, 256, 64, dict(scale="tensor")), (4096, 4096, 1024, dict(scale="tensor")),
             (384, 640, 4096, dict(scale="tensor", out_dtype="fp16")), (200, 520, 384, dict(out_dtype="fp32")),
             (1000, 3000, 528, dict(scale="row")), (4096, 4096, 1024, dict(scale="row", out_dtype="fp16"))]


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["fp8e4m3", "fp8e5m2"])
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}_{'_'.join(f'{k}{v}' for k, v in c[3].items()) or 'plain'}")
def test_gpu_matches_reference(gpu_reg, dtype, case):
    M, N, K, extra = case
    p = gpu_reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", **extra)
    insts = [i for i in instances_of(gpu_reg, "gemm", FAMILY) if i.key.dtype.value == dtype]
    assert insts
    ran = 0
    for seed, inst in enumerate(insts):
        try:
            variant = gpu_reg.specialized(inst, p)
        except InvalidKernelKey as exc:  # fp32 output staging of the deepest 128x256 ring: over the limit
            assert "shared memory" in str(exc) and extra.get("out_dtype") == "fp32"
            continue
        assert gpu_reg.family(inst).supports(variant.key, p) is None, variant.name
        assert_matches_reference(gpu_reg, "gemm", p, instance=inst.name, interpret=False, seed=seed)
        ran += 1
    assert ran
