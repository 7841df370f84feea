"""GEMM on the GPU against the NumPy float64 reference (run through the device tool)."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore import Registry, Settings  # noqa: E402
from ckcore.measure import validate  # noqa: E402

SHAPES = [(1, 37, 61), (37, 45, 70), (128, 256, 64), (257, 129, 300), (1000, 1000, 1000), (16, 4096, 4096)]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    # A cache the caller already built into (CKCORE_CACHE_DIR: content-addressed and checked on
    # every load) saves compiling every default instance again.
    cache = os.environ.get("CKCORE_CACHE_DIR") or tmp_path_factory.mktemp("cache")
    reg = Registry(settings=Settings(cache_dir=cache), arch="sm_90")
    reg.declare("gemm")
    reg.build(max_workers=16, progress=False)
    return reg


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_selected_matches_reference(registry, dtype, layout, shape):
    M, N, K = shape
    p = registry.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout)
    v = validate(registry, "gemm", p, seed=M + N + K, interpret=False)
    assert v.passed, (registry.select(p).instance.name, v)


@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_every_instance_matches_reference(registry, layout, dtype):
    p = registry.problem("gemm", M=144, N=272, K=208, dtype=dtype, layout=layout)
    for r in registry.select(p).ranked:
        v = validate(registry, "gemm", p, instance=r.instance.name, seed=3, interpret=False)
        assert v.passed, (r.instance.name, v)


def test_padded_leading_dims(registry):
    p = registry.problem("gemm", M=64, N=96, K=80, dtype="fp16", layout="rcr", lda=96, ldb=88)
    assert validate(registry, "gemm", p, interpret=False).passed


def test_runs_on_current_stream(registry):
    from ckcore.dispatch import launch

    p = registry.problem("gemm", M=256, N=256, K=256, dtype="bf16", layout="rcr")
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16).t()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        c = launch(registry, "gemm", p, {"a": a, "b": b})
    s.synchronize()
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=2e-1)



EPILOGUES = [{"bias": "col", "activation": "gelu"}, {"bias": "row", "activation": "gelu_tanh", "num_d": 1},
             {"alpha": 0.5, "beta": 2.0, "activation": "silu"}, {"num_d": 2, "activation": "sigmoid"},
             {"activation": "relu"}, {"bias": "col", "activation": "tanh"}]
EPI_SHAPES = [(37, 45, 70), (1000, 1000, 1000), (16, 4096, 4096)]
BATCHES = {"packed": {"batch": 8}, "shared_b": {"batch": 4, "stride_b": 0, "bias": "col", "activation": "gelu"},
           "padded_c": {"batch": 3, "stride_c": 300 * 256 + 64}}
TOP = 4  # ranked candidates checked per problem in the every-instance tests


def _epilogue_problems(registry):
    """(problem, how many of its ranked candidates the tests run) for every test below."""
    out = [(registry.problem("gemm", M=M, N=N, K=K, dtype=d, layout="rcr", **f), 1)
           for d in ("fp16", "bf16", "fp32") for f in EPILOGUES for M, N, K in EPI_SHAPES]
    out += [(registry.problem("gemm", M=144, N=272, K=208, dtype="bf16", layout=lay, bias="col", activation="gelu",
                              beta=1.0), TOP) for lay in ("rcr", "rrr", "crr", "ccr")]
    out += [(registry.problem("gemm", M=300, N=256, K=192, dtype=d, layout="rcr", **f), TOP)
            for d in ("fp16", "bf16", "fp32") for f in BATCHES.values()]
    return out


@pytest.fixture(scope="module")
def variants(registry):
    """Compile every epilogue and batch variant the tests run, in parallel, before they run."""
    insts = {r.instance.name: r.instance for p, top in _epilogue_problems(registry) for r in registry.select(p).ranked[:top]}
    report = registry.build(max_workers=16, progress=False, instances=list(insts.values()))
    assert report.failed == 0, report.failures
    return registry


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("fields", EPILOGUES, ids=lambda f: "_".join(f"{k}{v}" for k, v in f.items()))
@pytest.mark.parametrize("shape", EPI_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fused_epilogue_matches_reference(variants, dtype, fields, shape):
    M, N, K = shape
    p = variants.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", **fields)
    v = validate(variants, "gemm", p, seed=M + N, interpret=False)
    assert v.passed, (variants.select(p).instance.name, v)


@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
def test_top_instances_with_an_epilogue(variants, layout):
    p = variants.problem("gemm", M=144, N=272, K=208, dtype="bf16", layout=layout, bias="col", activation="gelu", beta=1.0)
    for r in variants.select(p).ranked[:TOP]:
        v = validate(variants, "gemm", p, instance=r.instance.name, seed=5, interpret=False)
        assert v.passed, (r.instance.name, v)


@pytest.mark.parametrize("case", list(BATCHES))
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_batched_matches_reference(variants, case, dtype):
    p = variants.problem("gemm", M=300, N=256, K=192, dtype=dtype, layout="rcr", **BATCHES[case])
    for r in variants.select(p).ranked[:TOP]:
        v = validate(variants, "gemm", p, instance=r.instance.name, seed=7, interpret=False)
        assert v.passed, (r.instance.name, v)


QUANT_CASES = [("int8", None, "none"), ("int8", "bf16", "row"), ("int8", "fp16", "tensor"),
               ("fp8e4m3", None, "tensor"), ("fp8e4m3", "bf16", "row"), ("fp8e4m3", "fp16", "none"),
               ("fp8e5m2", "bf16", "tensor"), ("fp8e5m2", "fp32", "row")]
QUANT_SHAPES = [(37, 45, 96), (1000, 1000, 1024), (16, 4096, 4096), (4096, 4096, 4096)]


@pytest.fixture(scope="module")
def quant_variants(registry):
    insts = {}
    for dtype, out, scale in QUANT_CASES:
        for M, N, K in QUANT_SHAPES:
            p = registry.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", out_dtype=out, scale=scale)
            insts.update({r.instance.name: r.instance for r in registry.select(p).ranked[:TOP]})
    report = registry.build(max_workers=16, progress=False, instances=list(insts.values()))
    return registry


@pytest.mark.parametrize("case", QUANT_CASES, ids=lambda c: "_".join(str(x) for x in c))
@pytest.mark.parametrize("shape", QUANT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_quantized_top_instances_match_reference(quant_variants, case, shape):
    dtype, out, scale = case
    M, N, K = shape
    p = quant_variants.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", out_dtype=out, scale=scale)
    for r in quant_variants.select(p).ranked[:TOP]:
        if quant_variants.compile_failure(r.instance.name):
            continue
        v = validate(quant_variants, "gemm", p, instance=r.instance.name, seed=11, interpret=False)
        assert v.passed, (r.instance.name, v)


@pytest.mark.parametrize("case", [("fp8e4m3", None, "tensor"), ("fp8e4m3", "fp16", "row"), ("fp8e5m2", "bf16", "tensor")],
                         ids=lambda c: "_".join(str(x) for x in c))
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1040, 1008, 1024), (200, 4096, 14336)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_halves_instances_match_reference(registry, case, shape):
    """Every default-set tile with two row halves (GemmKey.halves, aligned tiles: sizes divisible
    by 16), compiled for the GPU; the last tile row is partly outside M on 1040 and 200."""
    dtype, out, scale = case
    M, N, K = shape
    p = registry.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", out_dtype=out, scale=scale)
    cands, _ = registry.candidates(p)
    halves = [c.instance for c in cands if c.instance.key.halves]
    assert halves
    for inst in halves:
        v = validate(registry, "gemm", p, instance=inst.name, seed=13, interpret=False)
        assert v.passed, (inst.name, v)


TWO_PROGRAM_EPILOGUES = [{}, {"bias": "col", "activation": "gelu"}, {"beta": 1.0, "num_d": 1, "activation": "silu"}]
TWO_PROGRAM_SHAPES = [(4096, 4096, 1024), (1040, 1008, 1024)]


def _two_program_instances(registry, p):
    cands, _ = registry.candidates(p)
    return [c.instance for c in cands if getattr(c.instance.key, "programs_per_sm", 1) == 2]


@pytest.fixture(scope="module")
def two_program(tmp_path_factory):
    """The default set, with only the two-program persistent instances and their epilogue
    variants compiled (in parallel)."""
    cache = os.environ.get("CKCORE_CACHE_DIR") or tmp_path_factory.mktemp("cache")
    reg = Registry(settings=Settings(cache_dir=cache), arch="sm_90")
    reg.declare("gemm")
    insts = {i.name: i for d in ("bf16", "fp16") for lay in ("rcr", "rrr", "crr", "ccr") for f in TWO_PROGRAM_EPILOGUES
             for i in _two_program_instances(reg, reg.problem("gemm", M=4096, N=4096, K=1024, dtype=d, layout=lay, **f))}
    report = reg.build(max_workers=16, progress=False, instances=list(insts.values()))
    assert report.failed == 0, report.failures
    return reg


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
@pytest.mark.parametrize("fields", TWO_PROGRAM_EPILOGUES, ids=lambda f: "_".join(f"{k}{v}" for k, v in f.items()) or "plain")
def test_two_program_persistent_instances_match_reference(two_program, dtype, layout, fields):
    """Every default-set 16-bit persistent tile with two programs per SM, plain and with fused
    epilogues: 4096 x 4096 gives 1024 tiles over 264 programs (each walks several, two share an
    SM); 1040 x 1008 leaves the last tile row and column partly outside C. With C-shaped
    epilogue inputs (C_in, D) there are none: two programs with Triton's layout-conversion buffer
    need more shared memory than an SM has (``PersistentGemm.check``)."""
    c_shaped = "beta" in fields or "num_d" in fields
    for M, N, K in TWO_PROGRAM_SHAPES:
        p = two_program.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout, **fields)
        two = _two_program_instances(two_program, p)
        assert len(two) == (0 if c_shaped else 2), two
        if c_shaped:
            _, rejected = two_program.candidates(p)
            assert any("shared memory" in why for name, why in rejected.items() if "_p2" in name), rejected
        for inst in two:
            v = validate(two_program, "gemm", p, instance=inst.name, seed=17, interpret=False)
            assert v.passed, (inst.name, v)


@pytest.mark.parametrize("layout", ["rcr", "crr"])
def test_staged_unaligned(registry, layout):
    """Unaligned leading dimensions run on padded copies through the best TMA instance of the
    twin problem (named, so staging is taken whatever selection would weigh)."""
    p = registry.problem("gemm", M=1023, N=1025, K=1027, dtype="bf16", layout=layout, bias="col", activation="gelu")
    staging = registry.catalog.op("gemm").staging(p)
    twin = registry.select(staging.problem).instance
    assert registry.family(twin).name in ("gemm_persistent", "gemm_tma")
    assert registry.staging_for(twin, p) == staging
    v = validate(registry, "gemm", p, instance=twin.name, seed=5, interpret=False)
    assert v.passed, (twin.name, v)


def test_selection_stages_4095_cube(registry):
    p = registry.problem("gemm", M=4095, N=4095, K=4095, dtype="bf16", layout="rcr")
    sel = registry.select(p)
    assert sel.staging is not None, sel.reason
    v = validate(registry, "gemm", p, seed=1, interpret=False)
    assert v.passed, (sel.instance.name, v)


@pytest.mark.parametrize("dtype", ["fp8e4m3", "int8"])
def test_quantized_row_major_b_staged_and_prepacked(registry, dtype):
    p = registry.problem("gemm", M=512, N=768, K=1024, dtype=dtype, layout="rrr",
                         **({"scale": "row"} if dtype != "int8" else {}))
    assert registry.select(p).staging is not None
    for prepack in ((), ("b",)):
        v = validate(registry, "gemm", p, seed=2, interpret=False, prepack=prepack)
        assert v.passed, (prepack, v)


# Stream-K tails: 3000 x 2000 (192 tiles of 128 x 256 on 132 SMs: no whole wave, every tile
# shared out), 1024 x 10240 (320: one data-parallel wave, then the tail), 1040 x 1008 (partial
# last tiles, fewer tiles than SMs) and 256 x 512 x 8192 (8 tiles of 128 x 128, 4 of 128 x 256: each
# split over many programs).
SK_SHAPES = [(3000, 2000, 1000), (1024, 10240, 1024), (1040, 1008, 1024), (256, 512, 8192)]


@pytest.fixture(scope="module")
def stream_k(tmp_path_factory):
    """A registry of the full set's persistent instances with a stream-K tail (compiled in parallel)."""
    from ck_plugin_gemm.sets import persistent_stream_k_keys

    cache = os.environ.get("CKCORE_CACHE_DIR") or tmp_path_factory.mktemp("cache")
    reg = Registry(settings=Settings(cache_dir=cache), arch="sm_90")
    for key in persistent_stream_k_keys(reg.arch):
        reg.add("gemm_persistent", key)
    report = reg.build(max_workers=16, progress=False)
    assert report.failed == 0, report.failures
    return reg


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
@pytest.mark.parametrize("fields", [{}, {"bias": "col", "activation": "gelu"}], ids=["plain", "bias_gelu"])
def test_stream_k_persistent_instances_match_reference(stream_k, dtype, layout, fields):
    """Every persistent instance with a stream-K tail (and its epilogue variant), run twice per
    problem: the second run checks the arrival counters were left at zero."""
    for M, N, K in SK_SHAPES:
        p = stream_k.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout, **fields)
        cands, _ = stream_k.candidates(p)
        assert len(cands) == 3, [c.instance.name for c in cands]
        for c in cands:
            for seed in (5, 6):
                v = validate(stream_k, "gemm", p, instance=c.instance.name, seed=seed, interpret=False)
                assert v.passed, (c.instance.name, v)


