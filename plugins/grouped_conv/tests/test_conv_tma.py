"""The TMA families (``conv_tma_fwd``, ``conv_tma_bwd_data``, ``conv_tma_bwd_weight``) in Triton's interpreter against the
NumPy float64 reference: 1D/2D/3D, every dtype, groups whose channels are not a multiple of the
tile, padding (zero-filled by TMA, negative coordinates included), dilation, depth taps outside
the input, the folded 1×1 path, strides above 1 (forward, backward-weight), and the problems they must refuse."""

import math

import pytest

from ckcore.testing import assert_matches_reference, kernel_parameters

from cases import case, layout

TMA_OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data")

# (fields, why): every case is stride 1, channels-last-able, C/G and K/G multiples of 8.
CASES = {
    "dense_3x3": case(2, 2, 1, 16, 24, (9, 7), 3, pad=1),
    "groups_partial_tiles": case(2, 1, 3, 3 * 40, 3 * 24, (6, 5), 3, pad=(2, 1), dilation=(2, 1)),
    "conv3d_depth_taps_outside": case(3, 1, 2, 32, 48, (3, 4, 5), 3, pad=(2, 1, 0), dilation=(2, 1, 1)),
    "conv1d_5": case(1, 2, 3, 24, 48, 13, 5, pad=2),
    "pointwise_folded": case(2, 2, 2, 80, 32, (5, 6), 1),
    "pointwise_3d_folded": case(3, 2, 1, 16, 16, (2, 3, 3), 1),
    "no_padding_shrinks": case(2, 1, 1, 16, 16, (8, 9), 3),
}


def _tma_instances(reg, op, dtype, merged=False, phases=False):
    """The default TMA instances of ``op`` in ``dtype``: one group per program, or (``merged``)
    several; forward: the stride-1 kernels, or (``phases``) their twins for strides above 1."""
    return sorted((i for i in reg.of_op(op) if i.family.startswith("conv_tma") and i.key.dtype.value == dtype
                   and (i.key.groups_per_block > 1) == merged and getattr(i.key, "phases", False) == phases),
                  key=lambda i: i.name)


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("op", TMA_OPS)
def test_tma_instances_match_reference(reg, op, name, dtype):
    fields = CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    insts = [i for i in _tma_instances(reg, op, dtype) if i.key.split_k == 1]
    assert len(insts) == 8
    # A row-strip patch, a square patch and a tall patch: three different tilings of the pixels.
    for n, inst in enumerate(i for i in insts if i.key.block_h in (1, 8, 16) and i.key.block_w in (128, 8)):
        assert reg.family(inst).supports(inst.key, p) is None, (inst.name, reg.family(inst).supports(inst.key, p))
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


# Split-K forward and backward-data: cases with at least 8 reduction steps (taps × channel blocks).
SPLIT_CASES = ("dense_3x3", "groups_partial_tiles", "conv3d_depth_taps_outside")


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", SPLIT_CASES)
@pytest.mark.parametrize("op", TMA_OPS)
def test_tma_split_k_matches_reference(reg, op, name, dtype):
    """Splits 2 and 4 of a square and a row-strip patch: uneven shares of the taps × channel
    blocks, the last program to arrive summing the partials."""
    fields = CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    insts = [i for i in _tma_instances(reg, op, dtype) if i.key.split_k > 1 and i.key.block_w in (8, 64)]
    assert {i.key.split_k for i in insts} == {2, 4} and len(insts) == 4
    for n, inst in enumerate(insts):
        assert reg.family(inst).supports(inst.key, p) is None, (inst.name, reg.family(inst).supports(inst.key, p))
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=20 + n)


