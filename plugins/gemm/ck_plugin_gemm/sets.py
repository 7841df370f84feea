"""Named kernel sets of ``gemm_tiled``: ``default`` (a few tiles per dtype and layout, chosen
for small, skinny and large problems, plus the generic fallback) and ``full`` (a sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

from .keys import GemmKey
from .problem import Layout
from .quant import QuantType

__all__ = ["default_set", "full_set", "fallback_keys"]

# (block_m, block_n, block_k, num_warps, num_stages, group_m). Chosen from measurements on an
# H200 (benchmarks/results/gemm_profile_*.jsonl): small-M tiles are memory-bound and want
# BLOCK_M = 16/32 with a long K step; for large problems the best measured configuration differs
# by layout, and Hopper warp specialization (the trailing True: a TMA producer warp group and two
# MMA consumer groups) lifts the large TMA tiles most (benchmarks/results/gemm_sweep_ws_h200.jsonl).
_SMALL_16BIT = [(16, 32, 128, 4, 4, 8), (16, 32, 256, 4, 3, 8), (16, 64, 128, 4, 3, 8), (32, 64, 128, 4, 4, 8),
                (64, 64, 64, 4, 4, 8), (64, 128, 64, 4, 4, 8)]
_LARGE_16BIT = {
    "rrr": {"tiled": [(128, 256, 32, 8, 4, 16), (128, 128, 64, 8, 4, 8)], "tma": [(128, 256, 64, 4, 3, 8, True)]},
    "rcr": {"tiled": [], "tma": [(128, 256, 64, 4, 3, 8, True), (128, 128, 64, 4, 4, 16), (64, 128, 128, 4, 4, 8)]},
    "ccr": {"tiled": [], "tma": [(128, 256, 64, 4, 3, 8, True), (128, 128, 64, 4, 4, 16), (64, 128, 128, 4, 4, 8)]},
    "crr": {"tiled": [(128, 256, 64, 8, 4, 8)], "tma": [(128, 256, 64, 8, 3, 8), (128, 256, 64, 4, 3, 8, True)]},
}
_DEFAULT_FP32 = [(128, 128, 32, 8, 3, 8), (64, 128, 32, 4, 3, 8), (64, 64, 32, 4, 3, 8), (32, 64, 64, 4, 3, 8),
                 (16, 64, 64, 4, 3, 8)]
# Generic instances (no alignment assumptions, 64-bit offsets): a small-M, a small and a large
# tile. The small-M one (added 2026-11-22, not yet measured) is for decode shapes with unaligned
# K or N, where the tune dataset had only the 64x64 and 128x128 tiles: 0.1-0.85 TB/s at M <= 16
# (benchmarks/datasets/gemm_h200.jsonl.gz).
_FALLBACK = [(16, 64, 64, 4, 3, 8), (64, 64, 32, 4, 2, 8), (128, 128, 64, 8, 3, 8)]


def _key(dtype, layout, cfg, aligned=True, cls=GemmKey) -> GemmKey:
    bm, bn, bk, w, s, *rest = cfg
    kw = {"aligned": aligned} if cls is GemmKey else {"warp_specialize": bool(rest[1:2] and rest[1])}
    return cls(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=bk, group_m=rest[0] if rest else 8,
               num_warps=w, num_stages=s, **kw)


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


# Quantized inputs (int8, fp8; layout rcr only): tiles with BLOCK_K >= 64 (8-bit MMAs take K = 32
# per instruction) for small M, mid-size and large problems, and a generic pair. Not yet measured:
# the configurations of the 16-bit set with BLOCK_K doubled (same bytes per K step).
_QUANT = [(16, 64, 256, 4, 3, 8), (64, 128, 128, 4, 4, 8), (128, 128, 128, 8, 3, 8), (128, 256, 128, 8, 3, 8)]
_QUANT_FALLBACK = [(16, 64, 128, 4, 3, 8), (64, 64, 64, 4, 2, 8)]
# fp8 tiles with two row halves (GemmKey.halves), for promoted accumulation. In a standalone probe
# on an H200 (benchmarks/fp8_promotion_probe.py, results/fp8_promotion_probe_h200.jsonl, six
# Llama-3-sized shapes) 128x128x128 w4 s3 in halves ran 1.14x the same tile with one accumulator
# and 1.06x the best single-accumulator kernel of the probe; 256x128x128 w8 s3 is unmeasured.
_FP8_HALVES = [(128, 128, 128, 4, 3, 8), (256, 128, 128, 8, 3, 8)]


def quant_keys(arch: ArchSpec) -> list[GemmKey]:
    """The int8 and fp8 instances (layout rcr), tiled and generic, for the arch's tensor cores."""
    from attrs import evolve

    keys = [_key(q, Layout.RCR, c) for q in QuantType for c in _QUANT]
    keys += [evolve(_key(q, Layout.RCR, c), halves=True) for q in (QuantType.FP8E4M3, QuantType.FP8E5M2)
             for c in _FP8_HALVES]
    keys += [_key(q, Layout.RCR, c, aligned=False) for q in QuantType for c in _QUANT_FALLBACK]
    return _valid(keys, arch)