# Split tails (tail_split): 3000 x 2000 (192 tiles of 128 x 256: 60 split after one wave), 1024 x
# 6144 (the same count), 1040 x 4000 (partial last tiles: 9 x 16 = 144 of 128 x 256, 12 split; of
# 256 x 128, 5 x 32 = 160, 28 split).
TS_SHAPES = [(3000, 2000, 1000), (1024, 6144, 512), (1040, 4000, 256)]


@pytest.fixture(scope="module")
def tail_split(tmp_path_factory):
    """A registry of the split-tail twins of the default set's one-program 16-bit persistent tiles."""
    import attrs

    cache = os.environ.get("CKCORE_CACHE_DIR") or tmp_path_factory.mktemp("cache")
    reg = Registry(settings=Settings(cache_dir=cache), arch="sm_90")
    full = Registry(arch="sm_90")
    full.declare("gemm", "default")
    for inst in full.of_op("gemm"):
        k = inst.key
        if (inst.family == "gemm_persistent" and k.dtype.value in ("bf16", "fp16") and not k.warp_specialize
                and k.programs_per_sm == 1 and not k.stream_k and not k.tail_split):
            reg.add("gemm_persistent", attrs.evolve(k, tail_split=True))
    report = reg.build(max_workers=16, progress=False)
    assert report.failed == 0, report.failures
    return reg


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
def test_tail_split_persistent_instances_match_reference(tail_split, dtype, layout):
    """Every split-tail instance that supports each shape, plain; and with bias + gelu on 1024 x
    10240 (320 tiles of 128 x 256: two whole waves and 56 split, where fused epilogues are offered)."""
    shapes = [(*s, {}) for s in TS_SHAPES] + [(1024, 10240, 256, {"bias": "col", "activation": "gelu"})]
    for M, N, K, fields in shapes:
        p = tail_split.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout=layout, **fields)
        cands, _ = tail_split.candidates(p)
        assert cands, (M, N, K, fields)
        for c in cands:
            v = validate(tail_split, "gemm", p, instance=c.instance.name, seed=7, interpret=False)
            assert v.passed, (c.instance.name, v)
