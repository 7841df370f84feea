"""Named kernel sets of the implicit-GEMM conv families: ``default`` (a few tiles per dtype and
layout for dense, grouped and small problems, group-merging tiles for few channels per group,
split-K for backward-weight and for small forward and backward-data grids, and the generic fallback) and ``full`` (a wider sweep)."""

from __future__ import annotations

import itertools

from ckcore import DType
from ckcore.arch import ArchSpec

__all__ = ["default_set", "full_set", "tma_set", "halo_set"]

# Tiles chosen from sweeps on an H200 (benchmarks/results/conv_sweep_fwd_h200.jsonl): stage-1
# tiles (plain loads through L1, which the 3x3 taps of one program re-read) won on 3x3 layers.
# (block_m, block_n, block_k, num_warps, num_stages) for one group per program.
_DENSE = [(128, 64, 32, 4, 1), (128, 64, 64, 4, 3), (128, 128, 64, 8, 3), (256, 128, 32, 8, 3), (64, 64, 64, 4, 3),
          (128, 128, 32, 8, 4), (64, 32, 32, 4, 3)]
# Group-merging tiles: (block_m, block_n, block_k, num_warps, num_stages, groups_per_block).
_MERGED = [(256, 32, 32, 8, 1, gpb) for gpb in (2, 4, 8)] + [(256, 32, 32, 4, 3, gpb) for gpb in (2, 4, 8)] + \
          [(128, 32, 32, 4, 3, gpb) for gpb in (2, 4, 8)] + [(128, 64, 64, 4, 3, gpb) for gpb in (2, 4, 8, 16)] + \
          [(64, 16, 16, 4, 3, 16), (128, 128, 128, 8, 3, 2)]
# The reduction (N·output pixels) is long and dw small, so most tiles split it: up to 64 ways.
# Backward-weight: (block_m, block_n, block_k, num_warps, num_stages, split_k); rows are output channels.
_WGRAD = [(64, 64, 64, 4, 3, s) for s in (1, 4, 16, 64)] + [(128, 128, 64, 8, 3, s) for s in (1, 4, 16)] + \
         [(32, 32, 64, 4, 3, s) for s in (8, 32)]
_WGRAD_MERGED = [(32, 32, 64, 4, 3, s, gpb) for gpb in (2, 4, 8) for s in (8, 32)] + \
                [(64, 64, 64, 4, 3, s, gpb) for gpb in (2, 4, 8, 16) for s in (8, 32)] + \
                [(16, 32, 64, 4, 3, 4, 2)]  # batch-1 ResNeXt (the sweep of the _TMA_WGRAD note below)
# Tap blocks, in the full set only: one dy tile and pixel decomposition serve 9 taps (32x32 dw
# tiles) or 3 (64x64). Measured on the 72 tune problems they serve (H100, 2026-11-25): before the
# pixel steps became mixed-radix carries they won 10 (by up to 1.35x), after it 4 (by at most
# 1.085x); the 9-tap tiles take 255 registers and run at 6% occupancy. (block_m, block_n, block_k,
# num_warps, num_stages, split_k, groups_per_block, tap_block).
_WGRAD_TAPS = [(32, 32, 64, 4, 3, s, gpb, 9) for gpb in (1, 2, 4, 8) for s in (8, 32)] + \
              [(64, 64, 64, 8, 3, s, gpb, 3) for gpb in (1, 4) for s in (8, 32)]
# Generic instances (64-bit offsets, no divisibility assumptions), (..., groups_per_block).
_GENERIC = [(64, 64, 32, 4, 2, 1), (64, 32, 32, 4, 2, 4), (64, 16, 16, 4, 2, 16), (128, 16, 64, 4, 3, 1)]
_GENERIC_WGRAD = [(64, 64, 32, 4, 2, 1, 1), (64, 64, 32, 4, 2, 8, 1), (32, 32, 64, 4, 2, 8, 8), (32, 32, 64, 4, 2, 8, 32)]
# Forward and backward-data split-K twins (aligned, one group per program), for grids that fill
# few SMs (deep ResNet layers, batch 1): (block_m, block_n, block_k, num_warps, num_stages, split_k).
_SPLIT = [(128, 128, 64, 8, 3, s) for s in (2, 4)] + [(64, 64, 64, 4, 3, s) for s in (2, 4)]
# Flat reduction / columns over taps × channels (few channels, e.g. a first layer's C = 3).
_FLAT = [(128, 64, 32, 4, 3), (128, 64, 64, 4, 3)]
_FLAT_WGRAD = [(64, 64, 32, 4, 3, 4), (64, 64, 64, 4, 3, 16), (64, 64, 64, 4, 3, 64)]