@pytest.mark.parametrize("op", TMA_OPS)
def test_tma_split_k_refusals(reg, op):
    """A split needs two reduction steps per split, and its partials are bounded: a large grid is
    left to the unsplit instances."""
    from ck_plugin_grouped_conv.family import MAX_SPLIT_WORKSPACE

    inst = next(i for i in _tma_instances(reg, op, "bf16") if i.key.split_k == 4 and i.key.block_w == 8)
    fam = reg.family(inst)
    few = reg.problem(op, **case(2, 2, 1, 16, 16, (9, 7), (1, 3), pad=(0, 1)), dtype="bf16", layout="nhwgc")
    assert "3 reduction steps per tile, fewer than 2 per split (split_k=4)" in fam.supports(inst.key, few)
    big = reg.problem(op, **case(2, 64, 1, 64, 64, (56, 56), 3, pad=1), dtype="bf16", layout="nhwgc")
    assert f"> {MAX_SPLIT_WORKSPACE} B" in fam.supports(inst.key, big)
    ok = reg.problem(op, **CASES["dense_3x3"], dtype="bf16", layout="nhwgc")
    tiles = math.prod(fam.grid(inst.key, ok)) // 4  # the grid's last dimension carries the splits
    assert fam.workspaces(inst.key, ok) == {"partials": tiles * 4 * 64 * 128 * 4, "counters": 4 * tiles * (4 + 1)}


# Backward-weight splits the pixel patches over programs, so its cases have enough patches.
WGRAD_CASES = {
    "dense_3x3": case(2, 4, 1, 16, 24, (16, 9), 3, pad=1),
    "groups_partial_tiles": case(2, 2, 3, 3 * 40, 3 * 24, (16, 10), 3, pad=(2, 1), dilation=(2, 1)),
    "conv3d_depth_taps_outside": case(3, 2, 2, 16, 32, (3, 8, 5), 3, pad=(2, 1, 0), dilation=(2, 1, 1)),
    "conv1d_5": case(1, 16, 3, 24, 48, 13, 5, pad=2),
    "pointwise_folded": case(2, 2, 2, 80, 32, (16, 16), 1),
}


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(WGRAD_CASES))
def test_tma_backward_weight_matches_reference(reg, name, dtype):
    """Split and unsplit-like shares of the patches (split 4 and 16: uneven shares, and
    programs whose share is empty on small problems), both patch shapes and dw tiles."""
    op = "grouped_conv_bwd_weight"
    fields = WGRAD_CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    insts = [i for i in _tma_instances(reg, op, dtype) if i.key.split_k in (4, 16)]
    ran, shapes = 0, set()
    for n, inst in enumerate(insts):
        shape = (inst.key.block_h, inst.key.block_w, inst.key.block_m, inst.key.block_n)
        if shape in shapes:  # one split of each patch and tile shape (the interpreter is slow)
            continue
        why = reg.family(inst).supports(inst.key, p)
        if why is not None:
            assert "fewer than split_k" in why, why
            continue
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)
        shapes.add(shape)
        ran += 1
    assert ran >= 2


def test_tma_backward_weight_refuses_more_splits_than_patches(reg):
    op = "grouped_conv_bwd_weight"
    p = reg.problem(op, **case(2, 1, 1, 16, 16, (4, 4), 3, pad=1), dtype="bf16", layout="nhwgc")
    inst = next(i for i in _tma_instances(reg, op, "bf16") if i.key.split_k == 64)
    assert "fewer than split_k=64" in reg.family(inst).supports(inst.key, p)


