"""Named kernel sets of the depthwise families: ``default`` (a few pixel × channel tiles per
dtype and layout, channels-last tiles wide in channels, contiguous tiles wide in pixels, and
generic fallbacks) and ``full`` (a sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

__all__ = ["default_set", "full_set"]

# (block_p, block_c, num_warps, num_stages)
_CL = [(64, 64, 4, 1), (128, 32, 4, 1), (32, 128, 4, 1), (128, 64, 8, 1)]
_CF = [(128, 8, 4, 1), (256, 4, 4, 1)]
_SPLITS = (1, 8, 32, 128)


def _keys(family, dtype, channels_last, full):
    cls = family.key_cls
    out = []
    tiles = _CL if channels_last else _CF
    if full:
        tiles = list(itertools.product((16, 32, 64, 128, 256), (8, 16, 32, 64, 128), (4, 8), (1, 2)))
    for (bp, bc, w, s), access in itertools.product(tiles, ("a16", "i32", "generic")):
        if access != "a16" and (bp, bc, w, s) != tiles[0]:
            continue  # one unaligned tile of each kind
        splits = _SPLITS if family.direction == "bwd_weight" else (None,)
        for split, m1 in itertools.product(splits, (True, False)):
            extra = {"split": split} if split else {}
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