def _fp32_fit(cfg):
    """fp32 operands are twice the size: halve block_k above 32 to keep the pipeline in smem."""
    bm, bn, bk, *rest = cfg
    return (bm, bn, min(bk, 32) if bk > 32 else bk, *rest)


def _keys(family, dtype: DType, channels_last: bool, full: bool) -> list:
    cls = family.key_cls
    wgrad = family.direction == "bwd_weight"
    fix = _fp32_fit if dtype is DType.FP32 else (lambda c: c)
    out = []

    def add(bm, bn, bk, w, s, gpb=1, split=1, aligned=True, flat=False, tap_block=1):
        if not aligned:  # 32-bit twins of every generic tile, for problems below 2^31 elements:
            # no assumptions (i32), or aligned output channels (a16k: C = 3, K = 64 first layers)
            for access in ("a16k", "i32", "generic"):
                _add(bm, bn, bk, w, s, gpb, split, access, flat, tap_block)
        else:
            _add(bm, bn, bk, w, s, gpb, split, "a16", flat, tap_block)

    def _add(bm, bn, bk, w, s, gpb, split, access, flat, tap_block):
        aligned = access == "a16"
        variants = [{}]
        if wgrad:
            variants = [{"split_k": split, "flat": flat, "tap_block": tap_block}]
        elif flat:
            variants = [{"flat": True}]
        elif family.direction == "bwd_data" and aligned:  # a stride-1 twin of every aligned tile
            variants = [{"unit_stride": False, "split_k": split}, {"unit_stride": True, "split_k": split}]
        elif split > 1:
            variants = [{"split_k": split}]
        for extra in variants:
            out.append(cls(dtype=dtype, channels_last=channels_last, block_m=bm, block_n=bn, block_k=bk,
                           groups_per_block=gpb, num_warps=w, num_stages=s, access=access, **extra))

    if wgrad:
        for bm, bn, bk, w, s, split in map(fix, _WGRAD):
            add(bm, bn, bk, w, s, split=split)
        for bm, bn, bk, w, s, split, gpb in map(fix, _WGRAD_MERGED):
            add(bm, bn, bk, w, s, gpb=gpb, split=split)
        for bm, bn, bk, w, s, split, gpb in _GENERIC_WGRAD:
            add(bm, bn, bk, w, s, gpb=gpb, split=split, aligned=False)
        for bm, bn, bk, w, s, split in map(fix, _FLAT_WGRAD):
            add(bm, bn, bk, w, s, split=split, aligned=False, flat=True)
    else:
        for cfg in map(fix, _DENSE):
            add(*cfg)
        for bm, bn, bk, w, s, gpb in map(fix, _MERGED):
            add(bm, bn, bk, w, s, gpb=gpb)
        for bm, bn, bk, w, s, gpb in _GENERIC:
            add(bm, bn, bk, w, s, gpb=gpb, aligned=False)
        if family.direction == "fwd":
            for cfg in map(fix, _FLAT):
                add(*cfg, aligned=False, flat=True)
        for bm, bn, bk, w, s, split in map(fix, _SPLIT):
            add(bm, bn, bk, w, s, split=split)
    if full and wgrad:
        for bm, bn, bk, w, s, split, gpb, tb in map(fix, _WGRAD_TAPS):
            add(bm, bn, bk, w, s, gpb=gpb, split=split, tap_block=tb)
    if full:
        for bm, bn, bk, w, s in itertools.product((64, 128, 256), (32, 64, 128), (32, 64), (4, 8), (3, 4)):
            if wgrad:
                for split in (1, 4):
                    add(bm, bn, bk, w, s, split=split)
            else:
                add(bm, bn, bk, w, s)
    return out


def _valid(family, arch: ArchSpec, full: bool) -> list:
    seen, keys = set(), []
    for dtype in DType:
        for channels_last in (True, False):
            for key in _keys(family, dtype, channels_last, full):
                if key not in seen and not family.check(key, arch):
                    seen.add(key)
                    keys.append(key)
    return keys


def default_set(family, arch: ArchSpec) -> list:
    return _valid(family, arch, full=False)


def full_set(family, arch: ArchSpec) -> list:
    return _valid(family, arch, full=True)


