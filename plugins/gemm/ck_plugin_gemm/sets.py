"""Named kernel sets of ``gemm_tiled``: ``default`` (a few tiles per dtype and layout, chosen
for small, skinny and large problems, plus the generic fallback) and ``full`` (a sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

from .keys import GemmKey
from .problem import Layout

__all__ = ["default_set", "full_set", "fallback_keys"]

# (block_m, block_n, block_k, num_warps, num_stages)
_DEFAULT_16BIT = [
    (128, 256, 64, 8, 3),
    (128, 128, 64, 8, 4),
    (128, 128, 64, 4, 4),
    (64, 128, 64, 4, 4),
    (64, 64, 64, 4, 4),
    (32, 64, 128, 4, 4),
    (16, 64, 128, 4, 4),
    (16, 32, 256, 4, 3),
]
_DEFAULT_FP32 = [
    (128, 128, 32, 8, 3),
    (64, 128, 32, 4, 3),
    (64, 64, 32, 4, 3),
    (32, 64, 64, 4, 3),
    (16, 64, 64, 4, 3),
]
_FALLBACK = {DType.FP32: (64, 64, 32, 4, 2), DType.FP16: (64, 64, 32, 4, 2), DType.BF16: (64, 64, 32, 4, 2)}


def _key(dtype, layout, cfg, aligned=True) -> GemmKey:
    bm, bn, bk, w, s = cfg
    return GemmKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=bk, group_m=8,
                   num_warps=w, num_stages=s, aligned=aligned)


def _valid(keys, arch: ArchSpec) -> list[GemmKey]:
    from .family import TiledGemm

    fam = TiledGemm()
    out = []
    for key in keys:
        if not fam.check(key, arch):
            out.append(key)
        elif key.num_stages > 2:  # shrink the pipeline until it fits (sm_89's 99 KB)
            from attrs import evolve

            out += _valid([evolve(key, num_stages=key.num_stages - 1)], arch)
    return list(dict.fromkeys(out))


def fallback_keys(arch: ArchSpec) -> list[GemmKey]:
    """One generic instance per dtype and layout: supports every valid problem."""
    return _valid([_key(d, l, _FALLBACK[d], aligned=False) for d in DType for l in Layout], arch)


def default_set(arch: ArchSpec) -> list[GemmKey]:
    keys = []
    for dtype, layout in itertools.product(DType, Layout):
        cfgs = _DEFAULT_FP32 if dtype is DType.FP32 else _DEFAULT_16BIT
        keys += [_key(dtype, layout, c) for c in cfgs]
    return _valid(keys, arch) + fallback_keys(arch)


def full_set(arch: ArchSpec) -> list[GemmKey]:
    keys = []
    for dtype, layout in itertools.product(DType, Layout):
        bks = (32, 64) if dtype is DType.FP32 else (64, 128)
        for bm, bn, bk, s in itertools.product((16, 32, 64, 128, 256), (32, 64, 128, 256), bks, (3, 4)):
            w = 8 if bm * bn >= 128 * 128 else 4
            keys.append(_key(dtype, layout, (bm, bn, bk, w, s)))
    from .family import TiledGemm

    fam = TiledGemm()
    return [k for k in keys if not fam.check(k, arch)] + default_set(arch)


def _tma_keys(cfgs_16, cfgs_32, arch: ArchSpec) -> list:
    from .tma import TmaGemm, TmaGemmKey

    if not arch.tma:
        return []
    fam, keys = TmaGemm(), []
    for dtype, layout in itertools.product(DType, Layout):
        for bm, bn, bk, w, s in cfgs_32 if dtype is DType.FP32 else cfgs_16:
            key = TmaGemmKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=bk, group_m=8,
                             num_warps=w, num_stages=s)
            if not fam.check(key, arch):
                keys.append(key)
    return keys


def tma_default_set(arch: ArchSpec) -> list:
    return _tma_keys(_DEFAULT_16BIT, _DEFAULT_FP32, arch)


def tma_full_set(arch: ArchSpec) -> list:
    cfgs16, cfgs32 = [], []
    for bm, bn, s in itertools.product((64, 128, 256), (64, 128, 256), (3, 4, 5)):
        w = 8 if bm * bn >= 128 * 128 else 4
        cfgs16 += [(bm, bn, 64, w, s), (bm, bn, 128, w, s)]
        cfgs32 += [(bm, bn, 32, w, s)]
    for bm, bn, bk, s in itertools.product((16, 32), (32, 64, 128), (64, 128, 256), (3, 4, 5)):
        cfgs16.append((bm, bn, bk, 4, s))
    return _tma_keys(cfgs16, cfgs32, arch)
