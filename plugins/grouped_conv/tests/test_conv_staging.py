"""Channels-first (contiguous) convolutions staged on channels-last copies (ckcore.staging):
every direction and ndim through a channels-last instance that cannot run the problem as it is,
against the NumPy float64 reference in Triton's interpreter; the twin, and when selection stages."""

import attrs
import pytest

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference

from cases import OPS

LAYOUT = {1: "ngcw", 2: "ngchw", 3: "ngcdhw"}


def _problem(reg, op, ndim, **extra):
    fields = dict(ndim=ndim, N=2, G=2, C=32, K=32, spatial=[6, 5, 7][:ndim], filter=[3] * ndim, stride=[1] * ndim,
                  pad=[1] * ndim, dilation=[1] * ndim, dtype="bf16", layout=LAYOUT[ndim])
    return reg.problem(op, **{**fields, **extra})


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("op", OPS)
def test_channels_first_runs_on_the_channels_last_twin(reg, op, ndim):
    p = _problem(reg, op, ndim)
    staging = reg.staging(p)
    assert staging.problem.layout.channels_last and staging.problem.spatial == p.spatial
    spec = reg.catalog.op(op)
    assert [t.name for t in staging.tensors if t.output] == [spec.output]
    assert {t.name for t in staging.tensors} == set(spec.roles.values())
    inst = next(r.instance for r in reg.select(staging.problem).ranked if "_cl_" in r.instance.name)
    assert reg.family(inst).supports(inst.key, p) is not None  # the channels-last kernel cannot run p itself
    assert reg.staging_for(inst, p) == staging
    assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=ndim)


def test_channels_first_with_stride_and_unaligned_pointers(reg):
    """Stride 2, odd channel counts per group, and a problem whose pointers are only 2-byte
    aligned: the twin's buffers are ckcore's own (16-byte aligned)."""
    p = _problem(reg, "grouped_conv_fwd", 2, G=3, C=9, K=12, stride=[2, 2], ptr_align=2)
    staging = reg.staging(p)
    assert staging.problem.ptr_align == 16 and staging.reason == "layout ngchw -> nhwgc"
    inst = next(r.instance for r in reg.select(staging.problem).ranked if "_cl_" in r.instance.name)
    assert_matches_reference(reg, "grouped_conv_fwd", p, instance=inst.name, interpret=True)


def test_channels_last_problems_are_not_staged(reg):
    p = reg.problem("grouped_conv_fwd", ndim=2, N=2, G=1, C=16, K=16, spatial=[8, 8], filter=[3, 3], stride=[1, 1],
                    pad=[1, 1], dilation=[1, 1], dtype="bf16", layout="nhwgc")
    assert reg.staging(p) is None


def test_selection_stages_large_channels_first_problems(tmp_path):
    """A ResNet-50 3x3 layer in PyTorch's default memory format: the channels-first pointer
    kernels are predicted far slower than the copies plus a channels-last kernel."""
    settings = Settings(cache_dir=tmp_path, heuristic="rules")
    fields = dict(ndim=2, N=32, G=1, C=256, K=256, spatial=[14, 14], filter=[3, 3], stride=[1, 1], pad=[1, 1],
                  dilation=[1, 1], dtype="bf16", layout="ngchw")
    on = Registry("sm_90", settings=settings, device_name="NVIDIA H100 80GB HBM3")
    on.declare("grouped_conv_fwd")
    sel = on.select(on.problem("grouped_conv_fwd", **fields))
    assert sel.staging is not None and "_cf_" not in sel.instance.name
    assert sel.direct is not None and "_cf_" in sel.direct.instance.name
    off = Registry("sm_90", settings=attrs.evolve(settings, staging=False), device_name="NVIDIA H100 80GB HBM3")
    off.declare("grouped_conv_fwd")
    assert off.select(off.problem("grouped_conv_fwd", **fields)).staging is None