def test_tma_backward_weight_caps_each_splits_accumulator(reg):
    """A TMA backward-weight split takes at most MAX_TMA_SPLIT_REDUCTION pixels in its fp32
    accumulator (split 2 failed the bf16 check at 953312 per split on an H100): on 64 x 31^3
    output pixels, splits 1, 2 and 4 are refused, 16 and 64 serve."""
    from ck_plugin_grouped_conv.tma import MAX_TMA_SPLIT_REDUCTION

    op = "grouped_conv_bwd_weight"
    p = reg.problem(op, ndim=3, N=64, G=1, C=32, K=32, spatial=[31, 31, 31], filter=[3, 3, 3], stride=[1, 1, 1],
                    pad=[1, 1, 1], dilation=[1, 1, 1], dtype="bf16", layout="ndhwgc")
    why = [(i.key.split_k, reg.family(i).supports(i.key, p)) for i in _tma_instances(reg, op, "bf16")]
    assert {1, 2, 4, 16, 64} <= {split for split, _ in why}
    for split, reason in why:
        if split <= 4:
            assert "in one accumulator" in (reason or ""), (split, reason)
            assert -(-p.N * p.out_pixels // split) > MAX_TMA_SPLIT_REDUCTION
        else:
            assert reason is None, (split, reason)
    # The boundary: 2^18 pixels in one split pass, one more row of pixels does not.
    from ck_plugin_grouped_conv.family import accumulator_reason
    assert accumulator_reason(MAX_TMA_SPLIT_REDUCTION, 1, MAX_TMA_SPLIT_REDUCTION) is None
    assert "> 262144" in accumulator_reason(2 * MAX_TMA_SPLIT_REDUCTION + 2, 2, MAX_TMA_SPLIT_REDUCTION)


@pytest.mark.parametrize("op", TMA_OPS + ("grouped_conv_bwd_weight",))
@pytest.mark.parametrize("fields,dtype,layout_cl,expected", [
    (case(2, 1, 1, 16, 16, (8, 8), 3, pad=1), "bf16", False, "channels-last"),
    (case(2, 1, 2, 12, 16, (8, 8), 3, pad=1), "bf16", True, "Cg * 2 B % 16"),   # C/G = 6
    (case(2, 1, 2, 16, 12, (8, 8), 3, pad=1), "bf16", True, "Kg * 2 B % 16"),   # K/G = 6
    (case(2, 1, 1, 16, 16, (8, 8), 3, pad=1), "fp16", True, "dtype"),          # a bf16 key
])
def test_tma_refusals_name_the_reason(reg, op, fields, dtype, layout_cl, expected):
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], layout_cl))
    inst = _tma_instances(reg, op, "bf16")[0]
    why = reg.family(inst).supports(inst.key, p)
    assert why is not None and expected in why, why


# Strides above 1: backward-data takes none; forward and backward-weight read the input's row
# phases, which need H, W divisible by the strides, C/G a multiple of the channel box (64 for
# these bf16 keys: forward block_k, backward-weight block_n) and one group per program.
STRIDED_REFUSALS = [
    ("grouped_conv_bwd_data", case(2, 1, 1, 64, 64, (8, 8), 3, stride=2, pad=1), "need stride 1"),
    ("grouped_conv_fwd", case(2, 1, 1, 64, 64, (8, 8), 3, pad=1), "serve strides above 1; their twins"),
    ("grouped_conv_fwd", case(2, 1, 1, 64, 64, (9, 8), 3, stride=2, pad=1), "input sizes divisible by it (H=9, W=8"),
    ("grouped_conv_bwd_weight", case(1, 4, 1, 64, 64, 33, 3, stride=2, pad=1), "input sizes divisible by it (H=1, W=33"),
    ("grouped_conv_fwd", case(2, 1, 2, 96, 64, (8, 8), 3, stride=2, pad=1), "C/G=48 a multiple of the channel box 64"),
    ("grouped_conv_bwd_weight", case(2, 1, 1, 32, 64, (8, 8), 3, stride=(1, 2), pad=1), "C/G=32 a multiple of the channel box 64"),
]


@pytest.mark.parametrize("op,fields,expected", STRIDED_REFUSALS)
def test_tma_strided_refusals_name_the_reason(reg, op, fields, expected):
    p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    insts = _tma_instances(reg, op, "bf16", phases=op == "grouped_conv_fwd")
    inst = next(i for i in insts if (i.key.block_n if op.endswith("weight") else i.key.block_k) == 64)
    why = reg.family(inst).supports(inst.key, p)
    assert why is not None and expected in why, why


