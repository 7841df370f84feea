"""The cost model the ``rules`` heuristic ranks the implicit-GEMM conv instances with.

estimate = max(compute, memory) + loop overhead + launch, where
- compute: the busiest SM's tiles × 2·BM·BN·(padded reduction) at the SM's share of the device's
  dense tensor-core peak (arch specs, datasheet) times a tile efficiency (larger tiles reuse
  operands more; below 64 rows Hopper's warpgroup MMA is not used). Block-diagonal tiles
  (several groups per program) and padding of the tile are counted as work;
- memory: the larger of the minimum traffic at HBM bandwidth (falling off when few SMs are
  busy) and every tile's operand traffic at the SM's share of L2 bandwidth (a multiple of
  HBM bandwidth, fitted below);
- split-K partials written and read once in fp32;
- backward-weight tap blocks: one program per ``tap_block`` dw tiles, its dy tile loaded once for
  all of them.
The figures only need to order candidates sensibly; ``ckcore profile`` measures them.
"""

from __future__ import annotations

import math

from ckcore import DType
from ckcore.arch import ArchSpec, DeviceSpec

__all__ = ["estimate_ms"]

LAUNCH_MS = 0.004
# Fitted by grid search to a sweep of 280 forward instances on five suite rows (H200,
# benchmarks/results/conv_sweep_fwd_h200.jsonl): the rules pick reached 0.86 of the best
# measured time on average there (0.73 with the GEMM plugin's constants).
L2_OVER_HBM = 2.0
ITER_S = 0.05e-6
TILE_EXP = 0.3


def _tile_efficiency(key, arch: ArchSpec) -> float:
    eff = 0.8 * min(1.0, (key.block_m * key.block_n / (128 * 128)) ** TILE_EXP)
    if arch.wgmma and key.block_m < 64:
        eff *= 0.55
    return eff


def estimate_ms(family, key, p, arch: ArchSpec, device: DeviceSpec) -> float:
    """Estimated run time in ms of ``key`` (of ``family``) on problem ``p``."""
    from .family import gemm_shape, stride_phases

    item = p.dtype.itemsize
    peak = device.peak_tflops["tf32" if p.dtype is DType.FP32 else p.dtype.value] * 1e12
    bw = device.mem_bandwidth_gbps * 1e9
    split = getattr(key, "split_k", 1)
    rows, cols, red = gemm_shape(family.direction, p, key.groups_per_block)
    flat = getattr(key, "flat", False)
    if family.direction == "bwd_weight":
        cols_tiles = math.ceil(cols / key.block_n) if flat else p.taps * math.ceil(cols / p.taps / key.block_n)
        red_pad = math.ceil(math.ceil(red / key.block_k) / split) * key.block_k
    else:
        cols_tiles = math.ceil(cols / key.block_n)
        per_tap = red // p.taps
        red_pad = math.ceil(red / key.block_k) * key.block_k if flat else p.taps * math.ceil(per_tap / key.block_k) * key.block_k
        red_pad = math.ceil(red_pad / key.block_k / split) * key.block_k  # a split's share
    row_tiles = math.ceil(rows / key.block_m)
    if family.direction == "bwd_data":  # stride phases: S times the row blocks, taps / S each
        phases, phase_rows = stride_phases(p)
        row_tiles, red_pad = phases * math.ceil(phase_rows / key.block_m), red_pad / phases
    groups = math.ceil(p.G / key.groups_per_block)
    tiles = row_tiles * cols_tiles * groups * split
    tb = getattr(key, "tap_block", 1)  # backward-weight: taps (dw tiles) per program, one dy tile for all
    programs = math.ceil(tiles / tb)
    per_sm = math.ceil(programs / arch.sm_count)
    busy = min(programs, arch.sm_count)
    compute = per_sm * tb * 2.0 * key.block_m * key.block_n * red_pad / (peak / arch.sm_count * _tile_efficiency(key, arch))
    min_bytes = sum(p.numel().values()) * item
    if split > 1:
        min_bytes += 2 * tiles * key.block_m * key.block_n * 4
    tile_bytes = per_sm * (min(key.block_m, rows) + tb * min(key.block_n, cols)) * red_pad * item
    per_sm_bw = bw * L2_OVER_HBM / arch.sm_count * min(1.3, arch.sm_count / busy)
    hbm_bw = bw * min(1.0, busy / (0.75 * arch.sm_count))
    iters = red_pad / key.block_k
    latency = per_sm * tb * iters * ITER_S * (1.0 if key.num_stages >= 3 else 1.5)
    if family.direction == "bwd_data" and not getattr(key, "unit_stride", False):
        latency *= 1.1  # per-tap phase arithmetic; the stride-1 twin skips it
    if flat:
        latency *= 2.0  # per-element tap decomposition and bounds
    memory = max(min_bytes / hbm_bw, tile_bytes / per_sm_bw)
    ms = (max(compute, memory) + latency) * 1e3 + LAUNCH_MS
    # Unaligned instances load scalars; 64-bit offsets cost more again (generic measured 2-10x
    # slower than aligned on an H200); a16k vectorises the output-channel side only.
    return ms * {"a16": 1.0, "a16k": 1.5, "i32": 2.0, "generic": 3.0}[key.access.value]
