"""Direct depthwise kernels in Triton's interpreter (CPU) against the grouped convolution
reference: every direction × ndim × dtype × layout, filters 1-31, stride 2, dilation 2,
channel multiplier 1 and 2, every default instance; and how selection treats them."""

import json
import math

import attrs
import pytest

from ckcore import Registry, Settings
from ckcore.render import render
from ckcore.cli import main
from ckcore.testing import assert_matches_reference

OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")
DTYPES = ("fp16", "bf16", "fp32")


def layout(ndim, cl):
    spatial = "dhw"[3 - ndim:]
    return f"n{spatial}gc" if cl else f"ngc{spatial}"


def dw_case(ndim, N, G, mult, spatial, filter, stride=1, pad=0, dilation=1):
    per = lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * ndim  # noqa: E731
    return dict(ndim=ndim, N=N, G=G, C=G, K=G * mult, spatial=per(spatial), filter=per(filter), stride=per(stride),
                pad=per(pad), dilation=per(dilation))


MATRIX = {
    1: dw_case(1, 2, 24, 2, 19, 5, stride=2, pad=2),
    2: dw_case(2, 2, 20, 1, (9, 8), 3, pad=2, dilation=2),
    3: dw_case(3, 1, 16, 2, (4, 5, 6), 3, stride=(1, 2, 2), pad=1),
}


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    for op in OPS:
        r.declare(op, "default")
    return r


def best_dw(reg, p):
    """The best-ranked depthwise instance for ``p``."""
    ranked = [r.instance for r in reg.select(p).ranked if r.instance.family.startswith("dw_")]
    assert ranked, reg.select(p).rejected
    return ranked[0].name


