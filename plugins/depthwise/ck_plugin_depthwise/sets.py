"""Named kernel sets of the depthwise families: ``default`` (a few pixel × channel tiles per
dtype and layout, channels-last tiles wide in channels, contiguous tiles wide in pixels, and
generic fallbacks; backward-data with a unit-stride twin of each, channels-last forward with 3
taps per loop step, spatial tiles for channels-last forward and unit-stride backward-data,
backward-weight with 3 or 7 taps per pass, and spatial patches; sliding windows for
channels-last forward and unit-stride multiplier-one backward-data; multiplier-two (K/G = 2)
windows for the three directions and tap-by-tap backward-data kernels; tensor-core grouped
windows for few channels per group, all three directions) and ``full`` (a sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

from .keys import DwWindowKey

__all__ = ["default_set", "full_set"]

# (block_p, block_c, num_warps, num_stages)
_CL = [(64, 64, 4, 1), (128, 32, 4, 1), (32, 128, 4, 1), (128, 64, 8, 1)]
_CF = [(128, 8, 4, 1), (256, 4, 4, 1)]
# Backward-weight, channels-last: (block_p, block_c, num_warps) × taps per pass × splits of the
# N·output-pixel reduction. On the suite's 20 depthwise rows (H200, the round-2 and round-3 sweeps
# benchmarks/results/dw_sweep_bwd_weight_passes_r{2,3}_h200.jsonl.gz, 796 instances) these tiles ×
# 3 and 7 taps per pass × splits 4/16/64 reach 0.994 of the best swept instance (geomean; minimum
# 0.948). One tap per pass is kept on the widest tile (small problems), a 256-way split on the first
# (few channels, many pixels). num_stages 2 timed the same as 1 on every row.
_BW_CL = [(64, 32, 4), (128, 32, 4), (32, 32, 4), (32, 64, 4)]
_BW_CF = [(128, 8, 4), (256, 4, 4)]
_BW_TAPS = (3, 7)
_BW_SPLITS = (4, 16, 64)
_BW_WIDE_SPLIT = 256
# Forward taps per loop step in channels-last tiles: on the suite's 21 depthwise rows (H200,
# benchmarks/results/dw_sweep_fwd_h200.jsonl.gz) 3 taps per step reached 0.996 of the best swept
# instance (geomean; minimum 0.97), one tap 0.90 (minimum 0.72), 9 taps 0.81 (minimum 0.31).
# Backward-data gained nothing from it (one tap: 0.997; 3 taps: 0.87).
_FWD_UNROLL = 3
# Forward spatial tiles, channels-last: (block_h, block_w, block_c, num_warps, unroll). From a sweep
# of 36 bf16 tiles on the suite's 17 bf16 depthwise rows (H200, benchmarks/run_dw_tile_sweep.sh,
# benchmarks/results/dw_sweep_fwd_tiles_h200.jsonl.gz): these six reach 0.983 of the best swept tile
# (geomean; minimum 0.92); the best tile ran 1.18x faster than the best of the four default
# consecutive-pixel tiles (geomean; 1.37-1.46x on ConvNeXt's 7x7 rows, 0.89x on the 1-D 31-tap row).
_TILES = [(4, 8, 64, 4, 1), (2, 64, 32, 4, 1), (8, 16, 64, 4, 1), (4, 32, 32, 4, 3), (8, 8, 64, 4, 1), (4, 32, 64, 4, 1)]


# Backward-weight spatial patches, channels-last, multiplier one: (block_h, block_p, block_c,
# num_warps) × (taps per pass, split). Their tap loop's SASS issues 5.2-5.9 instructions per fp32
# FMA where the consecutive-pixel twins of the same tiles issue 5.7-6.9 (bounds as one unsigned
# compare per dimension, no per-pixel division); chosen without a sweep: the dataset measures
# every one and the model picks.
_BW_SPATIAL = [((2, 32, 32, 4), ((3, 16), (3, 64), (7, 16), (7, 64))),
               ((4, 64, 32, 4), ((3, 4), (3, 16), (7, 4), (7, 16))),
               ((4, 128, 32, 4), ((3, 4), (3, 16)))]


def _bwd_weight_spatial(family, dtype):
    """Channels-last backward-weight spatial patches: ``a16`` multiplier one, and the first patch
    with 3 taps per pass and split 16 in ``v4``."""
    out = []
    for (bh, bp, bc, w), variants in _BW_SPATIAL:
        for taps, split in variants:
            out.append(family.key_cls(dtype=dtype, channels_last=True, block_p=bp, block_c=bc, num_warps=w,
                                      access="a16", multiplier_one=True, unroll=taps, split=split, block_h=bh))
    bh, bp, bc, w = _BW_SPATIAL[0][0]
    out.append(family.key_cls(dtype=dtype, channels_last=True, block_p=bp, block_c=bc, num_warps=w, access="v4",
                              multiplier_one=True, unroll=3, split=16, block_h=bh))
    return out


# Generic (64-bit) multiplier-one twins are left out of the default set in backward-weight and
# backward-data (the full set keeps them): on the
# dataset problems both twins serve (H100 rows) they ran 1.57x (backward-weight, 59 pairs) and
# 1.34x (backward-data, 53 pairs) the general-multiplier twins' time, and dropping them changed no
# problem's best (44 and 43 problems; twenty-third session). Forward keeps them (0.92x).
_GENERIC_M1_SLOWER = ("bwd_weight", "bwd_data")


def _bwd_weight_keys(family, dtype, channels_last):
    """Default backward-weight instances: every tile × taps per pass × split with multiplier one
    and aligned access, and unsplit with 3 taps per pass (problems of few pixel blocks); the
    first tile with 3 taps per pass in the other access modes: multiplier one in ``v4`` and
    ``i32`` (not ``generic``: :data:`_GENERIC_M1_SLOWER`), the general multiplier in ``a16``,
    ``i32`` and ``generic``."""
    tiles = _BW_CL if channels_last else _BW_CF
    out = []
    for (bp, bc, w), m1, access in itertools.product(tiles, (True, False), ("a16", "v4", "i32", "generic")):
        first = (bp, bc, w) == tiles[0]
        if access == "v4" and not (m1 and channels_last):
            continue  # 4-element channel vectors: channels-last, multiplier one
        if access == "generic" and m1 and family.direction in _GENERIC_M1_SLOWER:
            continue  # the general-multiplier twin serves
        if not (m1 and access == "a16"):
            if not first:
                continue
            variants = [(3, split) for split in (1,) + _BW_SPLITS[1:]]
        else:
            variants = list(itertools.product(_BW_TAPS, _BW_SPLITS)) + [(3, 1)]
            variants += [(1, split) for split in _BW_SPLITS] if (bp, bc, w) == tiles[1] else []
            variants += [(3, _BW_WIDE_SPLIT)] if first and channels_last else []
        out += [family.key_cls(dtype=dtype, channels_last=channels_last, block_p=bp, block_c=bc, num_warps=w,
                               access=access, multiplier_one=m1, unroll=taps, split=split) for taps, split in variants]
    return out + (_bwd_weight_spatial(family, dtype) if channels_last else [])


def _keys(family, dtype, channels_last, full):
    cls = family.key_cls
    if family.direction == "bwd_weight" and not full:
        return _bwd_weight_keys(family, dtype, channels_last)
    out = []
    tiles = _CL if channels_last else _CF
    if full:
        tiles = list(itertools.product((16, 32, 64, 128, 256), (8, 16, 32, 64, 128), (4, 8), (1, 2)))
    for (bp, bc, w, s), access in itertools.product(tiles, ("a16", "v4", "i32", "generic")):
        if access != "a16" and (bp, bc, w, s) != tiles[0]:
            continue  # one unaligned tile of each kind
        if access == "v4" and (full or not channels_last):
            continue  # 4-element channel vectors (e.g. 108 channels): channels-last, default set
        variants = [{}]
        if family.direction == "bwd_weight":
            variants = [{"split": split, "unroll": taps} for split, taps in itertools.product((16, 64), (1, 3, 7))]
        elif family.direction == "bwd_data":
            variants = [{"unit_stride": False}, {"unit_stride": True}]
        elif channels_last:
            variants = [{"unroll": _FWD_UNROLL}]
        for extra, m1 in itertools.product(variants, (True, False)):
            if access == "v4" and not m1:
                continue
            if access == "generic" and m1 and family.direction in _GENERIC_M1_SLOWER and not full:
                continue  # the general-multiplier twin serves
            out.append(cls(dtype=dtype, channels_last=channels_last, block_p=bp, block_c=bc, num_warps=w,
                           num_stages=s, access=access, multiplier_one=m1, **extra))
    if family.direction == "bwd_data" and channels_last:
        # Multiplier two (K/G = 2), for what the unit-stride, dilation-1 windows do not serve:
        # the first and third tiles in a16, the first in i32, with and without unit stride.
        out += [cls(dtype=dtype, channels_last=True, block_p=bp, block_c=bc, num_warps=w, num_stages=s, access=access,
                    multiplier_two=True, unit_stride=unit)
                for (bp, bc, w, s), access in ((tiles[0], "a16"), (tiles[2], "a16"), (tiles[0], "i32"))
                for unit in (False, True)]
    return out


def _spatial_tiles(family, dtype, full):
    """Channels-last spatial tiles (forward, and unit-stride multiplier-one backward-data, the
    forward of dy with the filter flipped; same tiles): every tile with multiplier one and
    ``a16``; the first also ``i32`` (forward: and general-multiplier), the first two ``v4``.
    Full: every tile in every access mode and multiplier it takes."""
    fwd = family.direction == "fwd"
    extra = {} if fwd else {"unit_stride": True}
    out = []
    for i, (bh, bw, bc, w, unroll) in enumerate(_TILES):
        for access, m1 in itertools.product(("a16", "v4", "i32"), (True, False)):
            if not (m1 or fwd) or (access == "v4" and not m1):
                continue
            if full or (m1 and access == "a16") or (i == 0 and access != "v4") or (i < 2 and access == "v4"):
                out.append(family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w,
                                          access=access, multiplier_one=m1, unroll=unroll, block_h=bh, **extra))
    return out


# Sliding-window tiles, channels-last: (block_h, block_w, block_c, num_warps), each with 3, 5 and 7
# column taps per step (and, forward, column stride 1 and 2). Every [block_h, block_c] tile is 8
# elements (one 16-byte vector of a 16-bit dtype) per thread: Triton lays such loads out 8
# contiguous channels per thread, so a smaller tile is held twice (ptxas: 168 registers for 8x64
# rows x channels with 4 warps, against 128 with 2). From a sweep of 256 bf16 forward instances on
# the suite's 18 bf16 depthwise rows (H200, benchmarks/run_dw_window_sweep.sh,
# benchmarks/results/dw_window_sweep_h200.jsonl.gz; 17 rows, x3d.dw108's 108 channels take no a16
# instance): the best swept instance of 15 rows had 2 warps (the best with 4 warps: 0.965 of the
# best, with 8: 0.852, geomean), num_stages 3 and unrolling the filter-row loop changed the best
# by under 0.2%; the first two tiles here were best on 11 rows.
_WINDOW = [(8, 4, 64, 2), (16, 8, 32, 2), (8, 8, 64, 2), (4, 8, 128, 2), (16, 8, 64, 4)]
_WINDOW_STEPS = (3, 5, 7)
# Register caps (Triton's maxnreg) on 16-bit tiles, unit column stride: uncapped, the 8x8x64 tile
# holds up to 218 registers (7 taps; ptxas), so 4 programs of 2 warps fit an SM; capped at 168
# (a 136-byte stack), 6 do. A sweep of the 38 default bf16 forward window instances, each also
# capped at 168 and 128, on the suite's 18 bf16 depthwise rows (H200, 2026-11-26,
# benchmarks/run_gemm_suite_data.sh; benchmarks/results/dw_window_mr_sweep_fwd_h200.jsonl.gz): the
# uncapped default set's best came to 1/1.039 of the swept best (geomean), the 8x8x64 tile's
# three twins (3, 5, 7 taps) to 1/1.007, with the 8x4x64 tile's too to 1/1.004 (the capped
# instances alone: 1/1.016). Measured whole on the 28 forward and 32 backward-data problems they
# serve (same day), the 8x4x64 twins added 0.2% and 0.8% to the best, but the model took them on
# rows where their uncapped twins were 3-5% faster (suite picks priced with those measurements:
# 0.968 / 0.977 of the best with them, 0.974 / 0.982 without), so only the 8x8x64 tile is capped.
_WINDOW_CAPPED = {(8, 8, 64, 2): 168}
# Full: the 2- and 4-warp tiles of 8 elements per thread (the sweep's 8-warp tiles lost).
_WINDOW_FULL = [(bh, bw, bc, w) for bh, bw, bc, w in itertools.product((2, 4, 8, 16, 32), (4, 8), (32, 64, 128), (2, 4))
                if bh * bc == 8 * 32 * w]


# Multiplier-two windows (K/G = 2): (block_h, block_w, block_c, num_warps, taps per step, column stride,
# access[, split]). A sweep of 136 forward, 68 backward-data and 232 backward-weight bf16 ``_m2``
# windows (benchmarks/make_dw_window_sweep.py --multiplier-two) next to every default bf16
# instance, on the 14 largest K/G = 2 channels-last problems of each dataset (as bf16;
# benchmarks/suites/dw_m2_*.jsonl; four H100s of one host, twenty-fifth session,
# benchmarks/results/dw_m2_sweep_*_h100.jsonl.gz): the best ``_m2`` window ran 1.91x (forward, 13
# problems), 3.89x (backward-data, the 10 unit-stride ones) and 2.20x (backward-weight, 13) faster
# than the best instance before (geomean; 7x7x7 3-D backward-data 4447 -> 357 us). A greedy choice
# (python benchmarks/dw_m2_sweep_summary.py) with the instances before reached 0.980, 0.978 and 0.981
# of the best measured with these.
_WINDOW_M2 = {
    "fwd": [(4, 8, 128, 2, 3, 1, "i32"), (32, 8, 32, 4, 7, 1, "a16"), (4, 4, 128, 2, 3, 2, "i32"),
            (4, 8, 128, 2, 3, 1, "a16"), (32, 4, 32, 4, 3, 1, "i32"), (4, 4, 128, 2, 7, 2, "i32"),
            (4, 8, 128, 2, 7, 1, "i32")],
    "bwd_data": [(4, 8, 128, 2, 3, 1, "i32"), (8, 4, 64, 2, 3, 1, "a16"), (4, 8, 128, 2, 7, 1, "i32"),
                 (16, 4, 32, 2, 3, 1, "i32"), (8, 8, 64, 2, 7, 1, "a16")],
    "bwd_weight": [(16, 4, 64, 4, 7, 1, "a16", 16), (16, 4, 32, 2, 7, 1, "i32", 16), (16, 4, 64, 4, 7, 2, "i32", 16),
                   (32, 8, 32, 4, 3, 1, "a16", 16), (8, 8, 128, 4, 3, 1, "a16", 16), (16, 4, 32, 2, 3, 1, "i32", 16),
                   (8, 4, 64, 2, 7, 1, "i32", 4), (32, 8, 32, 4, 3, 1, "i32", 16)],
}


def _window_m2_keys(family, dtype):
    """The multiplier-two windows of :data:`_WINDOW_M2` for ``family``'s direction (both sets)."""
    return [family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w, access=access,
                           multiplier_two=True, unroll=steps, block_h=bh, block_w=bw, stride_w=stride, dilation_w=1,
                           **({"split": rest[0]} if rest else {}))
            for bh, bw, bc, w, steps, stride, access, *rest in _WINDOW_M2[family.direction]]