def fallback_keys(arch: ArchSpec) -> list[GemmKey]:
    """One generic instance per dtype and layout: supports every valid problem."""
    return _valid([_key(d, l, c, aligned=False) for d in DType for l in Layout for c in _FALLBACK], arch)


def default_set(arch: ArchSpec) -> list[GemmKey]:
    keys = []
    for dtype, layout in itertools.product(DType, Layout):
        if dtype is DType.FP32:
            keys += [_key(dtype, layout, c) for c in _DEFAULT_FP32]
        else:
            keys += [_key(dtype, layout, c) for c in _SMALL_16BIT + _LARGE_16BIT[layout.value]["tiled"]]
    return _valid(keys, arch) + fallback_keys(arch) + quant_keys(arch)


def full_set(arch: ArchSpec) -> list[GemmKey]:
    keys = []
    for dtype, layout in itertools.product(DType, Layout):
        bks = (32, 64) if dtype is DType.FP32 else (64, 128)
        for bm, bn, bk, s in itertools.product((16, 32, 64, 128, 256), (32, 64, 128, 256), bks, (3, 4)):
            for w in (4, 8) if bm * bn == 128 * 128 else (8 if bm * bn > 128 * 128 else 4,):
                keys.append(_key(dtype, layout, (bm, bn, bk, w, s)))
    from .family import TiledGemm

    fam = TiledGemm()
    return list(dict.fromkeys([k for k in keys if not fam.check(k, arch)] + default_set(arch)))


def _tma_keys(cfgs_16, cfgs_32, arch: ArchSpec) -> list:
    from .tma import TmaGemm, TmaGemmKey

    if not arch.tma:
        return []
    fam, keys = TmaGemm(), []
    for dtype, layout in itertools.product(DType, Layout):
        cfgs = cfgs_32 if dtype is DType.FP32 else cfgs_16
        for cfg in cfgs(layout) if callable(cfgs) else cfgs:
            key = _key(dtype, layout, cfg, cls=TmaGemmKey)
            if not fam.check(key, arch):
                keys.append(key)
    return keys


def tma_default_set(arch: ArchSpec) -> list:
    return _tma_keys(lambda layout: _LARGE_16BIT[layout.value]["tma"], [], arch)