def test_tma_forward_stride_1_kernels_refuse_strides(reg):
    """Forward: the kernels without ``phases`` take stride 1 only and name their `_ph` twins;
    the twins exist for every unsplit one-group configuration."""
    p = reg.problem("grouped_conv_fwd", **case(2, 1, 1, 64, 64, (8, 8), 3, stride=2, pad=1), dtype="bf16", layout="nhwgc")
    plain = [i for i in _tma_instances(reg, "grouped_conv_fwd", "bf16") if i.key.split_k == 1]
    assert all("one-group `_ph` kernels serve strides above 1" in reg.family(i).supports(i.key, p) for i in plain)
    twins = {i.name for i in _tma_instances(reg, "grouped_conv_fwd", "bf16", phases=True)}
    assert twins == {i.name + "_ph" for i in plain}


def test_tma_merged_groups_refuse_strides(reg):
    p = reg.problem("grouped_conv_fwd", **case(2, 1, 8, 32, 32, (8, 8), 3, stride=2, pad=1), dtype="bf16", layout="nhwgc")
    inst = next(i for i in _tma_instances(reg, "grouped_conv_fwd", "bf16", merged=True))
    assert "need stride 1" in reg.family(inst).supports(inst.key, p)


# Strides above 1 through the row-phase view (forward and backward-weight): every dtype, 3x3 and
# 1x1, dilation with padding beyond a phase's first row, groups (phase (0, 0) only, and every
# phase), a 3-D stride per dimension, a depth stride alone, 1-D.
STRIDED_CASES = {
    "dense_s2": case(2, 2, 1, 64, 32, (8, 10), 3, stride=2, pad=1),
    "pointwise_s2": case(2, 2, 1, 64, 48, (8, 6), 1, stride=2),
    "groups_s2_dilated": case(2, 1, 2, 128, 32, (12, 8), 3, stride=2, pad=2, dilation=2),
    "conv1d_s2": case(1, 8, 1, 64, 32, 64, 5, stride=2, pad=2),
    "conv3d_s232": case(3, 1, 1, 64, 16, (4, 6, 6), 3, stride=(2, 3, 2), pad=1),
    # Groups whose taps read phases other than (0, 0): the column phase times C, not C/G.
    "groups_s2_phases": case(2, 4, 2, 128, 32, (8, 8), 3, stride=2, pad=1),
    # A depth stride only: the group descriptor of stride 1, any C/G (40 with a 64-channel box).
    "conv3d_depth_stride_cg40": case(3, 2, 2, 80, 32, (6, 5, 6), 3, stride=(2, 1, 1), pad=1),
}


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(STRIDED_CASES))
@pytest.mark.parametrize("op", ("grouped_conv_fwd", "grouped_conv_bwd_weight"))
def test_tma_strided_matches_reference(reg, op, name, dtype):
    """Two supporting instances per case (the interpreter is slow); the TMA box of each tap
    reads the tap's row phase, zero-filled outside it."""
    fields = STRIDED_CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    insts = [i for i in _tma_instances(reg, op, dtype, phases=op == "grouped_conv_fwd") if reg.family(i).supports(i.key, p) is None]
    assert insts, f"no TMA instance serves {name}"
    for n, inst in enumerate(insts[:2]):
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=40 + n)


def test_tma_strided_source_descriptor(reg):
    """A height / width stride above 1: x viewed as its row phases [N·D, H / 2, W / 2, 2, 2·C]
    with strides [row, 2·h, 2·w, h, 1]; the 1×1 strided filter is not folded into one row."""
    import torch

    p = reg.problem("grouped_conv_fwd", **case(2, 2, 1, 64, 32, (8, 6), 1, stride=2), dtype="fp16", layout="nhwgc")
    t = {n: torch.zeros(1, dtype=torch.float16) for n in ("x", "w", "y")}
    inst = _tma_instances(reg, "grouped_conv_fwd", "fp16", phases=True)[0]
    fam = reg.family(inst)
    d = dict(zip(fam.descriptor_blocks(inst.key), fam.host_descriptors(inst.key, p, t)))
    assert (d["src"].shape, d["src"].strides) == ([2, 4, 3, 2, 128], [8 * 6 * 64, 2 * 6 * 64, 2 * 64, 6 * 64, 1])
    assert d["dst"].shape == [2, 4, 3, 1, 32]


