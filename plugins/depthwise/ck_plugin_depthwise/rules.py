"""Cost model of the direct depthwise kernels for the ``rules`` heuristic.

Depthwise convolution does 2·taps FLOPs per output (and per input for backward-data), so it is
bound by memory or by CUDA-core arithmetic, never by tensor cores:
estimate = max(minimum bytes / HBM bandwidth, FLOPs / fp32 CUDA-core peak) / efficiency
           + per-tap loop overhead + launch,
with peaks from the arch specs (datasheet). Efficiency falls for tiles that load few bytes per
row (narrow channel blocks in channels-last, narrow pixel blocks when contiguous).
Tensor-core windows (``gw_win_fwd``, ``gw_win_bwd_data``) count the block-diagonal tiles' multiply-adds at
:data:`TC_EFFICIENCY` of the dense tensor-core peak instead. Backward-weight has its own model (:func:`_bwd_weight_ms`: passes of taps over the pixels, a
per-step loop cost, registers).
"""

from __future__ import annotations

import math

from ckcore.arch import ArchSpec, DeviceSpec

from .keys import DwWindowKey

__all__ = ["estimate_ms"]

LAUNCH_MS = 0.004
# Backward-data without the per-tap division by the stride (unit_stride), over its general twin:
# geomean of the measured ratio on the suite's stride-1 depthwise rows (H200,
# benchmarks/results/dw_sweep_bwd_data_h200.jsonl.gz), measured when the general twin still
# divided every pixel index by the stride (before stride phases, 2026-11-22).
UNIT_STRIDE_FACTOR = 0.48


def estimate_ms(family, key, p, arch: ArchSpec, device: DeviceSpec) -> float:
    item = p.dtype.itemsize
    bw = device.mem_bandwidth_gbps * 1e9
    flops = 2.0 * p.N * p.K * p.out_pixels * p.taps
    min_bytes = sum(p.numel().values()) * item
    row = (key.block_c if key.channels_last else key.block_p) * item  # contiguous bytes per load row
    eff = 0.8 * min(1.0, row / 128) ** 0.5
    memory = min_bytes / (bw * eff)
    compute = flops / (device.peak_tflops["fp32"] * 1e12 * 0.6)
    if getattr(key, "dot", False):  # tensor-core windows: every block-diagonal tile's multiply-adds
        pixels = p.pixels if family.direction == "bwd_data" else p.out_pixels
        compute = 2.0 * p.N * pixels * p.K * key.block_c * p.taps / (device.peak_tflops[p.dtype.value] * 1e12 * TC_EFFICIENCY)
    if family.direction == "bwd_weight":
        return _bwd_weight_ms(key, p, arch, device, min_bytes, bw)
    else:
        programs = math.prod(family.grid(key, p))
        if programs < arch.sm_count:
            memory *= arch.sm_count / programs
    taps = p.taps / math.prod(p.stride) if family.direction == "bwd_data" else p.taps  # per stride phase
    if isinstance(key, DwWindowKey):  # sliding window: loop cost per source column load, not per tap
        d3 = p.as_3d()["filter"]
        taps = d3[0] * d3[1] * key.row_loads(d3[2]) / key.block_w
    overhead = math.ceil(programs / arch.sm_count) * taps * 0.02e-6
    ms = (max(memory, compute) + overhead) * 1e3 + LAUNCH_MS
    # The general channel multiplier divides every channel index (no vector loads, extra
    # integer work): measured on an H200, ConvNeXt 7x7 rows ran at 18-32 GB/s on such instances
    # while multiplier-one 3x3 instances reached 450-1400 GB/s. Penalised in every regime, so it
    # never ties with a multiplier-one instance when the estimate is compute-bound. Multiplier-two
    # kernels load contiguous channel vectors like multiplier one (docs/conv.md): no penalty.
    ms *= 1.0 if _vectorised(key) else 2.0
    if getattr(key, "unit_stride", False):
        ms *= UNIT_STRIDE_FACTOR
    if key.block_h:
        ms *= SPATIAL_TILE_FACTOR
    return ms * _access_factor(key)