def tma_full_set(arch: ArchSpec) -> list:
    cfgs16, cfgs32 = [], []
    for bm, bn, s in itertools.product((64, 128, 256), (64, 128, 256), (3, 4, 5)):
        for w in (4, 8) if bm * bn == 128 * 128 else (8 if bm * bn > 128 * 128 else 4,):
            cfgs16 += [(bm, bn, 64, w, s), (bm, bn, 128, w, s)]
            cfgs32 += [(bm, bn, 32, w, s)]
    for bm, bn, bk, s in itertools.product((16, 32), (32, 64, 128), (64, 128, 256), (3, 4, 5)):
        cfgs16.append((bm, bn, bk, 4, s))
    for (bm, bn, bk), s, g in itertools.product([(128, 256, 64), (256, 128, 64), (128, 128, 64), (128, 128, 128), (128, 256, 32)],
                                                (2, 3), (8, 16)):
        cfgs16.append((bm, bn, bk, 4, s, g, True))  # warp-specialised (num_stages <= 3: see TmaGemm.check)
    return _tma_keys(cfgs16, cfgs32, arch)


# (block_m, block_n, block_k, num_warps, num_stages, group_m, warp_specialize, flatten, subtile):
# the persistent configurations of Triton's Hopper tutorial and Inductor's persistent_mm_configs
# (TRITON_NOTES §1.2), with and without subtiling. Not yet measured here: the `full` set only.
_PERSISTENT_16BIT = [(128, 256, 64, 8, 3, 8, False, True, False), (128, 256, 64, 8, 4, 8, False, True, True),
                     (128, 256, 64, 8, 3, 8, False, True, True), (128, 128, 64, 8, 4, 8, False, True, False),
                     (128, 128, 64, 8, 5, 8, False, True, True), (128, 128, 128, 8, 3, 8, False, True, False),
                     (128, 128, 64, 4, 4, 8, False, True, True), (256, 128, 64, 8, 3, 8, False, True, True),
                     (128, 256, 64, 4, 3, 8, True, False, False), (128, 128, 64, 4, 3, 8, True, False, False)]
_PERSISTENT_FP32 = [(128, 128, 32, 8, 3, 8, False, True, False), (128, 128, 32, 8, 4, 8, False, True, True),
                    (128, 256, 32, 8, 3, 8, False, True, True), (64, 128, 32, 4, 4, 8, False, True, True)]


# The default set's: on an H200 the best persistent instance beat the default set's pick on 92 of
# 133 gemm suite rows, by 5.3% geomean on the 81 rows with M >= 1024; these six configurations
# were that best on 78 of the 81 (benchmarks/results/persistent_probe_h200.jsonl). fp32: not yet
# measured, the two tutorial-like tiles.
_PERSISTENT_DEFAULT_16BIT = [_PERSISTENT_16BIT[i] for i in (2, 0, 8, 1, 7, 3)]
# Two programs per SM (a tenth field), for fused epilogues: with one program per SM the tensor
# cores idle while a tile's epilogue runs (bias + gelu made the default picks 1.1-3.5x slower than
# their plain twins on the bias-gelu suite, benchmarks/results/bench_gemm_bias_gelu_dtypefeat_h200.jsonl);
# with two resident programs one's epilogue can overlap the other's MMAs. 128x128x64 s3 subtiled is
# the largest bf16 tile whose pipeline and output staging fit twice in an SM (2 x 112 KB).
_PERSISTENT_P2_16BIT = [(128, 128, 64, 8, 3, 8, False, True, True, 2), (128, 128, 64, 4, 3, 8, False, True, True, 2)]
_PERSISTENT_DEFAULT_FP32 = _PERSISTENT_FP32[:2]
# int8 / fp8 (rcr), BLOCK_K 128 (TRITON_NOTES §1.5: fp8 wants BK = 128). On an H200 (ckcore profile
# of the full set, benchmarks/results/profile_quant_h200.jsonl) 256x128x128 was the fastest fp8
# instance with promoted accumulation on 4 of 4 shapes, the 128x128x128 warp-specialised one second;
# 128x256x128 warp-specialised was the usual pick with fast accumulation (bench, first run);
# 128x256x128 flattened is second for int8 (the tiled 128x128x128 first).
_PERSISTENT_QUANT = [(128, 256, 128, 8, 3, 8, False, True, True), (256, 128, 128, 8, 3, 8, False, True, True),
                     (128, 128, 128, 4, 3, 8, True, False, False), (128, 256, 128, 4, 3, 8, True, False, False)]