def _window_keys(family, dtype, full):
    """Sliding-window instances: every tile × taps per step (× forward column stride 1, 2) with
    multiplier one and ``a16``; the first tile with 3 taps per step also ``v4`` and ``i32``
    (forward: also general-multiplier in ``a16`` and ``i32``, and ``i32`` only
    general-multiplier: its multiplier-one twin spills). Full: the swept tiles with dilation 1
    and 2 too (multiplier one, ``a16``), plus the default set's others. Both sets: the 16-bit
    :data:`_WINDOW_CAPPED` tiles also with their register cap (unit column stride, multiplier
    one, ``a16``)."""
    fwd = family.direction == "fwd"
    strides = (1, 2) if fwd else (1,)
    combos = [(t, "a16", True, steps, stride, dil) for t, steps, stride, dil in
              itertools.product(_WINDOW_FULL if full else _WINDOW, _WINDOW_STEPS, strides, (1, 2) if full else (1,))]
    # Forward i32 (both sets): the general-multiplier window only: its multiplier-one twin compiled to 255
    # registers with a 40-byte stack (186 and none for the general one) and ran 1.13x slower on the
    # 68 forward dataset problems both serve (H100 rows; dropping it cost their best 0.04%).
    combos += [(_WINDOW[0], access, m1, 3, stride, 1) for access, m1, stride in
               itertools.product(("a16", "v4", "i32"), (True, False), strides) if (access, m1) != ("a16", True)
               and (m1 or (fwd and access != "v4")) and not (fwd and access == "i32" and m1)]
    combos = [(*c, 0) for c in dict.fromkeys(combos)]
    if dtype.itemsize == 2:
        combos += [(t, "a16", True, steps, 1, 1, cap) for t, cap in _WINDOW_CAPPED.items() for steps in _WINDOW_STEPS]
    return [family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w, access=access,
                           multiplier_one=m1, unroll=steps, block_h=bh, block_w=bw, stride_w=stride, dilation_w=dil,
                           max_registers=cap)
            for (bh, bw, bc, w), access, m1, steps, stride, dil, cap in combos]


