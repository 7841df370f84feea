"""Cost model of the direct depthwise kernels for the ``rules`` heuristic.

Depthwise convolution does 2·taps FLOPs per output (and per input for backward-data), so it is
bound by memory or by CUDA-core arithmetic, never by tensor cores:
estimate = max(minimum bytes / HBM bandwidth, FLOPs / fp32 CUDA-core peak) / efficiency
           + per-tap loop overhead + launch,
with peaks from the arch specs (datasheet). Efficiency falls for tiles that load few bytes per
row (narrow channel blocks in channels-last, narrow pixel blocks when contiguous).
"""

from __future__ import annotations

import math

from ckcore.arch import ArchSpec, DeviceSpec

__all__ = ["estimate_ms"]

LAUNCH_MS = 0.004
# Backward-data without the per-tap division by the stride (unit_stride), over its general twin:
# geomean of the measured ratio on the suite's stride-1 depthwise rows (H200,
# benchmarks/results/dw_sweep_bwd_data_h200.jsonl.gz).
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
    if family.direction == "bwd_weight":
        programs = math.ceil(p.K / key.block_c) * key.split
        memory *= p.taps ** 0.5  # dy re-read per tap (mostly from L2)
        memory += 2 * programs * p.taps * key.block_c * 4 / bw
        if programs < arch.sm_count:
            memory *= arch.sm_count / programs
    else:
        programs = math.prod(family.grid(key, p))
        if programs < arch.sm_count:
            memory *= arch.sm_count / programs
    overhead = math.ceil(programs / arch.sm_count) * p.taps * 0.02e-6
    ms = (max(memory, compute) + overhead) * 1e3 + LAUNCH_MS
    # The general channel multiplier divides every channel index (no vector loads, extra
    # integer work): measured on an H200, ConvNeXt 7x7 rows ran at 18-32 GB/s on such instances
    # while multiplier-one 3x3 instances reached 450-1400 GB/s. Penalised in every regime, so it
    # never ties with a multiplier-one instance when the estimate is compute-bound.
    ms *= 1.0 if key.multiplier_one else 2.0
    if getattr(key, "unit_stride", False):
        ms *= UNIT_STRIDE_FACTOR
    return ms * {"a16": 1.0, "i32": 1.5, "generic": 2.5}[key.access.value]