# Spatial tiles and patches (``block_h``, every direction) over consecutive-pixel tiles, from the
# forward sweep: the best swept spatial tile ran 1.18x faster than the best consecutive-pixel
# default tile on the suite's 17 bf16 depthwise rows (geomean, H200,
# benchmarks/results/dw_sweep_fwd_tiles_h200.jsonl.gz). The learned models correct it per direction.
SPATIAL_TILE_FACTOR = 1 / 1.18


# Tensor-core windows (gw_win_fwd, gw_win_bwd_data; gw_win_bwd_weight has the backward-weight model) issue small [block_h, block_c] x [block_c, block_c] products
# from registers: assumed to reach a quarter of the dense peak (not fitted; the model corrects it).
TC_EFFICIENCY = 0.25


def _access_factor(key) -> float:
    return {"a16": 1.0, "v4": 1.2, "i32": 1.5, "generic": 2.5}[key.access.value]


# Backward-weight loop cost in cycles per pixel step of a program: a fixed part and a part per
# accumulator element (taps per pass × tile elements per thread). Fitted by grid search to rank
# the 162 swept instances on the suite's 20 depthwise rows (H200,
# benchmarks/results/dw_sweep_bwd_weight_passes_r4_h200.jsonl.gz): picks at 0.85 of the best
# (geomean), where the one-tap-per-pass model before reached 0.68.
BW_STEP_CYCLES = 200
BW_CYCLES_PER_ACC = 16
BW_OTHER_REGS = 96


def _bwd_weight_ms(key, p, arch: ArchSpec, device: DeviceSpec, min_bytes: float, bw: float) -> float:
    """Backward-weight: dy and x are read once per pass of ``unroll`` taps (memory); the pixel
    loop issues a step per BLOCK_P pixels whose cost grows with the accumulators per thread,
    and registers bound the programs resident per SM (compute; sliding windows hold a tile per
    tap and per dy column of block_h × block_c); the fp32 partials (block_c values per tap, block_c ×
    C/G for tensor-core windows) are written and read once.
    Not fitted to sliding-window measurements yet. Windows with ``filter_rows`` n hold n tiles per
    tap, and the memory term counts their x and dy reads per filter row, as with one (an upper
    bound: dy is read once per n rows). The clock is the fp32 peak over 256 FLOPs per SM per
    cycle (datasheet)."""
    rows = getattr(key, "filter_rows", 1)
    programs_per_split = key.passes(p)
    passes = programs_per_split * rows
    threads = 32 * key.num_warps
    per_thread = key.block_p * key.block_c / threads
    if getattr(key, "dot", False):  # tensor-core windows: one [block_c, block_c] tile per tap and row
        regs = key.unroll * rows * key.block_c ** 2 / threads + BW_OTHER_REGS
    elif isinstance(key, DwWindowKey):  # one [block_h, block_c] tile per tap and row, and per dy column
        regs = (key.unroll * rows + key.block_w + 2) * key.block_h * key.block_c / threads + BW_OTHER_REGS
    else:
        regs = (key.unroll + 2) * per_thread + BW_OTHER_REGS
    resident = max(1, min(arch.regs_per_sm // int(regs * threads), arch.max_warps_per_sm // key.num_warps))
    blocks = math.ceil(p.K / key.block_c)
    programs = blocks * key.split * programs_per_split
    steps = math.ceil(math.ceil(p.N * p.out_pixels / key.block_p) / key.split)
    clock = device.peak_tflops["fp32"] * 1e12 / (arch.sm_count * 256)
    waves = max(1.0, programs / (arch.sm_count * resident))
    compute = waves * steps * (BW_STEP_CYCLES + BW_CYCLES_PER_ACC * key.unroll * rows * per_thread) / clock
    memory = min_bytes * passes / bw
    per_channel = p.Cg if getattr(key, "dot", False) else 1  # a dot key's partial: block_c x C/G per tap
    partials = 2 * blocks * key.split * p.taps * key.block_c * per_channel * 4 / bw
    ms = (max(memory, compute) + partials) * 1e3 + LAUNCH_MS
    return ms * (1.0 if _vectorised(key) else 2.0) * _access_factor(key)


def _vectorised(key) -> bool:
    """Whether ``key`` loads channel vectors without dividing by the multiplier: multiplier one or
    two, or a tensor-core window."""
    return key.multiplier_one or key.multiplier_two or getattr(key, "dot", False)