# Backward-weight windows: (block_h, block_w, block_c, num_warps) tiles × (taps per step, column
# stride) × splits of the rows. From a sweep of 144 bf16 instances (the tiles of
# benchmarks/make_dw_window_sweep.py × 4 or 8 columns × 3 or 7 taps × column stride 1, 2 × splits
# 4, 16, 64) on the suite's 18 bf16 depthwise rows against the tap-by-tap default instances
# (four H200s, 2026-11-26, benchmarks/run_models_ab_gpu.sh; benchmarks/results/
# dw_window_sweep_bwd_weight_h200.jsonl.gz): the tap-by-tap defaults' best came to 0.775 of the best
# measured (geomean; windows best on 14 rows); a greedy choice of (tile, taps, stride) with every
# split reached 0.905 with one, 0.985 with four, 0.998 with six and 1.000 with the eight here, all of
# 8 columns.
_WINDOW_BWD_WEIGHT = [((32, 8, 32, 4), 3, 1), ((16, 8, 32, 2), 7, 1), ((16, 8, 64, 4), 3, 1),
                      ((16, 8, 32, 2), 3, 2), ((32, 8, 32, 4), 7, 1), ((8, 8, 64, 2), 3, 2),
                      ((16, 8, 32, 2), 3, 1), ((8, 8, 64, 2), 3, 1)]