# TMA families (channels-last): (block_h, block_w, block_n, block_k, num_warps, num_stages).
# The eight configs that reached 0.99 of the best of 16 (geomean, minimum 0.86) on the 19 stride-1
# suite rows with C/G, K/G >= 16, forward and backward-data, on an H200
# (benchmarks/results/conv_tma_probe_h200.jsonl).
_TMA = [(1, 128, 128, 64, 8, 3), (1, 128, 64, 64, 4, 4), (4, 32, 128, 64, 8, 3), (8, 8, 128, 64, 4, 4),
        (16, 8, 64, 64, 4, 4), (1, 64, 64, 64, 4, 4), (8, 16, 64, 64, 4, 4), (4, 16, 128, 64, 4, 4)]
_TMA_PATCHES = [(1, 64), (1, 128), (2, 64), (4, 32), (4, 16), (8, 16), (8, 8), (16, 8)]
# Split-K twins (2 and 4 ways) of the configs that served the small-grid rows (7x7 and 14x14
# ResNet layers, batch 1, folded 1x1 filters), forward and backward-data.
_TMA_SPLIT = [(8, 8, 128, 64, 4, 4), (4, 16, 128, 64, 4, 4), (1, 64, 64, 64, 4, 4), (1, 128, 128, 64, 8, 3),
              (4, 32, 128, 64, 8, 3)]
# Merged groups (ResNeXt's 4-16 channels per group): 16x16 patches of 32 reduction channels and 32
# columns (2, 4 or 8 groups), 8 or 4 warps, 3 stages; the six that reached 1.000 of the best of 105
# (with the pointer family's merged tiles) on the 12 bf16 stride-1 grouped suite rows, forward and
# backward-data, H200 (benchmarks/results/tma_gpb_sweep_{fwd,bwd_data}_h200.jsonl.gz,
# benchmarks/run_tma_gpb_sweep.sh): (block_h, block_w, block_n, block_k, num_warps, num_stages, gpb).
_TMA_MERGED = [(16, 16, 32, 32, w, 3, gpb) for w in (8, 4) for gpb in (2, 4, 8)]


# Backward-weight: (block_h, block_w, block_m, block_n, num_warps, num_stages, split_k). The 12
# instances chosen greedily from a sweep of 84 (7 patches x 4 dw tiles x splits 4/16/64) on the 22
# stride-1 suite rows they serve, H200 (benchmarks/results/tma_sweep_bwd_weight_h200.jsonl.gz,
# benchmarks/make_tma_sweep_set.py): 1.000 of the sweep's best per row (geomean, minimum 0.993);
# the first, unswept set reached 0.901 (minimum 0.504).
_TMA_WGRAD = [(4, 32, 64, 64, 4, 3, 4), (1, 128, 64, 64, 4, 3, 16), (8, 16, 64, 64, 4, 3, 4),
              (1, 128, 64, 64, 4, 3, 4), (8, 16, 64, 64, 4, 3, 16), (8, 8, 64, 128, 4, 3, 4),
              (8, 8, 64, 64, 4, 3, 4), (1, 64, 64, 128, 4, 3, 4), (1, 128, 64, 64, 4, 3, 64),
              (16, 8, 128, 64, 4, 3, 4), (8, 16, 64, 64, 4, 3, 64), (4, 32, 64, 64, 4, 3, 16)]
# Few-split twins for short reductions (7x7 and 14x14 grouped layers: ResNeXt-50 l4, RegNetX s3/s4),
# and a 32-column tile for 32 channels per group: four of the eight instances chosen greedily from a
# sweep of 553 bf16 instances on the 11 bf16 2-D/3-D grouped suite rows (one H100, twenty-third
# session, benchmarks/make_gw_bwd_weight_sweep.py, benchmarks/results/gw_bwd_weight_sweep_h100.jsonl.gz;
# the others: the 16x32x64 two-group tile in _WGRAD_MERGED above and three grouped windows in the
# depthwise plugin's sets.py): the default set's best reached 0.948 of the sweep's best per row
# (geomean), with all eight 1.000.
_TMA_WGRAD += [(8, 8, 64, 64, 4, 3, 1), (8, 8, 64, 32, 4, 3, 2), (8, 16, 64, 64, 4, 3, 1), (4, 32, 64, 64, 4, 3, 2)]


