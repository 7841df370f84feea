"""Grouped convolution in Triton's interpreter (CPU) against the NumPy float64 reference: every
direction × ndim × dtype × layout, special classes (G = 1, C/G = 1, channel multiplier 2, odd
sizes, stride 2, dilation 2, 31-tap 1D), and every instance of the default set."""

import math

import pytest

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference

from cases import DTYPES, MATRIX, OPS, SPECIAL, case, layout


@pytest.mark.parametrize("cl", [True, False], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ndim", sorted(MATRIX))
@pytest.mark.parametrize("op", OPS)
def test_selected_instance_every_direction_ndim_dtype_layout(reg, op, ndim, dtype, cl):
    p = reg.problem(op, **MATRIX[ndim], dtype=dtype, layout=layout(ndim, cl))
    assert_matches_reference(reg, op, p, interpret=True, seed=ndim)


@pytest.mark.parametrize("dtype,cl", [("bf16", True), ("fp32", False), ("fp16", True)])
@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("op", OPS)
def test_selected_instance_special_cases(reg, op, name, dtype, cl):
    fields = SPECIAL[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], cl))
    assert_matches_reference(reg, op, p, interpret=True, seed=3)


def problem_for(reg, inst):
    """A small problem ``inst`` supports: block-sized channel counts, a partial last block of
    groups where alignment allows it, stride 2 unless the instance assumes stride 1, enough
    output pixels for every split of a backward-weight instance (a forward or backward-data
    split divides the 3×3 filter's taps, at stride 1); the TMA forward ``phases`` kernels get
    stride 2 with C/G one channel box."""
    k = inst.key
    gpb, a16, a16k = k.groups_per_block, k.access.value == "a16", k.access.value == "a16k"
    rows_c, cols_c = (k.block_n, k.block_k) if k.direction == "fwd" else \
        (k.block_k, k.block_n) if k.direction == "bwd_data" else (k.block_m, k.block_n)
    if getattr(k, "flat", False):
        G, Cg, Kg = 1, 3, 16
    elif gpb == 1:  # a16k: a first layer's unaligned C, 16-divisible K
        G, Cg, Kg = (1, 16, 32) if a16 else (1, 3, 16) if a16k else (2, 5, 7)
    else:
        Cg = max(1, min(16 // gpb if a16 else 3, cols_c // gpb))
        Kg = max(1, min(16 // gpb if a16 or a16k else 3, rows_c // gpb))
        G = gpb if a16 or a16k else gpb + 1
    unit = getattr(k, "unit_stride", False)
    split = getattr(k, "split_k", 1)
    # Aligned channels-first instances need 16-divisible spatial strides (of y at least).
    cf16 = (a16 or a16k) and not k.channels_last
    if getattr(k, "phases", False):  # TMA forward for strides above 1: C/G one channel box, even sizes
        fields = case(2, 2, 1, k.block_k, 32, (8, 6), 3, stride=2, pad=1)
    elif split > 1 and k.direction == "bwd_weight":  # at least split blocks of output pixels
        side = int((split * k.block_k) ** 0.5) + 1
        side = -(-side // 16) * 16 if cf16 else side
        fields = case(2, 1, G, G * Cg, G * Kg, (side, side), 1)
    else:
        # a split needs 2 steps of the 3x3 taps per split; TMA patches at a stride above 1 need
        # C/G a multiple of the channel box (test_conv_tma.py covers those)
        stride = 1 if unit or split > 1 or inst.family.startswith("conv_tma") else 2
        fields = case(2, 2, G, G * Cg, G * Kg, (16, 32) if cf16 else (7, 6), 3, stride=stride, pad=1)
    return reg.problem(inst.op, **fields, dtype=k.dtype.value, layout=layout(2, k.channels_last))


@pytest.mark.parametrize("dtype,cl", [("bf16", True), ("fp32", False)])
@pytest.mark.parametrize("op", OPS)
def test_every_default_instance(reg, op, dtype, cl):
    mine = [i for i in reg.of_op(op) if i.family.startswith("conv_") and i.key.dtype.value == dtype
            and i.key.channels_last == cl  # this plugin's families (others may serve the op too)
            and reg.family(i).interpretable]  # Gluon families: test_conv_halo.py (compiled, and on the GPU)
    assert len(mine) > 20
    for n, inst in enumerate(sorted(mine, key=lambda i: i.name)):
        p = problem_for(reg, inst)
        assert reg.family(inst).supports(inst.key, p) is None, (inst.name, p.name, reg.family(inst).supports(inst.key, p))
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


def test_long_backward_weight_reductions_need_a_split(reg):
    """Unsplit backward-weight instances refuse reductions beyond MAX_UNSPLIT_REDUCTION (one fp32
    tensor-core accumulator drifted past the bf16 tolerance at 1.9 M products on an H200); split
    instances, the generic ones included, still serve them, so selection always finds one."""
    from ck_plugin_grouped_conv.family import MAX_UNSPLIT_REDUCTION

    p = reg.problem("grouped_conv_bwd_weight", ndim=3, N=64, G=1, C=32, K=32, spatial=[31, 31, 31],
                    filter=[3, 3, 3], stride=[1, 1, 1], pad=[1, 1, 1], dilation=[1, 1, 1], dtype="bf16",
                    layout="ndhwgc")
    assert p.N * p.out_pixels > MAX_UNSPLIT_REDUCTION
    cands, rejected = reg.candidates(p)
    conv = [c.instance for c in cands if c.instance.family == "conv_bwd_weight"]
    assert conv and all(i.key.split_k > 1 for i in conv)
    unsplit = [i for i in reg.of_op("grouped_conv_bwd_weight") if i.family == "conv_bwd_weight"
               and i.key.split_k == 1 and i.key.dtype.value == "bf16" and i.key.channels_last and i.key.groups_per_block == 1]
    assert unsplit and all("in one accumulator" in rejected[i.name] for i in unsplit)
    assert any(i.key.access.value == "generic" for i in conv)
    # Far longer reductions (67 M pixels, beyond int32 offsets too): a split generic instance still
    # serves; the accumulator limit is on unsplit pointer instances only (and per split for TMA).
    huge = reg.problem("grouped_conv_bwd_weight", ndim=3, N=256, G=1, C=64, K=64, spatial=[64, 64, 64],
                       filter=[3, 3, 3], stride=[1, 1, 1], pad=[1, 1, 1], dilation=[1, 1, 1], dtype="bf16",
                       layout="ndhwgc")
    cands, _ = reg.candidates(huge)
    assert [c for c in cands if c.instance.family == "conv_bwd_weight" and c.instance.key.split_k > 1]


# Backward-data's stride phases: strides that do and do not share a factor with the dilation
# (phases without a single valid tap), stride above the filter, filter = stride (patch
# embedding: one tap per phase), sizes not divisible by the stride, mixed 3-D strides.
PHASES = {
    "s3_d2": case(2, 2, 1, 16, 16, (11, 10), 3, stride=3, pad=2, dilation=2),
    "s2_d2": case(2, 1, 2, 32, 32, (9, 8), 3, stride=2, pad=2, dilation=2),
    "1x1_s2": case(2, 2, 1, 16, 16, (7, 9), 1, stride=2),
    "patch4": case(2, 1, 1, 16, 32, (12, 8), 4, stride=4),
    "s3_k2_pad": case(1, 2, 1, 16, 16, 17, 2, stride=3, pad=1),
    "3d_mixed": case(3, 1, 2, 32, 32, (5, 6, 7), (3, 2, 3), stride=(2, 1, 3), pad=(1, 0, 1)),
}


@pytest.mark.parametrize("access", ["a16", "a16k", "generic"])
@pytest.mark.parametrize("name", sorted(PHASES))
def test_backward_data_stride_phases(reg, name, access):
    fields = PHASES[name]
    p = reg.problem("grouped_conv_bwd_data", **fields, dtype="fp16", layout=layout(fields["ndim"], True))
    inst = next(i for i in sorted(reg.of_op(p.op), key=lambda i: i.name)
                if i.family == "conv_bwd_data" and i.key.access.value == access and i.key.dtype.value == "fp16"
                and i.key.channels_last and i.key.groups_per_block == 1 and reg.family(i).supports(i.key, p) is None)
    assert not inst.key.unit_stride
    assert_matches_reference(reg, p.op, p, instance=inst.name, interpret=True, seed=7)


@pytest.mark.parametrize("split", [2, 4])
@pytest.mark.parametrize("fields", [case(2, 1, 1, 16, 32, (11, 10), 5, stride=(2, 1), pad=2),
                                    case(3, 1, 1, 16, 16, (5, 6, 7), 3, stride=(2, 1, 1), pad=1)], ids=["5x5_s2x1", "3d_s2x1x1"])
def test_backward_data_split_over_stride_phases(reg, fields, split):
    """A split shares each stride phase's taps (phases of different tap counts: uneven shares)."""
    p = reg.problem("grouped_conv_bwd_data", **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    inst = next(i for i in sorted(reg.of_op(p.op), key=lambda i: i.name)
                if i.family == "conv_bwd_data" and i.key.split_k == split and not i.key.unit_stride
                and i.key.dtype.value == "bf16" and i.key.channels_last)
    assert reg.family(inst).supports(inst.key, p) is None, reg.family(inst).supports(inst.key, p)
    assert_matches_reference(reg, p.op, p, instance=inst.name, interpret=True, seed=split)


@pytest.mark.parametrize("op", OPS)
def test_a16k_serves_first_layers_and_refuses_unaligned_k(reg, op):
    """``a16k`` instances assume aligned output channels only: they serve C = 3 with K = 16 (a
    first layer, where ``a16`` refuses) and refuse K = 24, naming the argument."""
    def first(p, access):
        return [i for i in sorted(reg.of_op(op), key=lambda i: i.name) if i.family.startswith("conv_")
                and not i.family.startswith(("conv_tma", "conv_row", "conv_halo")) and i.key.access.value == access
                and i.key.dtype.value == "fp16" and i.key.channels_last and not getattr(i.key, "flat", False)
                and not getattr(i.key, "unit_stride", False) and i.key.groups_per_block == 1]

    p = reg.problem(op, **case(2, 2, 1, 3, 16, (25, 23), 3, stride=2, pad=1), dtype="fp16", layout="nhwgc")
    a16k = first(p, "a16k")
    assert a16k and all(reg.family(i).supports(i.key, p) is None for i in a16k)
    assert all("needs C % 16 == 0 (C=3)" in reg.family(i).supports(i.key, p) for i in first(p, "a16"))
    for n, inst in enumerate(a16k):
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=11 + n)
    q = reg.problem(op, **case(2, 2, 1, 3, 24, (9, 7), 3, stride=2, pad=1), dtype="fp16", layout="nhwgc")
    assert all("K % 16 == 0 (K=24)" in reg.family(i).supports(i.key, q) for i in a16k)


@pytest.fixture(scope="module")
def full_reg(tmp_path_factory):
    """Backward-weight's full set (the tap-block instances are only there)."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("full")))
    r.declare("grouped_conv_bwd_weight", "full")
    return r


@pytest.mark.parametrize("fields", [
    # output pixels >= 8 blocks of 64 (the smallest split); 1-D, 3 taps: one block of 3
    case(1, 4, 4, 64, 64, 260, 3, stride=2, pad=1),
    case(3, 1, 2, 32, 32, (8, 12, 16), 3, stride=(1, 2, 1), pad=1, dilation=(2, 1, 1)),  # 27 taps: 3 blocks of 9
    case(2, 2, 8, 32, 32, (16, 17), 3, pad=1),  # C/G = 4: merged groups
], ids=["1d", "3d", "grouped"])
def test_backward_weight_tap_blocks(full_reg, fields):
    """Every tap-block instance (full set) that supports a problem matches the reference (one
    pixel decomposition and dy tile for several taps; the partials of a split hold one tile per tap)."""
    op, reg = "grouped_conv_bwd_weight", full_reg
    p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    cands, rejected = reg.candidates(p)
    blocks = [c.instance for c in cands if getattr(c.instance.key, "tap_block", 1) > 1]
    assert blocks, rejected
    for n, inst in enumerate(blocks):
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


def test_tap_blocks_need_a_multiple_of_their_taps(full_reg):
    """A 3x2 filter's 6 taps: the 3-tap blocks serve it, the 9-tap blocks say why not."""
    reg = full_reg
    p = reg.problem("grouped_conv_bwd_weight", **case(2, 2, 1, 32, 32, (16, 16), (3, 2), pad=1), dtype="bf16",
                    layout="nhwgc")
    cands, rejected = reg.candidates(p)
    mine = [i.name for i in reg.of_op(p.op) if i.family == "conv_bwd_weight" and i.key.dtype.value == "bf16"
            and i.key.channels_last]
    nine = [name for name in mine if "_tb9_" in name]
    assert nine and all("not a multiple of tap_block=9" in rejected[name] for name in nine)
    assert any("_tb3_" in c.instance.name for c in cands)


@pytest.mark.parametrize("split,groups", [(4, None), (8, 4), (16, 4), (32, 8), (64, 8), (17, None), (24, 6)])
def test_split_reduce_levels(reg, split, groups):
    """``conv_common.split_k_reduce``: one level below 8 splits (and for a prime split), else groups
    of B, the least divisor of split_k with B² >= split_k; one counter per group and the tile's
    (split_k + 1 per tile, ``split_workspaces``). The sums' values are the interpreter tests' (every
    default split instance) and ``benchmarks/split_reduce_check.py``'s on the GPU."""
    import attrs

    from ckcore.render import render

    base = next(i for i in reg.of_op("grouped_conv_bwd_weight") if i.family == "conv_bwd_weight"
                and i.key.split_k > 1 and i.key.tap_block == 1)
    key = attrs.evolve(base.key, split_k=split)
    src = render(reg.catalog.families["conv_bwd_weight"], key, reg.arch)
    assert "locks = lock_ptr + tile * (SPLIT_K + 1)" in src
    if groups is None:
        assert "group = split" not in src and "arrived == SPLIT_K - 1" in src
    else:
        assert f"group = split // {groups}" in src
        assert f"arrived == {groups - 1}" in src and f"arrived == {split // groups - 1}" in src
    p = reg.problem("grouped_conv_bwd_weight", **case(2, 4, 1, 16, 16, (64, 64), 3, pad=1), dtype=key.dtype.value,
                    layout=layout(2, key.channels_last))
    fam = reg.catalog.families["conv_bwd_weight"]
    assert fam.workspaces(key, p)["counters"] == 4 * (split + 1) * (math.prod(fam.grid(key, p)) // split)