# 5 taps per step, for 5-wide filters (EfficientNet's 5x5 layers): with 3, a 5-tap filter row ran
# one step and two single taps. From a sweep of 72 bf16 5-tap instances (benchmarks/
# make_dw_window_sweep.py --op bwd_weight --steps 5 --warps 2,4) on 10 depthwise 5x5 problems (the
# dataset's 6 and EfficientNet-B0's other 5x5 layers; one H100 host, twenty-third session,
# benchmarks/results/dw5_window_t5_sweep_h100.jsonl.gz): the default set's best came to 0.911 of
# the best measured on the 8 problems a16 serves (geomean), with these three tiles 0.985
# (effb0.dw5x5_240: 54.8 -> 44.7 us).
_WINDOW_BWD_WEIGHT += [((16, 8, 32, 2), 5, 1), ((16, 8, 32, 2), 5, 2), ((8, 8, 64, 2), 5, 1)]
_WINDOW_SPLITS = (4, 16, 64)
# ``v4`` twins (channel counts divisible by 4 but not 16, e.g. X3D's 108 and 216, RegNet's 120,
# 824): without them those problems had only the tap-by-tap kernels, x3d.dw108 199 µs on an H100
# against 27 µs for x3d.dw432 (four times the channels, 1/16 of the pixels) on a window. The
# three 3-tap tiles of 32 channels above (column strides 1 and 2) and its 7-tap 16 x 8 x 32 tile.
_WINDOW_BWD_WEIGHT_V4 = [((16, 8, 32, 2), 3, 1), ((32, 8, 32, 4), 3, 1), ((16, 8, 32, 2), 3, 2),
                         ((16, 8, 32, 2), 7, 1)]