@pytest.mark.parametrize("cl", [True, False], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ndim", sorted(MATRIX))
@pytest.mark.parametrize("op", OPS)
def test_every_direction_ndim_dtype_layout(reg, op, ndim, dtype, cl):
    p = reg.problem(op, **MATRIX[ndim], dtype=dtype, layout=layout(ndim, cl))
    assert_matches_reference(reg, op, p, instance=best_dw(reg, p), interpret=True, seed=ndim)


@pytest.mark.parametrize("fields", [
    dw_case(2, 2, 16, 1, (6, 7), 1),
    dw_case(2, 2, 16, 2, (9, 9), 3, stride=2, pad=1),
    dw_case(2, 1, 16, 1, (10, 9), 5, pad=2, dilation=2),
    dw_case(2, 1, 32, 2, (11, 10), 7, pad=3),
    dw_case(2, 1, 16, 1, (12, 9), (1, 11), pad=(0, 5)),       # InceptionNeXt-style band
    dw_case(1, 2, 32, 1, 45, 31, pad=15),                      # Conformer
    dw_case(1, 1, 16, 2, 50, 31, stride=2, pad=15, dilation=2),
], ids=["1x1", "3x3s2m2", "5x5d2", "7x7m2", "1x11", "k31", "k31s2d2m2"])
@pytest.mark.parametrize("op", OPS)
def test_filter_sizes_strides_dilations_multipliers(reg, op, fields):
    p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    assert_matches_reference(reg, op, p, instance=best_dw(reg, p), interpret=True, seed=1)


@pytest.mark.parametrize("dtype,cl", [("bf16", True), ("fp32", False)])
@pytest.mark.parametrize("op", OPS)
def test_every_default_instance(reg, op, dtype, cl):
    mine = [i for i in reg.of_op(op) if i.family.startswith("dw_") and i.key.dtype.value == dtype
            and i.key.channels_last == cl]
    assert len(mine) >= 3
    for n, inst in enumerate(sorted(mine, key=lambda i: i.name)):
        split = getattr(inst.key, "split", 1)
        side = 16 if not cl else max(6, int((split * inst.key.block_p) ** 0.5) + 1)
        if split > 1 and not cl:
            side = max(16, -(-int((split * inst.key.block_p) ** 0.5) // 16) * 16)
        # Split instances need split blocks of pixels: a 1x1 filter keeps them cheap here.
        filt, pad = (1, 0) if split > 1 else (3, 1)
        # Sliding-window instances are compiled for one column stride. Contiguous tiles are 4-8
        # channels wide: 16 channels (the fewest a16 takes) still make several channel blocks and
        # halve the interpreter's work on the split instances' large planes.
        mult = 2 if inst.key.multiplier_two else 1  # multiplier-two instances serve K/G = 2 only
        fields = dw_case(2, 1, 32 if cl else 16, mult, (side, side if cl else 16 * max(1, side // 16)), filt, pad=pad,
                         stride=getattr(inst.key, "stride_w", 1))
        if inst.family == "dw_win_bwd_weight":
            # split blocks of block_h rows of N·Ho: tall; a 1x3 filter, padded, over block_w + 3
            # output columns (two column blocks, the second ragged)
            s, rows, cols = inst.key.stride_w, -(-split * inst.key.block_h // 2), inst.key.block_w + 3
            fields = dw_case(2, 2, 16, mult, ((rows - 1) * s + 1, (cols - 1) * s + 1), (1, 3), stride=s, pad=(0, 1))
        p = reg.problem(op, **fields, dtype=dtype, layout=layout(2, cl))
        assert reg.family(inst).supports(inst.key, p) is None, (inst.name, reg.family(inst).supports(inst.key, p))
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


def test_not_for_grouped_problems(reg):
    p = reg.problem("grouped_conv_fwd", **dict(dw_case(2, 1, 4, 1, (5, 5), 3), C=8, K=8), dtype="bf16", layout="nhwgc")
    sel = reg.select(p)
    mine = [i for i in reg.of_op("grouped_conv_fwd") if i.family == "dw_fwd" and i.key.dtype.value == "bf16"
            and i.key.channels_last]
    assert mine and all("C/G = 1" in sel.rejected[i.name] for i in mine)


SUITE_ROW = {"op": "grouped_conv", "name": "mbv2.dw144", "ndim": 2, "N": 32, "C": 144, "K": 144, "G": 144,
             "spatial": [56, 56], "filter": [3, 3], "stride": [1, 1], "pad": [1, 1], "dilation": [1, 1],
             "dtype": "bf16", "layout": "nhwgc"}


def test_select_explains_which_family_won(reg, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(tmp_path))
    assert main(["select", "grouped_conv_fwd", "--problem", json.dumps(SUITE_ROW), "--explain"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(("dw_fwd_", "dw_win_fwd_"))  # the chosen instance names its family
    assert any(line.startswith("reason: lightgbm") for line in out)
    # The families compete for a depthwise problem; a direct kernel ranks first.
    ranked = [r.instance.family for r in reg.select(reg.catalog.op("grouped_conv_fwd").problem(**SUITE_ROW)).ranked]
    assert ranked[0] in ("dw_fwd", "dw_win_fwd") and {"conv_fwd", "dw_fwd", "dw_win_fwd"} <= set(ranked)


def test_without_this_plugin_grouped_conv_still_computes(tmp_path):
    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path, disabled_plugins=("depthwise",)))
    reg.declare("grouped_conv_fwd", "default")
    p = reg.problem("grouped_conv_fwd", **dw_case(2, 1, 32, 1, (7, 7), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert reg.select(p).instance.family == "conv_fwd"
    assert_matches_reference(reg, "grouped_conv_fwd", p, interpret=True)


@pytest.mark.parametrize("unroll", [2, 4])
@pytest.mark.parametrize("m1", [True, False], ids=["m1", "m2"])
@pytest.mark.parametrize("cl", [True, False], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("op", OPS[:2])
def test_unrolled_taps(tmp_path, op, cl, m1, unroll):
    """Several taps per loop step: 9 and 5×2 taps do not divide by the unroll, so the last step
    masks taps past the filter."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    family = {"grouped_conv_fwd": "dw_fwd", "grouped_conv_bwd_data": "dw_bwd_data"}[op]
    inst = r.add(family, {"dtype": "bf16", "channels_last": cl, "block_p": 32, "block_c": 16, "num_warps": 4,
                          "num_stages": 1, "access": "i32", "multiplier_one": m1, "unroll": unroll})
    assert inst.name.endswith(f"_t{unroll}_i32")
    fields = dw_case(2, 2, 16, 1 if m1 else 2, (7, 9), 3, stride=(1, 2), pad=1)
    p = r.problem(op, **fields, dtype="bf16", layout=layout(2, cl))
    assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=unroll)


def _access(inst):
    """The instance's access mode, or None for families without one (the pointwise GEMMs)."""
    access = getattr(inst.key, "access", None)
    return access.value if access is not None else None


@pytest.mark.parametrize("fields", [
    dw_case(2, 2, 12, 1, (9, 8), 3, pad=1),
    dw_case(2, 1, 20, 1, (11, 10), 5, stride=2, pad=2),
    dw_case(3, 1, 108, 1, (3, 6, 5), 3, stride=(1, 2, 2), pad=1),
], ids=["c12", "c20s2", "x3d108"])
@pytest.mark.parametrize("op", OPS)
def test_v4_instances_serve_channels_divisible_by_4(reg, op, fields):
    """``v4`` instances (4-element channel vectors) serve channel counts that are multiples of 4
    but not of 16, where ``a16`` refuses; every one of them matches the reference."""
    p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    every = [i for i in reg.of_op(op) if _access(i) == "v4" and i.key.dtype.value == "bf16"]
    v4 = [i for i in every if reg.family(i).supports(i.key, p) is None]
    assert v4  # the others need stride 1 or more pixels for their split, not other channels
    assert all("% 4" not in reg.family(i).supports(i.key, p) for i in every if i not in v4)
    a16 = [i for i in reg.of_op(op) if i.family.startswith("dw_") and i.key.access.value == "a16"
           and i.key.dtype.value == "bf16" and i.key.channels_last and i.key.multiplier_one]
    assert a16 and all(reg.family(i).supports(i.key, p) is not None for i in a16)
    for n, inst in enumerate(sorted(v4, key=lambda i: i.name)):
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


@pytest.mark.parametrize("op", OPS)
def test_v4_refuses_channels_not_divisible_by_4(reg, op):
    p = reg.problem(op, **dw_case(2, 1, 10, 1, (6, 6), 3, pad=1), dtype="bf16", layout="nhwgc")
    v4 = [i for i in reg.of_op(op) if _access(i) == "v4" and i.key.dtype.value == "bf16"]
    assert v4 and all("C % 4 == 0 (C=10)" in reg.family(i).supports(i.key, p) for i in v4)


def test_v4_is_depthwise_only():
    from ck_plugin_grouped_conv.keys import ConvFwdKey
    from ckcore.errors import InvalidKernelKey

    with pytest.raises(InvalidKernelKey, match="access='v4'"):
        ConvFwdKey(dtype="bf16", channels_last=True, block_m=64, block_n=64, block_k=32, access="v4")


@pytest.mark.parametrize("unroll", [4, 9, 16])
@pytest.mark.parametrize("m1", [True, False], ids=["m1", "m2"])
@pytest.mark.parametrize("cl", [True, False], ids=["channels_last", "channels_first"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_backward_weight_taps_per_pass(tmp_path, ndim, cl, m1, unroll):
    """Backward-weight with several taps per pass over the pixels: tap counts 7, 9 (3×3, dilation
    2) and 12 (3×2×2) against 4, 9 and 16 taps per pass, so passes end part-filled or are
    exact; split 3 leaves uneven pixel shares."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_bwd_weight", {"dtype": "bf16", "channels_last": cl, "block_p": 16, "block_c": 16,
                                   "num_warps": 2, "access": "i32", "multiplier_one": m1, "unroll": unroll,
                                   "split": 3})
    assert inst.name.endswith(f"_t{unroll}_i32")
    fields = {1: dw_case(1, 2, 16, 1 if m1 else 2, 61, 7, stride=2, pad=3),
              2: dw_case(2, 2, 16, 1 if m1 else 2, (9, 8), 3, pad=2, dilation=2),
              3: dw_case(3, 1, 16, 1 if m1 else 2, (4, 5, 6), (3, 2, 2), stride=(1, 2, 1), pad=1)}[ndim]
    p = r.problem("grouped_conv_bwd_weight", **fields, dtype="bf16", layout=layout(ndim, cl))
    assert_matches_reference(r, "grouped_conv_bwd_weight", p, instance=inst.name, interpret=True, seed=unroll)


def test_backward_weight_accumulators_per_pass_are_bounded():
    from ck_plugin_depthwise.family import DwBwdWeight, DwFwd
    from ck_plugin_depthwise.keys import DwBwdWeightKey, DwFwdKey
    from ckcore.arch import load

    arch = load("sm_90")
    key = DwBwdWeightKey(dtype="bf16", channels_last=True, block_p=64, block_c=64, unroll=5)
    reasons = DwBwdWeight().check(key, arch)
    assert any("160 fp32 accumulators per thread > 128 (5 accumulator tiles)" in r for r in reasons)
    assert not DwBwdWeight().check(attrs.evolve(key, block_p=16, unroll=16), arch)
    assert not DwFwd().check(DwFwdKey(dtype="bf16", channels_last=True, block_p=64, block_c=64, unroll=3), arch)
    assert any("> 64" in r for r in DwFwd().check(DwFwdKey(dtype="bf16", channels_last=True, block_p=128,
                                                            block_c=128, num_warps=4), arch))


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("m1", [True, False], ids=["m1", "m2"])
def test_unit_stride_backward_data(tmp_path, ndim, m1):
    """The unit-stride twin (no per-tap division) with dilation 2 and padding that leaves border
    pixels without taps; it refuses stride 2."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_bwd_data", {"dtype": "fp32", "channels_last": ndim != 2, "block_p": 32, "block_c": 16,
                                 "num_warps": 4, "access": "generic", "multiplier_one": m1, "unit_stride": True})
    assert "_u1_" in inst.name
    fields = dw_case(ndim, 2, 16, 1 if m1 else 2, {1: 23, 2: (9, 8), 3: (4, 5, 6)}[ndim], 3, pad=1, dilation=2)
    p = r.problem("grouped_conv_bwd_data", **fields, dtype="fp32", layout=layout(ndim, ndim != 2))
    assert_matches_reference(r, "grouped_conv_bwd_data", p, instance=inst.name, interpret=True, seed=ndim)
    strided = r.problem("grouped_conv_bwd_data", **{**fields, "stride": [2] * ndim}, dtype="fp32",
                        layout=layout(ndim, ndim != 2))
    assert "unit-stride" in r.family(inst).supports(inst.key, strided)


# Backward-data's stride phases (see the grouped conv plugin's tests): strides sharing a factor
# with the dilation (phases without a valid tap), stride above the filter, filter = stride,
# sizes not divisible by the stride, mixed 3-D strides; multiplier 1 and 2.
DW_PHASES = {
    "s3_d2": dw_case(2, 2, 16, 1, (11, 10), 3, stride=3, pad=2, dilation=2),
    "s2_d2_mult2": dw_case(2, 1, 16, 2, (9, 8), 3, stride=2, pad=2, dilation=2),
    "1x1_s2": dw_case(2, 2, 16, 1, (7, 9), 1, stride=2),
    "patch4": dw_case(2, 1, 16, 1, (12, 8), 4, stride=4),
    "3d_mixed": dw_case(3, 1, 16, 2, (5, 6, 7), (3, 2, 3), stride=(2, 1, 3), pad=(1, 0, 1)),
}


@pytest.mark.parametrize("access", ["a16", "generic"])
@pytest.mark.parametrize("name", sorted(DW_PHASES))
def test_backward_data_stride_phases(reg, name, access):
    fields = DW_PHASES[name]
    p = reg.problem("grouped_conv_bwd_data", **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    fits = [i for i in sorted(reg.of_op(p.op), key=lambda i: i.name) if i.family == "dw_bwd_data"
            and i.key.dtype.value == "bf16" and i.key.channels_last and i.key.access.value == access
            and reg.family(i).supports(i.key, p) is None]
    assert fits and not fits[0].key.unit_stride
    assert_matches_reference(reg, p.op, p, instance=fits[0].name, interpret=True, seed=5)


TILE_CASES = {
    "1d_f31": dw_case(1, 2, 16, 1, 40, 31, pad=15),
    "1d_s2_m2": dw_case(1, 1, 16, 2, 19, 5, stride=2, pad=2),
    "2d_odd": dw_case(2, 2, 16, 1, (9, 11), 3, pad=1),
    "2d_f1": dw_case(2, 1, 16, 1, (5, 7), 1),
    "2d_s2_d2": dw_case(2, 1, 32, 1, (10, 13), 5, stride=2, pad=3, dilation=2),
    "2d_f7_m2": dw_case(2, 1, 16, 2, (8, 9), 7, pad=3),
    "3d_mixed": dw_case(3, 1, 16, 1, (4, 6, 5), 3, stride=(1, 2, 1), pad=1, dilation=(1, 1, 2)),
    "3d_d2": dw_case(3, 1, 16, 1, (4, 6, 5), 3, pad=(1, 2, 1), dilation=(1, 2, 1)),
    "2d_f5_d2": dw_case(2, 1, 32, 1, (10, 13), 5, pad=3, dilation=2),
}


@pytest.mark.parametrize("access", ["a16", "i32", "generic"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(TILE_CASES))
def test_forward_spatial_tiles(tmp_path, case, dtype, access):
    """Spatial-tile forward kernels (``block_h``): tiles that overhang the output plane in both
    directions and channel blocks the channels half fill (16 of 32) or fill, every ndim, filters
    1-31, stride 2 with dilation 2, multiplier 1 and 2, taps per step that do not divide the
    filter width (bf16 ``a16`` with multiplier one takes the channel-pair path)."""
    fields = TILE_CASES[case]
    m1 = fields["K"] == fields["G"]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_fwd", {"dtype": dtype, "channels_last": True, "block_p": 32, "block_h": 4, "block_c": 32,
                            "num_warps": 4, "access": access, "multiplier_one": m1, "unroll": 2})
    assert "_h4_" in inst.name
    p = r.problem("grouped_conv_fwd", **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, "grouped_conv_fwd", p, instance=inst.name, interpret=True)


def test_forward_spatial_tiles_are_channels_last_and_divide_block_p(reg):
    fam = reg.catalog.families["dw_fwd"]
    from ck_plugin_depthwise.keys import DwFwdKey
    from ckcore.arch import load

    arch = load("sm_90")
    cf = DwFwdKey(dtype="bf16", channels_last=False, block_p=64, block_c=32, block_h=4)
    assert any("channels-last" in r for r in fam.check(cf, arch))
    odd = DwFwdKey(dtype="bf16", channels_last=True, block_p=32, block_c=32, num_warps=1, block_h=64)
    assert any("dividing block_p" in r for r in fam.check(odd, arch))
    assert not fam.check(DwFwdKey(dtype="bf16", channels_last=True, block_p=64, block_c=32, block_h=8), arch)


BWD_TILE_CASES = {k: v for k, v in TILE_CASES.items() if v["K"] == v["G"] and set(v["stride"]) == {1}}


@pytest.mark.parametrize("access", ["a16", "i32", "generic"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(BWD_TILE_CASES))
def test_backward_data_spatial_tiles(tmp_path, case, dtype, access):
    """Spatial-tile backward-data kernels (unit stride, multiplier one): the forward of dy with the
    filter flipped, over tiles that overhang the input plane; every ndim, filters 1-31,
    dilation 2."""
    fields = BWD_TILE_CASES[case]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_bwd_data", {"dtype": dtype, "channels_last": True, "block_p": 32, "block_h": 4, "block_c": 32,
                                 "num_warps": 4, "access": access, "multiplier_one": True, "unit_stride": True,
                                 "unroll": 2})
    assert inst.name.endswith(f"_u1_h4_m1_t2_{access}")
    p = r.problem("grouped_conv_bwd_data", **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, "grouped_conv_bwd_data", p, instance=inst.name, interpret=True)


def test_backward_data_spatial_tiles_need_unit_stride_and_multiplier_one(reg):
    from ck_plugin_depthwise.keys import DwBwdDataKey
    from ckcore.arch import load

    fam, arch = reg.catalog.families["dw_bwd_data"], load("sm_90")
    for m1, u1 in ((True, False), (False, True)):
        key = DwBwdDataKey(dtype="bf16", channels_last=True, block_p=64, block_c=32, block_h=4, multiplier_one=m1,
                           unit_stride=u1)
        assert any("unit_stride and multiplier_one" in r for r in fam.check(key, arch))


@pytest.mark.parametrize("access", ["a16", "i32", "generic"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(TILE_CASES))
def test_backward_weight_spatial_tiles(tmp_path, case, dtype, access):
    """Spatial-patch backward-weight kernels: a split's share is a range of patches that overhang
    the output plane; every ndim, filters 1-31, stride 2 with dilation 2, multiplier 1 and 2,
    taps per pass that do not divide the filter, two splits combined in order."""
    fields = TILE_CASES[case]
    m1 = fields["K"] == fields["G"]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_bwd_weight", {"dtype": dtype, "channels_last": True, "block_p": 16, "block_h": 2, "block_c": 32,
                                   "num_warps": 4, "access": access, "multiplier_one": m1, "unroll": 3, "split": 2})
    assert inst.name.endswith("_k2_h2" + ("_m1" if m1 else "") + f"_t3_{access}")
    p = r.problem("grouped_conv_bwd_weight", **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, "grouped_conv_bwd_weight", p, instance=inst.name, interpret=True)


WINDOW_CASES = {
    "2d_k3_c12": (dw_case(2, 2, 12, 1, (7, 10), 3, pad=1), 3),
    "1d_k31": (dw_case(1, 3, 16, 1, 45, 31, pad=15), 7),
    "1d_k5s2m2": (dw_case(1, 2, 16, 2, 23, 5, stride=2, pad=2), 3),
    "2d_k1": (dw_case(2, 2, 16, 1, (6, 7), 1), 3),
    "2d_k3": (dw_case(2, 2, 16, 1, (9, 11), 3, pad=1), 3),
    "2d_k3s2m2": (dw_case(2, 1, 16, 2, (9, 12), 3, stride=2, pad=1), 3),
    "2d_k5d2": (dw_case(2, 1, 16, 1, (10, 9), 5, pad=2, dilation=2), 3),
    "2d_k7": (dw_case(2, 1, 16, 1, (9, 13), 7, pad=3), 7),
    "2d_k7_t5": (dw_case(2, 1, 16, 1, (9, 13), 7, pad=3), 5),
    "2d_1x11": (dw_case(2, 1, 16, 1, (6, 14), (1, 11), pad=(0, 5)), 5),
    "2d_k5s2_t5": (dw_case(2, 2, 16, 1, (11, 10), 5, stride=2, pad=2), 5),  # EfficientNet's 5x5, stride 2
    "2d_k3_t5": (dw_case(2, 2, 16, 1, (9, 11), 3, pad=1), 5),  # more taps per step than the filter has
    "3d_k3s2": (dw_case(3, 1, 16, 1, (4, 5, 6), 3, stride=(1, 2, 2), pad=1), 3),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(WINDOW_CASES))
@pytest.mark.parametrize("op", OPS)
def test_sliding_window(tmp_path, op, case, dtype):
    """dw_win_fwd, dw_win_bwd_data and dw_win_bwd_weight against the reference: 1-D, 2-D, 3-D,
    filters 1-31 (forward and backward-data: taps per step dividing the filter width, or leaving
    1-3 taps to the one-at-a-time remainder; backward-weight: a last step with taps past the
    filter), column dilation 2 compiled in; forward and backward-weight also column stride 2 and
    multiplier 2 (backward-data windows are unit-stride, multiplier one: for them those cases run
    with stride 1 and multiplier one; the refusals are tested below); backward-weight split in
    two where the rows make two blocks. Small tiles (4 output columns) so several column blocks,
    ragged edges and padding are crossed."""
    fields, steps = WINDOW_CASES[case]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    unit = all(s == 1 for s in fields["stride"]) and fields["K"] == fields["G"]
    if op == "grouped_conv_bwd_data" and not unit:
        fields = {**fields, "stride": [1] * fields["ndim"], "K": fields["G"]}
    p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    extra = {}
    if op == "grouped_conv_bwd_weight":
        d, h, _ = p.as_3d()["out"]
        extra = {"split": 2 if p.N * d * h > 4 else 1}
    inst = r.add("dw_win_" + op[len("grouped_conv_"):], {"dtype": dtype, "channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4,
                                "block_c": 16, "num_warps": 1, "multiplier_one": fields["K"] == fields["G"],
                                # 12 channels: v4 (the row offset hinted whole), else 32-bit offsets
                                "access": "v4" if fields["C"] % 16 else "i32",
                                "unroll": steps, "stride_w": fields["stride"][-1], "dilation_w": fields["dilation"][-1],
                                **extra})
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=len(case))


# Multiplier-two windows (K/G = 2): (problem, taps per step, dtypes). 12 and 20 channels: channel
# blocks past the last channel (block_c 16: 8 input channels per block).
M2_CASES = {
    "1d_k5s2": (dw_case(1, 2, 12, 2, 23, 5, stride=2, pad=2), 3, ("fp16",)),
    "2d_k3": (dw_case(2, 2, 20, 2, (7, 10), 3, pad=1), 3, DTYPES),
    "2d_k7": (dw_case(2, 1, 16, 2, (9, 13), 7, pad=3), 7, ("bf16",)),
    "2d_k5d2": (dw_case(2, 1, 16, 2, (10, 9), 5, pad=2, dilation=2), 3, ("fp32",)),
    "3d_k3s2": (dw_case(3, 1, 16, 2, (4, 5, 6), 3, stride=(1, 2, 2), pad=1), 2, ("bf16",)),
}


@pytest.mark.parametrize("case,dtype", [(c, d) for c, (_, _, dts) in sorted(M2_CASES.items()) for d in dts])
@pytest.mark.parametrize("op", OPS)
def test_sliding_window_multiplier_two(tmp_path, op, case, dtype):
    """dw_win_* with ``multiplier_two`` against the reference: 1-D, 2-D, 3-D, filters 3-7, column
    stride 2 (forward, backward-weight; backward-data windows are unit-stride, so it runs those
    cases at stride 1), dilation 2, every dtype, ``a16`` where the channels allow it (16: 32
    filter channels) else ``i32``, channel blocks past the last channel; the forward also with
    the pipelined loop (num_stages 2; forward and backward-data, with the one-at-a-time remainder
    where 3 taps per step leave two of 5), backward-weight split in two. The kernels load x's (or
    store dx's) channels as contiguous vectors of block_c / 2, not one element at a time."""
    fields, steps, _ = M2_CASES[case]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    if op == "grouped_conv_bwd_data":
        fields = {**fields, "stride": [1] * fields["ndim"]}
    p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    extra = {}
    if op == "grouped_conv_bwd_weight":
        d, h, _ = p.as_3d()["out"]
        extra = {"split": 2 if p.N * d * h > 4 else 1}
    stages = (1, 2) if op != "grouped_conv_bwd_weight" and case in ("2d_k3", "2d_k5d2") else (1,)
    for num_stages in stages:
        inst = r.add("dw_win_" + op[len("grouped_conv_"):], {
            "dtype": dtype, "channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4, "block_c": 16,
            "num_warps": 1, "num_stages": num_stages, "multiplier_two": True,
            "access": "i32" if fields["C"] % 16 else "a16", "unroll": steps, "stride_w": fields["stride"][-1],
            "dilation_w": fields["dilation"][-1], **extra})
        assert "_m2_" in inst.name and r.family(inst).supports(inst.key, p) is None
        text = render(r.family(inst), inst.key, r.arch)
        assert "Kg)" not in text  # no per-channel division by the multiplier
        assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=len(case) + num_stages)


@pytest.mark.parametrize("case,dtype,unit", [(c, d, u) for c, (f, _, dts) in sorted(M2_CASES.items()) for d in dts
                                              for u in (True, False) if u or any(s > 1 for s in f["stride"])])
def test_backward_data_multiplier_two(tmp_path, case, dtype, unit):
    """Tap-by-tap dw_bwd_data with ``multiplier_two`` (channels-last; the backward-data windows
    are unit-stride only) against the reference: the cases above with their strides (stride
    phases) and at stride 1 (``unit_stride``, 2 taps per step: the last step masked), every dtype
    among them."""
    fields, _, _ = M2_CASES[case]
    if unit:
        fields = {**fields, "stride": [1] * fields["ndim"]}
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    op = "grouped_conv_bwd_data"
    p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    inst = r.add("dw_bwd_data", {"dtype": dtype, "channels_last": True, "block_p": 16, "block_c": 16, "num_warps": 1,
                                 "multiplier_two": True, "unit_stride": unit, "unroll": 1 + unit,
                                 "access": "i32" if fields["C"] % 16 else "a16"})
    assert r.family(inst).supports(inst.key, p) is None
    assert r.family(inst).grid(inst.key, p)[1] == -(-p.K // 16)
    assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=len(case))


def test_multiplier_two_rules(reg):
    """``multiplier_two`` keys: depthwise windows and channels-last tap-by-tap backward-data
    only, not with multiplier_one, a16 or i32; they serve K/G = 2 only."""
    from ck_plugin_depthwise.keys import DwFwdKey, DwWindowFwdKey

    arch = reg.arch
    fam = reg.catalog.families["dw_win_fwd"]
    base = dict(dtype="bf16", channels_last=True, block_p=32, block_c=64, block_h=8, block_w=4, num_warps=2,
                multiplier_two=True)
    assert fam.check(DwWindowFwdKey(**base), arch) == []
    assert any("exclude each other" in x for x in fam.check(DwWindowFwdKey(**base, multiplier_one=True), arch))
    assert any("takes a16 or i32" in x for x in fam.check(DwWindowFwdKey(**base, access="v4"), arch))
    tap = reg.catalog.families["dw_fwd"]
    assert any("channels-last tap-by-tap backward-data (block_h 0) only" in x for x in tap.check(DwFwdKey(dtype="bf16", channels_last=True, block_p=32,
                                                                      block_c=64, multiplier_two=True), arch))
    key = DwWindowFwdKey(**base)
    for mult, served in ((1, False), (2, True), (3, False)):
        p = reg.problem("grouped_conv_fwd", **dw_case(2, 2, 16, mult, (8, 8), 3, pad=1), dtype="bf16", layout="nhwgc")
        why = fam.supports(key, p)
        assert (why is None) == served, why
        if not served:
            assert f"multiplier-two kernel, K/G = {mult}" in why


@pytest.mark.parametrize("case,rows", [("2d_k3", 3), ("2d_k3", 2), ("2d_k5d2", 2), ("2d_k3s2m2", 3), ("3d_k3s2", 2),
                                       ("2d_k7", 3)])
def test_backward_weight_window_filter_rows(tmp_path, case, rows):
    """dw_win_bwd_weight with ``filter_rows`` > 1 against the reference: all filter rows in one
    program (2d_k3 with 3), a last group with rows past the filter (3 rows in groups of 2; 5 with
    dilation 2), stride and multiplier 2, 3-D, a 7x7 filter in groups of 3 (the last of one row);
    bf16 and fp32, split in two. More filter rows than the filter has are refused."""
    fields, steps = WINDOW_CASES[case]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    op = "grouped_conv_bwd_weight"
    for dtype in ("bf16", "fp32"):
        p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
        inst = r.add("dw_win_bwd_weight", {"dtype": dtype, "channels_last": True, "block_p": 16, "block_h": 4,
                                           "block_w": 4, "block_c": 16, "num_warps": 1, "access": "i32",
                                           "multiplier_one": fields["K"] == fields["G"], "unroll": steps,
                                           "stride_w": fields["stride"][-1], "dilation_w": fields["dilation"][-1],
                                           "split": 2, "filter_rows": rows})
        assert inst.name.endswith(f"_fr{rows}_m1_t{steps}_i32" if fields["K"] == fields["G"] else f"_fr{rows}_t{steps}_i32")
        z, y, x = p.as_3d()["filter"]
        assert r.family(inst).grid(inst.key, p)[2] == z * -(-y // rows) * -(-x // steps)
        assert r.family(inst).supports(inst.key, p) is None
        assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=rows)
        # The interpreter runs programs one at a time, and a later one rewrites whatever a row
        # past the filter would have clobbered: so the store's guard is checked in the text.
        assert "& (fy0 + 1 < Y))" in render(r.family(inst), inst.key, r.arch)
    p = r.problem(op, **WINDOW_CASES["2d_1x11"][0], dtype="fp32", layout="nhwgc")
    key = attrs.evolve(inst.key, stride_w=1, dilation_w=1, multiplier_one=True, filter_rows=2)
    assert "filter_rows=2 exceeds the filter's 1 row(s)" in r.family(inst).supports(key, p)


@pytest.mark.parametrize("case,split", [("2d_k3", 4), ("2d_k3s2m2", 2), ("3d_k3s2", 2), ("1d_k31", 1), ("tall", 256)])
def test_backward_weight_window_tree_reduce(tmp_path, case, split):
    """dw_win_bwd_weight with ``tree_reduce``: the partials of a tap summed as one [split,
    block_c] tile (split 4 with block_c 16 in one step; split 256 in two steps of 128, on 512
    rows) against the reference, bf16 and fp32; a split that is not a power of two is refused."""
    fields, steps = WINDOW_CASES[case] if case in WINDOW_CASES else (
        dw_case(2, 2, 16, 1, (512, 6), (1, 3), pad=(0, 1)), 3)
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    op = "grouped_conv_bwd_weight"
    base = {"channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4, "block_c": 16, "num_warps": 1,
            "access": "v4" if fields["C"] % 16 else "i32", "multiplier_one": fields["K"] == fields["G"],
            "unroll": steps, "stride_w": fields["stride"][-1], "dilation_w": fields["dilation"][-1],
            "split": split, "tree_reduce": True}
    for dtype in ("bf16", "fp32"):
        inst = r.add("dw_win_bwd_weight", {**base, "dtype": dtype})
        assert "_tr_" in inst.name and "tl.sum(tl.load(part[:, None]" in render(r.family(inst), inst.key, r.arch)
        p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
        assert r.family(inst).supports(inst.key, p) is None
        assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=split)
    with pytest.raises(Exception, match="power-of-two split, not 3"):
        r.add("dw_win_bwd_weight", {**base, "dtype": "bf16", "split": 3})


@pytest.mark.parametrize("case", ["2d_k3", "2d_4x6_t3", "1d_k31", "3d_k3s2", "1d_k5s2m2"])
@pytest.mark.parametrize("op", OPS[:2])
def test_sliding_window_flat_pipelined_loop(tmp_path, op, case):
    """num_stages 3: filter depths, rows and whole steps in one flat loop (for Triton's pipeliner),
    then the remainder taps per filter row (2d_4x6_t3: two steps of 3 per row, with 4 rows, so
    that a wrong row index cannot still visit every (row, step) pair; 1d_k31: four steps of 7 and
    3 taps); 3-D, stride and multiplier 2 forward. bf16 (the interpreter ignores num_stages: this
    checks the loop's index arithmetic)."""
    fields, steps = WINDOW_CASES[case] if case in WINDOW_CASES else (
        dw_case(2, 1, 16, 1, (9, 13), (4, 6), pad=(1, 2)), 3)
    if op != "grouped_conv_fwd":
        fields = {**fields, "stride": [1] * fields["ndim"], "K": fields["G"]}
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("dw_win_" + op[len("grouped_conv_"):], {"dtype": "bf16", "channels_last": True, "block_p": 16, "block_h": 4,
                                "block_w": 4, "block_c": 16, "num_warps": 1, "num_stages": 3, "access": "i32",
                                "multiplier_one": fields["K"] == fields["G"], "unroll": steps,
                                "stride_w": fields["stride"][-1], "dilation_w": fields["dilation"][-1]})
    assert "for t in tl.range(0, Z * Y * n_steps, num_stages=3)" in render(r.family(inst), inst.key, r.arch)
    p = r.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=len(case))


def test_backward_data_window_refuses_strides_and_multipliers(reg):
    op = "grouped_conv_bwd_data"
    win = [i for i in reg.of_op(op) if i.family == "dw_win_bwd_data" and i.key.dtype.value == "bf16"]
    assert win and all((i.key.multiplier_one or i.key.multiplier_two) and i.key.stride_w == 1 for i in win)
    for mult in (1, 2):
        p = reg.problem(op, **dw_case(2, 1, 32, mult, (9, 9), 3, stride=(2, 1), pad=1), dtype="bf16", layout="nhwgc")
        assert all("unit-stride kernel" in reg.family(i).supports(i.key, p) for i in win)
    p = reg.problem(op, **dw_case(2, 1, 32, 2, (9, 9), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert all(("K/G = 2" in (reg.family(i).supports(i.key, p) or "")) != i.key.multiplier_two for i in win)
    p = reg.problem(op, **dw_case(2, 1, 32, 3, (9, 9), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert all("K/G = 3" in reg.family(i).supports(i.key, p) for i in win)
    with pytest.raises(Exception, match="backward-data sliding windows are column stride 1"):
        reg.add("dw_win_bwd_data", {"dtype": "bf16", "channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4,
                                    "block_c": 16, "num_warps": 1, "access": "i32", "stride_w": 2, "multiplier_one": True})


def test_sliding_window_refuses_other_strides_and_layouts(reg):
    op = "grouped_conv_fwd"
    win = [i for i in reg.of_op(op) if i.family == "dw_win_fwd" and i.key.dtype.value == "bf16"]
    assert win and all(i.key.channels_last for i in win)
    for mult in (1, 2):  # the multiplier-two windows at K/G = 2, the others at 1
        p = reg.problem(op, **dw_case(2, 1, 32, mult, (9, 9), 3, stride=3, pad=1), dtype="bf16", layout="nhwgc")
        assert all("column stride" in reg.family(i).supports(i.key, p) for i in win if i.key.multiplier_two == (mult == 2))
    p = reg.problem(op, **dw_case(2, 1, 32, 1, (9, 9), 3, pad=1), dtype="bf16", layout="ngchw")
    assert all("channels-last kernel" in reg.family(i).supports(i.key, p) for i in win)
    with pytest.raises(Exception, match="block_p=32 != block_h"):
        reg.add("dw_win_fwd", {"dtype": "bf16", "channels_last": True, "block_p": 32, "block_h": 4, "block_w": 4,
                               "block_c": 16, "num_warps": 1, "access": "i32"})


def test_window_register_cap(tmp_path):
    """``max_registers`` (Triton's maxnreg): named ``_mr{n}``, passed to the compiler, a feature
    only when set (models trained before it still match), refused unless a multiple of 8 in
    [64, 255]; the kernel is the same (the interpreter ignores the cap)."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    base = {"dtype": "bf16", "channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4, "block_c": 16,
            "num_warps": 1, "access": "i32", "multiplier_one": True, "unroll": 3}
    capped = r.add("dw_win_fwd", {**base, "max_registers": 168})
    plain = r.add("dw_win_fwd", base)
    fam = r.family(capped)
    assert capped.name == plain.name.replace("_sw1d1_", "_sw1d1_mr168_")
    assert fam.compile_options(capped.key)["maxnreg"] == 168 and "maxnreg" not in fam.compile_options(plain.key)
    assert fam.features(capped.key)["max_registers"] == 168.0 and "max_registers" not in fam.features(plain.key)
    assert render(fam, capped.key, r.arch).replace(capped.name, plain.name) == render(fam, plain.key, r.arch)
    with pytest.raises(Exception, match="max_registers=100"):
        r.add("dw_win_fwd", {**base, "max_registers": 100})
    fields, _ = WINDOW_CASES["2d_k3"]
    p = r.problem("grouped_conv_fwd", **fields, dtype="bf16", layout=layout(2, True))
    assert_matches_reference(r, "grouped_conv_fwd", p, instance=capped.name, interpret=True)


@pytest.mark.parametrize("kernel_set", ["default", "full"])
@pytest.mark.parametrize("op", ["grouped_conv_fwd", "grouped_conv_bwd_data"])
def test_default_set_register_caps(op, kernel_set, tmp_path):
    """The default (and full) set caps the 8x8x64 window tile at 168 registers: 16-bit dtypes, unit column
    stride, multiplier one, ``a16``, 3, 5 and 7 taps per step (three per dtype); fp32 keeps none.
    Each capped instance has its uncapped twin in the set."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    r.declare(op, kernel_set)
    win = [i for i in r.of_op(op) if i.family.startswith("dw_win")]
    capped = [i for i in win if i.key.max_registers]
    names = {i.name for i in win}
    for dtype, count in (("fp16", 3), ("bf16", 3), ("fp32", 0)):
        mine = [i for i in capped if i.key.dtype.value == dtype]
        assert len(mine) == count
        assert {i.key.unroll for i in mine} == ({3, 5, 7} if count else set())
    for i in capped:
        k = i.key
        assert (k.max_registers, k.block_c, k.num_warps, k.stride_w, k.access, k.multiplier_one) == (168, 64, 2, 1, "a16", True)
        assert (k.block_h, k.block_w) == (8, 8)
        assert i.name.replace("_mr168", "") in names


def test_backward_weight_second_stage_per_pass(reg):
    """Which second stage each default backward-weight kernel renders (docs/conv.md,
    "Backward-weight's second stage"): every depthwise kernel has one counter per (channel
    block, pass), whose last program sums the pass's taps up to 16 splits a step; the sliding
    windows of 7 or more taps per step at split <= 16 find the pass's taps by scanning the
    filter's (``reduce_pass_scan``), the others walk the pass's tap slots (``reduce_pass``)."""
    per_block = "arrived = tl.atomic_add(lock_ptr + pid_c, 1, sem=\"acq_rel\")"
    per_pass = "lock = lock_ptr + pid_c * tl.num_programs(2) + tl.program_id(2)"
    scan = "for tap in range(0, taps):"
    seen = set()
    for inst in reg.of_op("grouped_conv_bwd_weight"):
        if inst.family not in ("dw_bwd_weight", "dw_win_bwd_weight"):
            continue
        text = render(reg.family(inst), inst.key, reg.arch)
        scanned = inst.family == "dw_win_bwd_weight" and inst.key.unroll >= 7 and inst.key.split <= 16
        assert per_pass in text and per_block not in text, inst.name
        assert (scan in text) == scanned, inst.name
        step = max(d for d in (1, 2, 4, 8, 16) if inst.key.split % d == 0)
        assert f"for s0 in range(0, SPLIT, {step}):" in text or inst.key.tree_reduce, inst.name
        seen.add((inst.family, scanned))
    assert seen == {("dw_bwd_weight", False), ("dw_win_bwd_weight", False), ("dw_win_bwd_weight", True)}


def test_backward_weight_window_rules(reg, tmp_path):
    """dw_win_bwd_weight: in the default set, multiplier one: 8-column tiles (eleven ``a16``, three
    of them with 5 taps per step; four ``v4``) × three splits per dtype, and eight multiplier-two
    windows per dtype (sets.py);
    refuses num_stages > 1, more splits
    than blocks of rows, other column strides; its kernel's accumulators are one tile per tap and
    per dy column; its second stage is the tap-by-tap family's (`dw_common.reduce_pass`; at 7 taps
    per step and split <= 16, `reduce_pass_scan`)."""
    win = [i.key for i in reg.of_op("grouped_conv_bwd_weight") if i.family == "dw_win_bwd_weight"]
    m2 = [k for k in win if k.multiplier_two]  # sets.py's _WINDOW_M2: eight per dtype
    assert len(m2) == 8 * 3 and all(k.channels_last and not k.multiplier_one for k in m2)
    win = [k for k in win if not k.multiplier_two]
    assert len(win) == 3 * (11 + 4) * 3 and {k.block_w for k in win} == {8} and {k.split for k in win} == {4, 16, 64}
    assert {k.unroll for k in win} == {3, 5, 7} and sum(k.unroll == 5 for k in win) == 3 * 3 * 3
    assert all(k.channels_last and k.multiplier_one for k in win)
    assert sum(k.access == "v4" for k in win) == 3 * 4 * 3 and {k.access for k in win} == {"a16", "v4"}
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    base = {"dtype": "bf16", "channels_last": True, "block_p": 16, "block_h": 4, "block_w": 4, "block_c": 16,
            "num_warps": 1, "multiplier_one": True, "access": "i32", "unroll": 3, "split": 4}
    with pytest.raises(Exception, match="num_stages=3"):
        r.add("dw_win_bwd_weight", {**base, "num_stages": 3})
    with pytest.raises(Exception, match="fp32 accumulators per thread"):  # (3 + 32) tiles of 64 per thread
        r.add("dw_win_bwd_weight", {**base, "block_w": 32, "block_p": 128, "block_h": 4, "block_c": 512, "num_warps": 1})
    inst = r.add("dw_win_bwd_weight", base)
    fam = r.family(inst)
    assert fam.grid(inst.key, r.problem("grouped_conv_bwd_weight", **dw_case(2, 2, 16, 1, (9, 11), (3, 7), pad=1),
                                        dtype="bf16", layout="nhwgc")) == (1, 4, 3 * 3)
    p = r.problem("grouped_conv_bwd_weight", **dw_case(2, 1, 16, 1, (9, 9), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert "fewer than split=4" in fam.supports(inst.key, p)  # 9 rows: 3 blocks of 4
    p = r.problem("grouped_conv_bwd_weight", **dw_case(2, 2, 16, 1, (9, 9), 3, stride=2, pad=1), dtype="bf16",
                  layout="nhwgc")
    assert "column stride" in fam.supports(inst.key, p)
    text = render(fam, inst.key, r.arch)
    # Second stage per (channel block, pass): one counter each; the last program of a pass loops
    # over the pass's tap slots, all 4 splits of a tap loaded together.
    assert "lock = lock_ptr + pid_c * tl.num_programs(2) + tl.program_id(2)" in text
    assert "arrived = tl.atomic_add(lock, 1, sem=\"acq_rel\")" in text
    assert f"for i in range(0, {inst.key.unroll}):" in text and "for s0 in range(0, SPLIT, 4):" in text
    p3 = r.problem("grouped_conv_bwd_weight", **dw_case(2, 4, 16, 1, (9, 11), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert fam.workspaces(inst.key, p3)["counters"] == 4 * math.ceil(p3.K / inst.key.block_c) * inst.key.passes(p3)
    # Ranked like any candidate: a rules estimate, kernel and pair features.
    p = r.problem("grouped_conv_bwd_weight", **dw_case(2, 4, 16, 1, (9, 11), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert fam.supports(inst.key, p) is None
    assert 0 < fam.estimate_ms(inst.key, p, r.arch, r.device) < 1.0
    feats = {**fam.features(inst.key), **fam.pair_features(inst.key, p, r.arch)}
    assert feats["split"] == 4.0 and feats["passes"] == 3 and feats["loads_per_tap"] == 6 / 12


def grouped_case(ndim, N, G, cg, spatial, filter, stride=1, pad=0):
    per = lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * ndim  # noqa: E731
    return dict(ndim=ndim, N=N, G=G, C=G * cg, K=G * cg, spatial=per(spatial), filter=per(filter), stride=per(stride),
                pad=per(pad), dilation=per(1))


# (problem, block_c, block_w): whole blocks of groups and a partial last block (G = 6 with 4 groups
# per block; with 2, three whole blocks), column stride 2, a 5-tap filter (one step of 3 taps and two single taps),
# 1-D and 3-D, C/G from 4 to 16 (16: one group per block); every case has at least 16 output rows
# (N·Do·Ho), the tiles' block_h.
GROUP_WINDOW_CASES = {
    "2d_k3_cg4": (grouped_case(2, 3, 8, 4, (7, 10), 3, pad=1), 16, 4),
    "2d_k3_cg8_g6": (grouped_case(2, 2, 6, 8, (9, 6), 3, pad=1), 32, 2),
    "2d_k3s2_cg4": (grouped_case(2, 4, 8, 4, (9, 12), 3, stride=2, pad=1), 16, 2),
    "2d_k3s2_cg8_g6": (grouped_case(2, 4, 6, 8, (8, 11), 3, stride=2, pad=1), 16, 4),
    "1d_k5_cg4": (grouped_case(1, 16, 16, 4, 21, 5, pad=2), 32, 4),
    "3d_k3_cg16": (grouped_case(3, 2, 3, 16, (3, 5, 6), 3, pad=1), 16, 2),
}


@pytest.mark.parametrize("access", ["a16", "i32"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("case", sorted(GROUP_WINDOW_CASES))
@pytest.mark.parametrize("op", OPS[:2])
def test_grouped_tensor_core_windows(tmp_path, op, case, dtype, access):
    """gw_win_fwd and gw_win_bwd_data (block-diagonal tl.dot per tap; backward-data with each
    group's filter transposed) against the reference: C/G 4 to 16, a last channel block of fewer
    groups, stride 2 (forward; backward-data runs those cases at stride 1), a filter wider than a
    step, 1-D to 3-D, both dtypes and access modes."""
    fields, block_c, block_w = GROUP_WINDOW_CASES[case]
    direction = op[len("grouped_conv_"):]
    if direction == "bwd_data":
        fields = {**fields, "stride": [1] * fields["ndim"]}
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add(f"gw_win_{direction}", {"dtype": dtype, "channels_last": True, "block_p": 16 * block_w, "block_h": 16,
                                         "block_w": block_w, "block_c": block_c, "num_warps": 4, "access": access,
                                         "unroll": 3, "stride_w": fields["stride"][-1]})
    assert inst.name.startswith(f"gw_win_{direction}_")
    p = r.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, op, p, instance=inst.name, interpret=True, seed=len(case))


# (case, block_c, block_w, filter_rows, split) for gw_win_bwd_weight: the cases above (stride 2
# included), one filter row per program or three, split 1 and 2 (at most the units of 16 rows × block_w columns).
GROUP_WINDOW_BWD_WEIGHT = [("2d_k3_cg4", 16, 4, 3, 2), ("2d_k3_cg8_g6", 32, 2, 1, 2), ("2d_k3s2_cg4", 16, 2, 1, 2),
                           ("2d_k3s2_cg8_g6", 16, 4, 3, 1), ("1d_k5_cg4", 32, 4, 1, 1), ("3d_k3_cg16", 16, 2, 3, 2)]


@pytest.mark.parametrize("access", ["a16", "i32"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("case,block_c,block_w,filter_rows,split", GROUP_WINDOW_BWD_WEIGHT)
def test_grouped_tensor_core_windows_bwd_weight(tmp_path, case, block_c, block_w, filter_rows, split, dtype, access):
    """gw_win_bwd_weight (tl.dot of each dy column's transpose with each x column per tap; the
    block-diagonal part of each tile summed over the splits in order) against the reference."""
    _check_group_window_bwd_weight(tmp_path, case, block_c, block_w, filter_rows, split, dtype, access)


@pytest.mark.parametrize("case,split", [("2d_k3_cg8_g6", 2), ("2d_k3s2_cg8_g6", 1)])
def test_grouped_tensor_core_windows_bwd_weight_two_warps(tmp_path, case, split):
    """The 2-warp 16 x 4 x 32 grouped backward-weight window tile the default set gained in the
    twenty-third session (there at splits 8 and 16; here split 1 and 2, which these small cases
    allow), against the reference."""
    _check_group_window_bwd_weight(tmp_path, case, 32, 4, 1, split, "bf16", "a16", num_warps=2)


def _check_group_window_bwd_weight(tmp_path, case, block_c, block_w, filter_rows, split, dtype, access, num_warps=4):
    fields = GROUP_WINDOW_CASES[case][0]
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add("gw_win_bwd_weight", {"dtype": dtype, "channels_last": True, "block_p": 16 * block_w, "block_h": 16,
                                       "block_w": block_w, "block_c": block_c, "num_warps": num_warps, "access": access,
                                       "unroll": 3, "stride_w": fields["stride"][-1], "filter_rows": filter_rows,
                                       "split": split})
    assert inst.name.startswith("gw_win_bwd_weight_")
    p = r.problem("grouped_conv_bwd_weight", **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    assert r.family(inst).supports(inst.key, p) is None
    assert_matches_reference(r, "grouped_conv_bwd_weight", p, instance=inst.name, interpret=True, seed=len(case))


def test_grouped_tensor_core_windows_bwd_weight_refuse(reg):
    """What gw_win_bwd_weight does not take beyond the other grouped windows: tree_reduce,
    unroll_rows, more accumulator tiles than registers (static); more splits than units of work,
    partials over the split workspace cap (per problem)."""
    from ckcore.arch import load

    fam, arch = reg.catalog.families["gw_win_bwd_weight"], load("sm_90")
    base = dict(dtype="bf16", channels_last=True, block_p=64, block_h=32, block_w=2, block_c=32, unroll=3, split=4)
    assert fam.check(fam.key_cls(**base), arch) == []
    assert any("tree_reduce" in r for r in fam.check(fam.key_cls(**base, tree_reduce=True), arch))
    assert any("accumulators per thread" in r
               for r in fam.check(fam.key_cls(**{**base, "block_c": 64, "filter_rows": 3}), arch))
    p = reg.problem("grouped_conv_bwd_weight", **grouped_case(2, 2, 8, 4, 8, 3, pad=1), dtype="bf16", layout="nhwgc")
    assert "fewer than split=4" in (fam.supports(fam.key_cls(**{**base, "block_h": 16, "block_p": 128, "block_w": 8}), p) or "")
    assert fam.workspaces(fam.key_cls(**base), p) == {"partials": 1 * 4 * 9 * 32 * 4 * 4, "counters": 4 * 1 * 3}
    assert any("unroll_rows" in r for r in fam.check(fam.key_cls(**base, unroll_rows=2), arch))
    # Partials grow with split × the filter's values: 32 channel blocks × 32 splits × 27 taps × 64 × 64 fp32.
    big = reg.problem("grouped_conv_bwd_weight", **grouped_case(3, 8, 32, 64, 16, 3, pad=1), dtype="bf16",
                      layout="ndhwgc")
    wide = fam.key_cls(**{**base, "block_c": 64, "split": 32, "num_warps": 8})
    assert "partials need 452984832 B" in (fam.supports(wide, big) or "")


@pytest.mark.parametrize("op", OPS[:2])
def test_grouped_tensor_core_windows_refuse(reg, op):
    """What gw_win_fwd and gw_win_bwd_data do not take: fp32, tiles under 16 rows or channels,
    generic access, a channel multiplier (static); depthwise problems and C/G = 2, K/G != C/G,
    groups straddling the block, and fewer rows than a tile's (per problem); backward-data also
    column stride 2 (static) and stride 2 (per problem)."""
    from ckcore.arch import load

    fam, arch = reg.catalog.families["gw_win_" + op[len("grouped_conv_"):]], load("sm_90")
    base = dict(dtype="bf16", channels_last=True, block_p=64, block_h=32, block_w=2, block_c=32, unroll=3)
    ok = fam.key_cls(**base)
    assert fam.check(ok, arch) == []
    for change, why in (({"dtype": "fp32"}, "fp16 or bf16"), ({"block_h": 8, "block_p": 16}, "block_h >= 16"),
                        ({"access": "generic"}, "a16 or i32"), ({"multiplier_one": True}, "multiplier_one")):
        assert any(why in r for r in fam.check(fam.key_cls(**{**base, **change}), arch)), change
    for fields, why in ((grouped_case(2, 2, 32, 1, 8, 3, pad=1), "C/G >= 4"), (grouped_case(2, 2, 16, 2, 8, 3, pad=1), "C/G >= 4"),
                        ({**grouped_case(2, 2, 4, 8, 8, 3, pad=1), "K": 64}, "K/G = C/G"),
                        (grouped_case(2, 2, 2, 24, 8, 3, pad=1), "whole groups"),
                        (grouped_case(1, 8, 8, 8, 40, 3, pad=1), "fill under one tile"),
                        ({**grouped_case(2, 2, 1, 32, 8, 3, pad=1)}, "G > 1")):
        p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
        assert why in (fam.supports(ok, p) or ""), fields
    if op == "grouped_conv_bwd_data":
        assert any("column stride 1" in r for r in fam.check(fam.key_cls(**{**base, "stride_w": 2}), arch))
        p = reg.problem(op, **grouped_case(2, 4, 8, 4, 9, 3, stride=2, pad=1), dtype="bf16", layout="nhwgc")
        assert "unit-stride" in (fam.supports(ok, p) or "")