_PERSISTENT_QUANT_FULL = _PERSISTENT_QUANT + [
    (128, 128, 128, 8, 3, 8, False, True, True), (128, 128, 128, 8, 4, 8, False, True, False),
    (128, 128, 128, 4, 4, 8, False, True, True), (128, 128, 64, 8, 5, 8, False, True, True),
    (128, 256, 64, 8, 4, 8, False, True, True), (64, 256, 128, 4, 4, 8, False, True, True),
    (128, 128, 256, 8, 3, 8, False, True, False)]


# fp8, two row halves (GemmKey.halves) with two programs per SM: the fp8 promotion probe's fastest
# construct (benchmarks/fp8_promotion_probe.py: 0.88 of torch._scaled_mm on six shapes, 1.06x its
# best single-accumulator kernel); the one-program twin separates the two effects; the flattened,
# subtiled one is the family's usual shape. (bm, bn, bk, warps, stages, group, flatten, subtile,
# programs per SM)
_PERSISTENT_FP8_HALVES = [(128, 128, 128, 4, 3, 8, False, False, 2), (128, 128, 128, 4, 3, 8, False, False, 1),
                          (128, 128, 128, 4, 3, 8, True, True, 2)]


# Stream-K tails (PersistentGemmKey.stream_k; an eleventh field), 16-bit: the two 128x256 tiles the
# bf16 suite picks most and the 128x128 one, for tile counts that fill the SMs badly (1.45 waves
# of 128x256 tiles on 3000 x 2000 and on the M = 1024 projections, where cuBLAS led by 1.2-1.5x
# on an H100: benchmarks/results/bench_gemm_bf16_m1024_autotune_h100.jsonl). In the `full` set
# only: measured on an H200 (benchmarks/datasets/gemm_stream_k_h200.jsonl.gz, 1551 pairs on 529
# problems) they were the fastest instance of 35 problems (by 2-12%) and slower than the same
# tiles without a tail where they were meant to help (3000 x 2000 x 1000: 59 against 37 µs).
_PERSISTENT_SK_16BIT = [(128, 256, 64, 8, 3, 8, False, True, True, 1, True),
                        (128, 256, 64, 8, 4, 8, False, True, True, 1, True),
                        (128, 128, 64, 8, 4, 8, False, True, False, 1, True)]


# Split tails (PersistentGemmKey.tail_split; a twelfth field), 16-bit: the three one-program 128x256
# tiles of the default set. On an H100 (benchmarks/results/tail_split_h100.jsonl.gz, tune of the bf16
# suite rows with M >= 1024 and the bias-gelu suite, 2026-11-26) the split tail made the best of
# these tiles 8-12% faster on the M = 1024 projections and 5.6% on 3000 x 2000 x 1000; against
# its own twin it ran 0.75-1.17x (geomean 1.00-1.05 per tile and layout plain, 0.95-1.07 with
# bias + gelu), so selection decides. The 256x128 and 128x128 twins were no faster (0.95-1.02).
_PERSISTENT_TS_16BIT = [(*cfg, 1, False, True) for cfg in _PERSISTENT_DEFAULT_16BIT
                        if cfg[:2] == (128, 256) and not cfg[6]]


def persistent_default_set(arch: ArchSpec) -> list:
    return (_persistent_keys(arch, _PERSISTENT_DEFAULT_16BIT + _PERSISTENT_P2_16BIT + _PERSISTENT_TS_16BIT,
                             _PERSISTENT_DEFAULT_FP32, _PERSISTENT_QUANT) + _persistent_fp8_halves(arch))


def persistent_stream_k_keys(arch: ArchSpec) -> list:
    """The persistent instances with a stream-K tail (16-bit types, every layout)."""
    return _persistent_keys(arch, _PERSISTENT_SK_16BIT, [], [])