def test_tma_misaligned_pointers_are_refused(reg):
    fields = case(2, 1, 1, 16, 16, (8, 8), 3, pad=1)
    p = reg.problem("grouped_conv_fwd", **fields, dtype="bf16", layout="nhwgc", ptr_align=2)
    inst = _tma_instances(reg, "grouped_conv_fwd", "bf16")[0]
    assert "16-byte aligned" in reg.family(inst).supports(inst.key, p)


# Merged groups: few channels per group (C/G, K/G), several groups per program.
MERGED_CASES = {
    "cg4": case(2, 2, 8, 32, 32, (6, 5), 3, pad=1),                                   # gpb 2, 4, 8
    "cg8_kg16": case(2, 1, 4, 32, 64, (5, 7), 3, pad=(2, 1), dilation=(2, 1)),        # K/G != C/G
    "cg4_3d_depth_taps_outside": case(3, 1, 8, 32, 32, (3, 4, 5), 3, pad=(2, 1, 0), dilation=(2, 1, 1)),
    "cg8_1d": case(1, 2, 4, 32, 32, 19, 5, pad=2),
    "cg16_odd_patches": case(2, 1, 2, 32, 32, (17, 18), 3, pad=1),                  # 16x16 patches cut off
}


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(MERGED_CASES))
@pytest.mark.parametrize("op", TMA_OPS)
def test_tma_merged_groups_match_reference(reg, op, name, dtype):
    """Every merged-group instance of the default set that serves the case (block-diagonal filter
    tiles gathered with pointers, the groups' channels one TMA box, partial tiles zero-filled
    and clipped)."""
    fields = MERGED_CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    ran = 0
    for n, inst in enumerate(i for i in _tma_instances(reg, op, dtype, merged=True) if i.key.num_warps == 4):
        why = reg.family(inst).supports(inst.key, p)
        if why is not None:
            assert "block_k" in why or "block_n" in why or "multiple of groups_per_block" in why, why
            continue
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=30 + n)
        ran += 1
    assert ran >= 1


@pytest.mark.parametrize("op", TMA_OPS)
@pytest.mark.parametrize("fields,dtype,expected", [
    (case(2, 1, 6, 24, 24, (8, 8), 3, pad=1), "bf16", "G=6 is not a multiple of groups_per_block=4"),
    (case(2, 1, 8, 128, 128, (8, 8), 3, pad=1), "bf16", "channels per group"),          # 4 x 16 > 32
    (case(2, 1, 8, 8, 8, (8, 8), 3, pad=1), "bf16", "groups_per_block * Cg * 2 B % 16"),  # 4 groups x 1 channel
])
def test_tma_merged_groups_refusals(reg, op, fields, dtype, expected):
    p = reg.problem(op, **fields, dtype=dtype, layout="nhwgc")
    inst = next(i for i in _tma_instances(reg, op, dtype, merged=True) if i.key.groups_per_block == 4)
    why = reg.family(inst).supports(inst.key, p)
    assert why is not None and expected in why, why


def test_tma_merged_groups_keys(reg):
    """Merged groups take one reduction step per tap: no split; the name says ``_gpb<n>``; the
    grid's last dimension counts blocks of groups."""
    from ckcore.arch import load
    from ck_plugin_grouped_conv.tma import ConvTmaFwd, ConvTmaFwdKey

    key = ConvTmaFwdKey(dtype="bf16", block_h=16, block_w=16, block_n=32, block_k=32, groups_per_block=4, split_k=2)
    assert any("too few to split" in r for r in ConvTmaFwd().check(key, load("sm_90")))
    inst = next(i for i in _tma_instances(reg, "grouped_conv_fwd", "bf16", merged=True) if i.key.groups_per_block == 8)
    assert inst.name.endswith("_gpb8")
    p = reg.problem("grouped_conv_fwd", **MERGED_CASES["cg4"], dtype="bf16", layout="nhwgc")
    assert reg.family(inst).grid(inst.key, p) == (2, 1, 1)  # 2 images x one 16x16 patch, 1 column tile, 8 / 8 groups