def _window_bwd_weight_keys(family, dtype):
    """Backward-weight windows: :data:`_WINDOW_BWD_WEIGHT` in ``a16`` and
    :data:`_WINDOW_BWD_WEIGHT_V4` in ``v4``, × :data:`_WINDOW_SPLITS`, multiplier one,
    channels-last (both sets)."""
    tiles = [(t, "a16") for t in _WINDOW_BWD_WEIGHT] + [(t, "v4") for t in _WINDOW_BWD_WEIGHT_V4]
    return [family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w, access=access,
                           multiplier_one=True, unroll=steps, block_h=bh, block_w=bw, stride_w=stride, dilation_w=1,
                           split=split)
            for (((bh, bw, bc, w), steps, stride), access), split in itertools.product(tiles, _WINDOW_SPLITS)]


# Tensor-core grouped windows (gw_win_fwd): (block_h, block_w, block_c, num_warps). From a sweep of
# 67 configurations (block_h 32-256 × block_w 2-8 × block_c 16-128 × 4 or 8 warps, 3 taps per
# step) on ResNeXt-50's six bf16 grouped 3x3 rows (C/G 4-32, stride 1 and 2; one H100, 2026-11-26,
# benchmarks/grouped_direct_probe.py --dot; benchmarks/results/grouped_direct_probe_dot_h100.jsonl.gz):
# a greedy choice reached 0.883 of each row's best with one, 0.963 with three and 1.000 with these five.
_GROUP_WINDOW = [(64, 2, 32, 4), (128, 2, 16, 4), (128, 4, 32, 4), (32, 2, 16, 4), (64, 4, 32, 4)]


