"""Grouped convolution on the GPU against the NumPy float64 reference (run through the device tool):
every instance that supports each case, the TMA families included."""

import os

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore import Registry, Settings  # noqa: E402
from ckcore.dispatch import launch  # noqa: E402
from ckcore.testing import assert_matches_reference  # noqa: E402

from cases import DTYPES, GPU_CASES, MATRIX, OPS, SPECIAL, layout  # noqa: E402



@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    # A cache the caller already built into (CKCORE_CACHE_DIR: content-addressed and checked on
    # every load, so sharing it is safe) saves compiling every default instance again.
    cache = os.environ.get("CKCORE_CACHE_DIR") or tmp_path_factory.mktemp("c")
    r = Registry("sm_90", settings=Settings(cache_dir=cache))
    for op in OPS:
        r.declare(op, "default")
    report = r.build(max_workers=16, progress=False)
    assert not report.failed, report.failed
    return r


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cl", [True, False], ids=["cl", "cf"])
@pytest.mark.parametrize("name", sorted(GPU_CASES))
def test_every_supporting_instance(reg, op, dtype, cl, name):
    fields = GPU_CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], cl))
    ranked = reg.select(p).ranked
    assert ranked
    for r in ranked:
        assert_matches_reference(reg, op, p, instance=r.instance.name, interpret=False, seed=len(r.instance.name))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cl", [True, False], ids=["cl", "cf"])
@pytest.mark.parametrize("name", sorted(MATRIX) + sorted(SPECIAL))
def test_selected_on_small_cases(reg, op, dtype, cl, name):
    fields = MATRIX.get(name) or SPECIAL[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], cl))
    assert_matches_reference(reg, op, p, interpret=False, seed=7)


@pytest.mark.parametrize("op,name", [("grouped_conv_bwd_weight", "wgrad_long"), ("grouped_conv_fwd", "dense_3x3"),
                                     ("grouped_conv_bwd_data", "dense_3x3")])
def test_split_is_bitwise_deterministic(reg, op, name):
    """Split-K instances (the pointer and TMA families) give bitwise-equal results run to run."""
    p = reg.problem(op, **GPU_CASES[name], dtype="bf16", layout="nhwgc")
    split = [i for i in reg.of_op(op) if getattr(i.key, "split_k", 1) > 1 and reg.family(i).supports(i.key, p) is None]
    assert split and (op == "grouped_conv_bwd_weight" or any(i.family.startswith("conv_tma") for i in split))
    spec = reg.catalog.op(op)
    tensors = spec.random_tensors(p, 0, "cuda")
    tma = [i for i in split if i.family.startswith("conv_tma")]
    for inst in tma[:3] + [i for i in split if i not in tma][:3]:
        outs = [launch(reg, op, p, dict(tensors), instance=inst.name).clone() for _ in range(5)]
        assert all(torch.equal(outs[0], o) for o in outs[1:]), inst.name


def test_matches_torch_on_a_side_stream(reg):
    op = "grouped_conv_fwd"
    p = reg.problem(op, **GPU_CASES["resnext_like"], dtype="bf16", layout="nhwgc")
    spec = reg.catalog.op(op)
    tensors = spec.random_tensors(p, 1, "cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = launch(reg, op, p, dict(tensors))
    s.synchronize()
    ref = spec.torch_baseline(p, tensors)()
    torch.testing.assert_close(y.float(), ref.float(), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("op", OPS)
def test_channels_first_staged(reg, op):
    """A contiguous (channels-first) problem through the twin's best channels-last instance."""
    p = reg.problem(op, ndim=2, N=4, G=2, C=64, K=96, spatial=[15, 17], filter=[3, 3], stride=[1, 1], pad=[1, 1],
                    dilation=[1, 1], dtype="bf16", layout="ngchw")
    staging = reg.staging(p)
    inst = reg.select(staging.problem).instance
    assert reg.staging_for(inst, p) == staging
    assert_matches_reference(reg, op, p, instance=inst.name, seed=4, interpret=False)