def tma_set(family, arch: ArchSpec, full: bool) -> list:
    """The TMA family's instances valid on ``arch``. Forward and backward-data: :data:`_TMA`,
    :data:`_TMA_SPLIT` split 2 and 4 ways, and the merged-group :data:`_TMA_MERGED`, per dtype
    (fp32 with a 32-wide reduction step: 128 bytes); forward also :data:`_TMA`'s ``phases``
    twins for strides above 1; and with ``full`` every patch ×
    (64, 128, 256) channels × 4 or 8 warps × 3 or 4 stages. Backward-weight: :data:`_TMA_WGRAD`
    (``full`` adds splits 1 and 256)."""
    keys = []

    def add(**fields):
        key = family.key_cls(**fields)
        if key not in keys and not family.check(key, arch):
            keys.append(key)

    for dtype in DType:
        if family.direction == "bwd_weight":
            cfgs = _TMA_WGRAD + ([(1, 128, 64, 64, 4, 3, s) for s in (1, 256)] if full else [])
            for bh, bw, bm, bn, w, st, split in cfgs:
                add(dtype=dtype, block_h=bh, block_w=bw, block_m=bm, block_n=bn, split_k=split, num_warps=w,
                    num_stages=st)
            continue
        cfgs = [(*c, 1) for c in _TMA] + [(*c, split) for c in _TMA_SPLIT for split in (2, 4)]
        if full:
            cfgs += [(bh, bw, bn, 64, w, s, 1) for (bh, bw), bn, w, s in
                     itertools.product(_TMA_PATCHES, (64, 128, 256), (4, 8), (3, 4))]
        for bh, bw, bn, bk, w, s, split in cfgs:
            add(dtype=dtype, block_h=bh, block_w=bw, block_n=bn, block_k=bk * 2 // dtype.itemsize, num_warps=w,
                num_stages=s, split_k=split)
        if family.direction == "fwd":  # the twins for strides above 1 (row phases) of the unsplit configurations
            for bh, bw, bn, bk, w, s in _TMA:
                add(dtype=dtype, block_h=bh, block_w=bw, block_n=bn, block_k=bk * 2 // dtype.itemsize, num_warps=w,
                    num_stages=s, phases=True)
        for bh, bw, bn, bk, w, s, gpb in _TMA_MERGED:  # 32 channels whatever the dtype: 4-16 per group
            add(dtype=dtype, block_h=bh, block_w=bw, block_n=bn, block_k=bk, num_warps=w, num_stages=s,
                groups_per_block=gpb)
    return keys


# Halo kernels (conv_halo_fwd / conv_halo_bwd_data): (block_h, block_w, block_n, num_stages) for
# 64-channel and 32-channel groups, 3-row filters at dilation 1; full: every patch, width and depth
# of ring that fits shared memory.
# The default set's four: the best of each patch and width on the suite rows they serve, H100,
# twenty-seventh session (benchmarks/results/halo_sweep_s27_h100.jsonl: every ring depth from 3 on
# was within 5% of the best).
_HALO = [(16, 8, 64, 4), (8, 8, 64, 5), (16, 8, 32, 4), (8, 8, 32, 6)]
_HALO_FULL = [(bh, bw, bn, st) for bh, bw in ((16, 8), (8, 8), (8, 16)) for bn in (32, 64) for st in range(2, 9)]
# Merged groups (few channels per group: ResNeXt's 4-16), (block_h, block_w, block_n, num_stages,
# groups_per_block). The default set's: the best on ResNeXt-50's stride-1 rows of 4, 8 and 16
# channels per group and the batch-1 row, H100, twenty-eighth session (halo_merged_probe_s28_h100.jsonl).
_HALO_MERGED_DEFAULT = [(16, 8, 64, 6, 16), (8, 16, 32, 6, 8), (16, 8, 64, 6, 8), (8, 16, 32, 6, 2), (8, 8, 32, 4, 4)]
# 3×3×3 filters (27 resident taps: 32-channel tiles only), for 8 and 16 channels per group (ResNeXt-3D);
# full set only: measured on the problems they serve (twenty-eighth session, call 4), the best on
# ResNeXt-3D's row took 59.4 µs forward against the grouped window's 64.9 (1.09x), and the model
# retrained with them scored lower held-out (benchmarks/results/README.md).
_HALO_MERGED_27 = [(16, 8, 32, 6, 4), (8, 16, 32, 6, 4), (8, 16, 32, 6, 2)]
# Row phases (stride 2, forward), (block_h, block_w, block_n, num_stages, programs_per_sm) × 1-16
# groups a tile (a key serves the C/G whose groups fill its channel box exactly): the three best of 29
# on ResNeXt-50's stride-2 layer 2 (8 channels per group), 32.2-32.9 µs against cuDNN's 36.5 and the
# default pick's 48.7, H200, thirtieth session (halo_phases_probe2_s30.jsonl).
_HALO_PHASES_DEFAULT = [(8, 8, 64, 7, 1), (8, 8, 32, 6, 2), (8, 16, 32, 3, 2)]
_HALO_MERGED = [(bh, bw, bn, st, gpb) for bh, bw in ((16, 8), (8, 8), (8, 16)) for bn in (32, 64) for st in (3, 4, 6)
                for gpb in (2, 4, 8, 16)]