def _persistent_fp8_halves(arch: ArchSpec) -> list:
    from .persistent import PersistentGemm, PersistentGemmKey

    if not arch.tma:
        return []
    keys = [PersistentGemmKey(dtype=q, layout=Layout.RCR, block_m=bm, block_n=bn, block_k=bk, num_warps=w, num_stages=s,
                              group_m=g, flatten=flat, subtile=sub, halves=True, programs_per_sm=per_sm)
            for q in (QuantType.FP8E4M3, QuantType.FP8E5M2)
            for bm, bn, bk, w, s, g, flat, sub, per_sm in _PERSISTENT_FP8_HALVES]
    return [k for k in keys if not PersistentGemm().check(k, arch)]


def persistent_full_set(arch: ArchSpec) -> list:
    return (_persistent_keys(arch, _PERSISTENT_16BIT + _PERSISTENT_P2_16BIT + _PERSISTENT_TS_16BIT, _PERSISTENT_FP32,
                             _PERSISTENT_QUANT_FULL) + _persistent_fp8_halves(arch) + persistent_stream_k_keys(arch))


def _persistent_keys(arch: ArchSpec, cfgs_16, cfgs_32, cfgs_8) -> list:
    from .persistent import PersistentGemm, PersistentGemmKey

    if not arch.tma:
        return []
    fam, keys = PersistentGemm(), []
    types = [(d, lay) for d in DType for lay in Layout] + [(q, Layout.RCR) for q in QuantType]
    for dtype, layout in types:
        cfgs = cfgs_8 if isinstance(dtype, QuantType) else cfgs_32 if dtype is DType.FP32 else cfgs_16
        for bm, bn, bk, w, s, g, ws, flat, sub, *more in cfgs:  # more: programs per SM, stream-K, split tail
            key = PersistentGemmKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=bk, num_warps=w,
                                    num_stages=s, group_m=g, warp_specialize=ws, flatten=flat, subtile=sub,
                                    programs_per_sm=more[0] if more else 1, stream_k=more[1] if more[1:] else False,
                                    tail_split=more[2] if more[2:] else False)
            if not fam.check(key, arch):
                keys.append(key)
    return keys


# Warp-specialised Gluon fp8 kernels (gemm_gluon_ws; promoted accumulation, rcr): (block_n,
# stages, n_split). Measured on an H100 (the probe benchmarks/fp8_gluon_probe.py,
# benchmarks/results/fp8_gluon_ws_probe_h100.jsonl, 68 fp8 rows): 128x256 _n2 four stages 0.955 of
# torch._scaled_mm, three stages 0.952, 128x128 four stages 0.934 (the fastest of the four on 25
# rows, mostly M = 1024 and the long-K ones); the best of the four per row 0.978.
_GLUON_WS_FP8 = [(256, 4, 2), (256, 3, 2), (128, 4, 1)]
_GLUON_WS_FP8_FULL = _GLUON_WS_FP8 + [(128, 5, 1), (128, 3, 1), (256, 2, 2)]


def _gluon_ws_keys(arch: ArchSpec, cfgs) -> list:
    from .gluon_ws import GluonWsGemm, GluonWsGemmKey

    fam = GluonWsGemm()
    keys = [GluonWsGemmKey(dtype=q, layout=Layout.RCR, block_m=128, block_n=bn, block_k=128, num_warps=4, num_stages=s,
                           n_split=split)
            for q in (QuantType.FP8E4M3, QuantType.FP8E5M2) for bn, s, split in cfgs]
    return [k for k in keys if not fam.check(k, arch)]


def gluon_ws_default_set(arch: ArchSpec) -> list:
    return _gluon_ws_keys(arch, _GLUON_WS_FP8)


def gluon_ws_full_set(arch: ArchSpec) -> list:
    return _gluon_ws_keys(arch, _GLUON_WS_FP8_FULL)