def test_tma_keys_validate_and_check_the_arch(reg):
    from ckcore.arch import load
    from ckcore.errors import InvalidKernelKey
    from ck_plugin_grouped_conv.tma import ConvTmaFwd, ConvTmaFwdKey

    with pytest.raises(InvalidKernelKey, match="block_w"):
        ConvTmaFwdKey(dtype="bf16", block_h=1, block_w=96, block_n=64, block_k=64)
    key = ConvTmaFwdKey(dtype="fp32", block_h=1, block_w=128, block_n=128, block_k=64)
    reasons = ConvTmaFwd().check(key, load("sm_90"))
    assert any("128 B" in r for r in reasons), reasons
    assert any("no TMA" in r for r in ConvTmaFwd().check(key, load("sm_80")))


def test_every_tma_kernel_takes_host_descriptors_in_its_signature_order():
    """Every TMA instance of the full sets renders a kernel whose parameters are the family's
    signature, names no in-kernel descriptor, and takes the host descriptors that
    ``descriptor_blocks`` describes (one box per descriptor dimension)."""
    from ckcore import Registry
    from ckcore.render import render

    reg = Registry("sm_90")
    for op in (*TMA_OPS, "grouped_conv_bwd_weight"):
        for inst in reg.declare(op, "full"):
            if not inst.family.startswith("conv_tma"):
                continue
            fam = reg.family(inst)
            src = render(fam, inst.key, reg.arch)
            params = kernel_parameters(src, inst.name)
            sig = fam.signature(inst.key)
            assert params == list(sig), inst.name
            assert "make_tensor_descriptor" not in src, inst.name
            blocks = fam.descriptor_blocks(inst.key)
            for name, (_, block) in blocks.items():
                assert sig[name] == f"tensordesc<{inst.key.dtype.triton}[{', '.join(map(str, block))}]>"
            assert len(blocks) == (2 if op == "grouped_conv_bwd_weight" else 3 - (inst.key.groups_per_block > 1))


def test_tma_host_descriptors_describe_the_problem(reg):
    """The descriptors a launch passes: forward activations [N·D, H, W, G, C/G] with the
    channels-last row strides, the filter [G, K/G, taps, C/G], the output [N·Do, Ho, Wo, G, K/G];
    merged groups view G / gpb groups of gpb · C/G channels and take no filter descriptor."""
    import torch

    p = reg.problem("grouped_conv_fwd", **case(2, 2, 4, 64, 32, (6, 5), 3, pad=1), dtype="fp16", layout=layout(2, True))
    t = {n: torch.zeros(1, dtype=torch.float16) for n in ("x", "w", "y")}
    one = next(i for i in _tma_instances(reg, "grouped_conv_fwd", "fp16") if i.key.split_k == 1)
    fam = reg.family(one)
    d = dict(zip(fam.descriptor_blocks(one.key), fam.host_descriptors(one.key, p, t)))
    assert (d["src"].shape, d["src"].strides) == ([2, 6, 5, 4, 16], [5 * 6 * 64, 5 * 64, 64, 16, 1])
    assert (d["filt"].shape, d["filt"].strides) == ([4, 8, 9, 16], [8 * 9 * 16, 9 * 16, 16, 1])
    assert (d["dst"].shape, d["dst"].strides) == ([2, 6, 5, 4, 8], [5 * 6 * 32, 5 * 32, 32, 8, 1])
    assert d["src"].base is t["x"] and d["filt"].base is t["w"] and d["dst"].base is t["y"]
    merged = next(i for i in _tma_instances(reg, "grouped_conv_fwd", "fp16", merged=True))
    gpb = merged.key.groups_per_block
    d = dict(zip(fam.descriptor_blocks(merged.key), fam.host_descriptors(merged.key, p, t)))
    assert set(d) == {"src", "dst"} and d["src"].shape == [2, 6, 5, 4 // gpb, gpb * 16]