def halo_set(family, arch: ArchSpec, full: bool) -> list:
    """The halo family's instances valid on ``arch``: :data:`_HALO` and :data:`_HALO_MERGED_DEFAULT`
    (up to 9 taps), and with ``full`` :data:`_HALO_FULL`, :data:`_HALO_MERGED` (9) and
    :data:`_HALO_MERGED_27` (27), the default tiles' twins of two programs an SM where their
    shared memory fits, and (forward) the 9-tap tiles' stride-2 twins; both sets (forward)
    :data:`_HALO_PHASES_DEFAULT`; for fp16 and bf16, 3-row filters at dilation 1."""
    keys = []
    tiles = [(*t, 1, 9) for t in _HALO] + [(*t, 9) for t in _HALO_MERGED_DEFAULT]
    twins = [(t, 2, 1) for t in tiles] if full else []  # two programs an SM, where their shared memory fits
    twins += [((bh, bw, bn, st, gpb, 9), pps, 2) for bh, bw, bn, st, pps in _HALO_PHASES_DEFAULT
              for gpb in (1, 2, 4, 8, 16)]
    if full:
        tiles += [(*t, 1, 9) for t in _HALO_FULL] + [(*t, 9) for t in _HALO_MERGED] + [(*t, 27) for t in _HALO_MERGED_27]
        twins += [(t, 1, 2) for t in tiles if t[-1] == 9]  # row phases: stride 2 (forward; check refuses the rest)
    for dtype in (DType.FP16, DType.BF16):
        for (bh, bw, bn, st, gpb, taps), pps, stride in [(t, 1, 1) for t in tiles] + twins:
            key = family.key_cls(dtype=dtype, block_h=bh, block_w=bw, block_n=bn, num_stages=st, groups_per_block=gpb,
                                 max_taps=taps, programs_per_sm=pps, stride=stride)
            if key not in keys and not family.check(key, arch):
                keys.append(key)
    return keys


def halo_wgrad_set(family, arch: ArchSpec, full: bool) -> list:
    """The halo backward-weight family's instances: fp16 and bf16 × patches 16x8 and 8x8 × 64
    output by 64 or 32 input channels × splits 1-32 (``full``: 1-64) × 1-16 groups a program
    (``groups_per_block``), four stages (three where four do not fit); and stream-K keys of one
    program an SM with 16x8 patches (``full``: both patches, one and two programs an SM); each at
    stride 1 and, from the input's row phases, stride 2 (``_st2``). The best
    split moves with the problem from 1 to 32 (H100, twenty-ninth session,
    ``halo_wgrad_probe2_s29_h100.jsonl``): the model picks it."""
    keys = []
    splits = (1, 2, 4, 8, 16, 32, 64) if full else (1, 2, 4, 8, 16, 32)
    # (split_k, stream_k): the fixed splits, then stream-K grids of one program an SM (default: 16x8
    # patches; 8x8 ones were never the best stream-K key on the suite's rows where stream-K won, H200,
    # thirty-first session, halo_wgrad_sk_probe_*_s31.jsonl) and of two (full)
    reductions = [(split, 0) for split in splits] + [(1, 1)] + ([(1, 2)] if full else [])
    for dtype, stride in itertools.product((DType.FP16, DType.BF16), (1, 2)):
        for (bh, bw), bn, (split, sk), gpb in itertools.product(((16, 8), (8, 8)), (64, 32), reductions, (1, 2, 4, 8, 16)):
            if sk and not full and (bh, bw) != (16, 8):
                continue
            for stages in (4, 3):
                key = family.key_cls(dtype=dtype, block_h=bh, block_w=bw, block_m=64, block_n=bn, split_k=split,
                                     num_stages=stages, groups_per_block=gpb, stream_k=sk, stride=stride)
                if not family.check(key, arch):
                    keys.append(key)
                    break
    return keys