def _group_window_keys(family, dtype, full):
    """Tensor-core grouped windows: :data:`_GROUP_WINDOW` × column stride 1 and 2 (backward-data:
    1), 3 taps per step, ``a16``; the first tile also ``i32``. Full: block_c 64 and 8 warps too
    (block_c 128 spilled: ptxas put 64x128 and 128x128 tiles at 255 registers with 468-512 B of
    spill stores, the 3 filter tiles of a step not counted with the accumulators).
    Backward-data takes the forward tiles: on ResNeXt-50's stride-1 rows they ran 0.90-1.19x cuDNN
    (one H100, 2026-11-26, benchmarks/gw_window_probe.py --op grouped_conv_bwd_data, then named gw_bwd_data_probe.py; benchmarks/results/gw_bwd_data_probe_h100.jsonl),
    each tile the best of some row."""
    tiles = _GROUP_WINDOW + ([(bh, bw, bc, w) for bh, bw, bc, w in itertools.product((32, 64, 128), (2, 4), (64,), (4, 8))
                              if bh * bw * bc <= 128 * 32 * w] if full else [])
    combos = [(t, "a16", stride) for t, stride in itertools.product(tiles, (1, 2))]
    combos += [(_GROUP_WINDOW[0], "i32", stride) for stride in (1, 2)]
    return [family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w, access=access,
                           unroll=3, block_h=bh, block_w=bw, stride_w=stride, dilation_w=1)
            for (bh, bw, bc, w), access, stride in dict.fromkeys(combos)]


