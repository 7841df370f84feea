"""Named kernel sets of the depthwise families: ``default`` (a few pixel × channel tiles per
dtype and layout, channels-last tiles wide in channels, contiguous tiles wide in pixels, and
generic fallbacks; backward-data with a unit-stride twin of each, channels-last forward with 3
taps per loop step) and ``full`` (a sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

__all__ = ["default_set", "full_set"]

# (block_p, block_c, num_warps, num_stages)
_CL = [(64, 64, 4, 1), (128, 32, 4, 1), (32, 128, 4, 1), (128, 64, 8, 1)]
_CF = [(128, 8, 4, 1), (256, 4, 4, 1)]
# Backward-weight splits of the N·output-pixel reduction. Few channels leave few channel blocks
# in channels-last tiles: 512 (first tile, aligned) keeps about 4 programs per SM on a 32-channel
# layer (mbv2.dw32: 1 block of 64 channels). Contiguous tiles are narrow in channels already.
_SPLITS = (1, 8, 32, 128)
_WIDE_SPLIT = 512
# Forward taps per loop step in channels-last tiles: on the suite's 21 depthwise rows (H200,
# benchmarks/results/dw_sweep_fwd_h200.jsonl.gz) 3 taps per step reached 0.996 of the best swept
# instance (geomean; minimum 0.97), one tap 0.90 (minimum 0.72), 9 taps 0.81 (minimum 0.31).
# Backward-data gained nothing from it (one tap: 0.997; 3 taps: 0.87).
_FWD_UNROLL = 3


def _keys(family, dtype, channels_last, full):
    cls = family.key_cls
    out = []
    tiles = _CL if channels_last else _CF
    if full:
        tiles = list(itertools.product((16, 32, 64, 128, 256), (8, 16, 32, 64, 128), (4, 8), (1, 2)))
    for (bp, bc, w, s), access in itertools.product(tiles, ("a16", "i32", "generic")):
        if access != "a16" and (bp, bc, w, s) != tiles[0]:
            continue  # one unaligned tile of each kind
        variants = [{}]
        if family.direction == "bwd_weight":
            wide = channels_last and access == "a16" and (bp, bc, w, s) == tiles[0]
            variants = [{"split": split} for split in _SPLITS + ((_WIDE_SPLIT,) if wide else ())]
        elif family.direction == "bwd_data":
            variants = [{"unit_stride": False}, {"unit_stride": True}]
        elif channels_last:
            variants = [{"unroll": _FWD_UNROLL}]
        for extra, m1 in itertools.product(variants, (True, False)):
            out.append(cls(dtype=dtype, channels_last=channels_last, block_p=bp, block_c=bc, num_warps=w,
                           num_stages=s, access=access, multiplier_one=m1, **extra))
    return out


def _valid(family, arch: ArchSpec, full: bool):
    keys = []
    for dtype in DType:
        for channels_last in (True, False):
            keys += [k for k in _keys(family, dtype, channels_last, full) if not family.check(k, arch)]
    return keys


def default_set(family, arch: ArchSpec):
    return _valid(family, arch, full=False)


def full_set(family, arch: ArchSpec):
    return _valid(family, arch, full=True)
