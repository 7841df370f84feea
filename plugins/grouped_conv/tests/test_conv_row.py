"""The filter-row families (``conv_row_fwd``, ``conv_row_bwd_weight``) in Triton's interpreter
against the NumPy float64 reference: first layers in 1D/2D/3D, every dtype, stride, padding on
both sides of a row, dilation along d and h, one and several filter rows per step (the last step
partly beyond the filter), splits, and the problems they must refuse."""

import attrs
import pytest

from ckcore.testing import assert_matches_reference

from cases import case, layout

# (fields): channels-last first layers; X·C <= 32 so every window tile serves them.
CASES = {
    "resnet_stem": case(2, 2, 1, 3, 16, (21, 19), 7, stride=2, pad=3),
    "stem_3d_dilated": case(3, 1, 1, 2, 16, (5, 9, 8), (3, 5, 5), stride=(1, 2, 1), pad=(1, 2, 0), dilation=(2, 2, 1)),
    "audio_1d": case(1, 3, 1, 1, 32, 50, 10, stride=5),
    "patch_embed": case(2, 1, 1, 3, 32, (16, 16), 4, stride=4),
}


def _row(reg, op, dtype, rows=None, split=None):
    return [i for i in sorted(reg.of_op(op), key=lambda i: i.name) if i.family.startswith("conv_row")
            and i.key.dtype.value == dtype and (rows is None or i.key.rows_per_step == rows)
            and (split is None or i.key.split_k == split)]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_row_forward_matches_reference(reg, name, dtype):
    """One instance per number of filter rows per step (1, 2, 4, 8; fp32's wider windows leave
    out the tiles beyond shared memory)."""
    op = "grouped_conv_fwd"
    fields = CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    ran = set()
    for n, inst in enumerate(_row(reg, op, dtype)):
        if inst.key.rows_per_step in ran or reg.family(inst).supports(inst.key, p) is not None:
            continue
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)
        ran.add(inst.key.rows_per_step)
    assert ran == {1, 2, 4, 8} if dtype != "fp32" else {1, 2} <= ran


# Backward-weight: at least 4 blocks of 64 output pixels, for split 4.
WGRAD_CASES = {
    "resnet_stem": CASES["resnet_stem"],
    "stem_3d_dilated": case(3, 1, 1, 2, 16, (5, 18, 16), (3, 5, 5), stride=(1, 2, 1), pad=(1, 2, 0), dilation=(2, 2, 1)),
    "audio_1d": case(1, 3, 1, 1, 32, 500, 10, stride=5),
}


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(WGRAD_CASES))
def test_row_backward_weight_matches_reference(reg, name, dtype):
    """Unsplit and split 4 ways (uneven shares on the 1-D case) with one filter row per program
    (in pairs on the 3-D case, whose W·C and str_w·C are even)."""
    op = "grouped_conv_bwd_weight"
    fields = WGRAD_CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    insts = [i for i in _row(reg, op, dtype, rows=1) if i.key.split_k in (1, 4) and i.key.block_n == 32]
    assert len(insts) == 2
    for n, inst in enumerate(insts):
        assert reg.family(inst).supports(inst.key, p) is None, (inst.name, reg.family(inst).supports(inst.key, p))
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=n)


# Backward-weight with several filter rows per program (split 16: at least 16 blocks of 64 pixels),
# (fields, whether the pairs twin runs): even window starts (pad_w·C = 0), odd ones (pad_w·C = 3),
# and mixed parity (W·C odd: element loads).
ROWS_CASES = {
    "pairs_even_starts": (case(3, 1, 1, 2, 16, (4, 36, 32), (3, 5, 5), stride=1, pad=(1, 2, 0), dilation=(2, 1, 1)), True),
    "pairs_odd_starts": (case(2, 1, 1, 3, 16, (40, 110), (3, 5), stride=(1, 2), pad=1), True),
    "element_loads": (case(2, 1, 1, 3, 16, (40, 109), (3, 5), stride=(1, 2), pad=1), False),
}


@pytest.mark.parametrize("name", sorted(ROWS_CASES))
@pytest.mark.parametrize("rows", [1, 2, 4, 8])
def test_row_backward_weight_rows_per_program(reg, rows, name):
    """1, 2, 4 and 8 filter rows per program from one dy tile, split 16 ways, loaded in pairs
    (window starts even, or odd: the element below the start is loaded and zeroed) or element by
    element; with 15 or 3 filter rows the last program's rows run past the filter."""
    op = "grouped_conv_bwd_weight"
    fields, pairs = ROWS_CASES[name]
    p = reg.problem(op, **fields, dtype="bf16", layout=layout(fields["ndim"], True))
    inst = next(i for i in _row(reg, op, "bf16", rows=rows, split=16) if reg.family(i).supports(i.key, p) is None)
    assert reg.specialized(inst, p).key.pairs == pairs
    assert_matches_reference(reg, op, p, instance=inst.name, interpret=True, seed=rows)