# Tensor-core grouped backward-weight windows (gw_win_bwd_weight): (block_h, block_w, block_c,
# num_warps) × splits, 3 stages, one filter row per program. Probes on ResNeXt's seven bf16 grouped
# rows (one H100, 2026-11-26, benchmarks/gw_window_probe.py; benchmarks/results/gw_bwd_weight_probe_v*_h100.jsonl)
# found 3 stages faster than 1, one filter row faster than 3, and (v2 -> v4) the sum of the partials
# per (channel block, pass) with [block_c, block_c] loads 1.1-6x faster at C/G 16-32. Default: a
# greedy choice over the v4 probe's (tile, split) pairs (up to 50 per row), 0.983 of each row's best.
_GROUP_WINDOW_BWD_WEIGHT = [((16, 4, 64, 4), 8), ((16, 4, 64, 4), 4), ((64, 2, 64, 4), 16), ((64, 4, 32, 4), 2),
                            ((32, 4, 64, 4), 8), ((32, 4, 64, 4), 4),
                            # from a 553-instance bf16 sweep on the grouped suite rows (one H100, twenty-third
                            # session; grouped_conv's sets.py, the _TMA_WGRAD note): 2-warp 16x4x32 tiles
                            # for ResNeXt l2-l3 and the 32x2x64 tile for ResNeXt-3D
                            ((32, 2, 64, 4), 4), ((16, 4, 32, 2), 8), ((16, 4, 32, 2), 16)]
_GROUP_WINDOW_BWD_WEIGHT_FULL = [(32, 2, 64, 4), (64, 2, 64, 4), (32, 4, 64, 4), (16, 4, 64, 4), (32, 2, 64, 8),
                                 (64, 2, 64, 8), (32, 2, 32, 4), (64, 2, 32, 4), (32, 4, 32, 4), (64, 4, 32, 4)]
_GROUP_WINDOW_SPLITS = (2, 4, 8, 16, 32)


def _group_window_bwd_weight_keys(family, dtype, full):
    """Grouped backward-weight windows: :data:`_GROUP_WINDOW_BWD_WEIGHT` (full: the tiles of
    ``_FULL`` × :data:`_GROUP_WINDOW_SPLITS`) × column stride 1 and 2, 3 stages, 3 taps per step,
    ``a16``."""
    pairs = (list(itertools.product(_GROUP_WINDOW_BWD_WEIGHT_FULL, _GROUP_WINDOW_SPLITS)) if full
             else _GROUP_WINDOW_BWD_WEIGHT)
    return [family.key_cls(dtype=dtype, channels_last=True, block_p=bh * bw, block_c=bc, num_warps=w, access="a16",
                           unroll=3, block_h=bh, block_w=bw, stride_w=stride, dilation_w=1, split=split, num_stages=3)
            for ((bh, bw, bc, w), split), stride in itertools.product(pairs, (1, 2))]


def _valid(family, arch: ArchSpec, full: bool):
    keys = []
    if getattr(family.key_cls, "dot", False):
        make = _group_window_bwd_weight_keys if family.direction == "bwd_weight" else _group_window_keys
        return [k for dtype in (DType.FP16, DType.BF16) for k in make(family, dtype, full) if not family.check(k, arch)]
    if issubclass(family.key_cls, DwWindowKey):
        if family.direction == "bwd_weight":
            return [k for dtype in DType for k in _window_bwd_weight_keys(family, dtype) + _window_m2_keys(family, dtype)
                    if not family.check(k, arch)]
        return [k for dtype in DType for k in _window_keys(family, dtype, full) + _window_m2_keys(family, dtype)
                if not family.check(k, arch)]
    for dtype in DType:
        for channels_last in (True, False):
            cands = _keys(family, dtype, channels_last, full)
            if family.direction in ("fwd", "bwd_data") and channels_last:
                cands += _spatial_tiles(family, dtype, full)
            keys += [k for k in cands if not family.check(k, arch)]
    return keys


def default_set(family, arch: ArchSpec):
    return _valid(family, arch, full=False)


def full_set(family, arch: ArchSpec):
    return _valid(family, arch, full=True)