@pytest.mark.parametrize("op", ["grouped_conv_fwd", "grouped_conv_bwd_weight"])
@pytest.mark.parametrize("fields,layout_name,expected", [
    (case(2, 2, 1, 3, 16, (9, 9), 3), "ngchw", "filter-row kernels are channels-last, layout ngchw"),
    (case(2, 2, 3, 6, 48, (9, 9), 3), "nhwgc", "serve one group (G=3)"),
    (case(2, 2, 1, 3, 16, (9, 9), 3, dilation=(1, 2)), "nhwgc", "need dilation 1 along w (dilation [1, 2])"),
    (case(2, 2, 1, 3, 24, (9, 9), 3), "nhwgc", "needs K % 16 == 0 (K=24)"),
    (case(2, 2, 1, 64, 64, (9, 9), 3), "nhwgc", "a filter row's X*C = 192 elements"),
])
def test_row_refusals_name_the_reason(reg, op, fields, layout_name, expected):
    p = reg.problem(op, **fields, dtype="bf16", layout=layout_name)
    insts = _row(reg, op, "bf16")
    assert insts
    for inst in insts:
        assert expected in reg.family(inst).supports(inst.key, p), inst.name


def test_row_keys_validate_and_check_the_arch(reg):
    from ck_plugin_grouped_conv.row_window import ConvRowBwdWeightKey, ConvRowFwdKey
    from ckcore.errors import InvalidKernelKey

    fam = reg.catalog.families["conv_row_fwd"]
    assert "only backward-weight splits" in " ".join(fam.check(ConvRowFwdKey(dtype="bf16", block_m=64, block_n=64,
                                                                             block_k=32, split_k=2), reg.arch))
    assert "windows of 4 < 8 elements" in " ".join(fam.check(ConvRowFwdKey(dtype="bf16", block_m=64, block_n=64,
                                                                            block_k=32, rows_per_step=8), reg.arch))
    with pytest.raises(InvalidKernelKey, match="rows_per_step"):
        ConvRowBwdWeightKey(dtype="bf16", block_m=64, block_n=64, block_k=64, rows_per_step=3)
    name = ConvRowBwdWeightKey(dtype="bf16", block_m=64, block_n=64, block_k=64, split_k=16, rows_per_step=2).name
    assert name == "conv_row_bwd_weight_bf16_64x64x64_w4_s3_k16_r2"


def test_row_pairs_are_derived_where_window_starts_share_a_parity(reg):
    """A backward-weight filter-row instance runs as its pairs twin (``_p2``) where str_w·C and
    W·C are even (ResNet's stem: odd starts, pad_w·C = 9); not where they are odd, nor where the
    instance does not serve the problem; a pairs key refuses a problem of mixed parity or a
    window without room for the element below an odd start, naming it. Forward keys refuse
    pairs."""
    op = "grouped_conv_bwd_weight"
    from ck_plugin_grouped_conv.row_window import ConvRowFwdKey

    fwd = reg.catalog.families["conv_row_fwd"]
    assert "backward-weight only" in " ".join(fwd.check(ConvRowFwdKey(dtype="bf16", block_m=128, block_n=64,
                                                                     block_k=32, pairs=True), reg.arch))
    stem = reg.problem(op, **case(2, 2, 1, 3, 16, (21, 20), 7, stride=2, pad=3), dtype="bf16", layout="nhwgc")
    audio = reg.problem(op, **CASES["audio_1d"], dtype="bf16", layout="nwgc")
    odd_w = reg.problem(op, **case(2, 2, 1, 3, 16, (21, 21), 7, stride=2, pad=3), dtype="bf16", layout="nhwgc")
    grouped = reg.problem(op, **case(2, 2, 2, 6, 32, (21, 20), 7, stride=2, pad=3), dtype="bf16", layout="nhwgc")
    # X·C = 16 fills a 16-element window: no room for the element below an odd start (pad_w·C = 1)
    full = reg.problem(op, **case(1, 3, 1, 1, 16, 4000, 16, stride=2, pad=1), dtype="bf16", layout="nwgc")
    twins = no_room = 0
    for inst in _row(reg, op, "bf16"):
        fam = reg.family(inst)
        assert reg.specialized(inst, grouped) is inst
        if fam.supports(inst.key, full) is None and fam._window(inst.key) == 16:
            no_room += 1
            assert reg.specialized(inst, full) is inst
            assert "X*C = 16 plus one element below an odd start > 16-element windows" in \
                fam.supports(attrs.evolve(inst.key, pairs=True), full)
        if fam.supports(inst.key, stem) is None:
            twins += 1
            twin = reg.specialized(inst, stem)
            assert twin.name == inst.name + "_p2" and twin.key.pairs
            assert "pairs kernel: window starts of mixed parity (str_w*C=6, W*C=63)" in fam.supports(twin.key, odd_w)
        if fam.supports(inst.key, audio) is None:
            assert reg.specialized(inst, audio) is inst
        if fam.supports(inst.key, odd_w) is None:
            assert reg.specialized(inst, odd_w) is inst
    assert twins >= 2 and no_room >= 2
