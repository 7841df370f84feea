"""The cost model the ``rules`` heuristic ranks ``gemm_tiled`` instances with.

estimate = max(compute, memory) + launch, where
- compute: the busiest SM's tiles (⌈tiles / SMs⌉) × 2·BM·BN·K_padded at the SM's share of the
  device's dense peak (arch_specs, datasheet) times a tile efficiency that grows with the tile
  (larger tiles reuse operands more; below 64 rows Hopper's warpgroup MMA is not used);
- memory: the larger of the minimum traffic at HBM bandwidth (which falls off when fewer than
  3/4 of the SMs are busy) and the operand traffic of every tile (each tile reads (BM+BN)·K
  elements, mostly from L2) at a per-SM share of bandwidth;
- plus a per-K-iteration overhead.
Figures are rough; they only need to order candidates sensibly.
"""

from __future__ import annotations

import math

from ckcore import DType
from ckcore.arch import ArchSpec, DeviceSpec

from .keys import GemmKey
from .problem import GemmProblem

__all__ = ["estimate_ms"]

LAUNCH_MS = 0.004
L2_OVER_HBM = 3.5


def _tile_efficiency(key: GemmKey, arch: ArchSpec) -> float:
    area = key.block_m * key.block_n
    eff = 0.85 * min(1.0, (area / (128 * 256)) ** 0.3)
    if arch.wgmma and key.block_m < 64:
        eff *= 0.55
    if not key.aligned:
        eff *= 0.5
    if getattr(key, "warp_specialize", False):  # measured: +10-30% on large tiles (H200)
        eff = min(1.0, eff * 1.15)
    return eff


def estimate_ms(key: GemmKey, p: GemmProblem, arch: ArchSpec, device: DeviceSpec, split_k: int = 1,
                balanced: bool = False) -> float:
    """Estimated run time in ms of ``key`` on ``p`` (see the module docstring). With
    ``split_k > 1`` each tile's K range is shared by that many programs, which also write and
    read an fp32 partial tile each. ``balanced``: the work is spread evenly over the SMs
    (stream-K): the busiest SM gets tiles / SMs, not ⌈tiles / SMs⌉, and every SM is busy."""
    item = p.dtype.itemsize
    peak = device.peak_tflops[{"fp32": "tf32", "fp8e4m3": "fp8", "fp8e5m2": "fp8"}.get(p.dtype.value, p.dtype.value)] * 1e12
    bw = device.mem_bandwidth_gbps * 1e9
    tiles = math.ceil(p.M / key.block_m) * math.ceil(p.N / key.block_n) * split_k * p.batch
    k_pad = math.ceil(math.ceil(p.K / key.block_k) / split_k) * key.block_k
    per_sm = tiles / arch.sm_count if balanced else math.ceil(tiles / arch.sm_count)
    compute = per_sm * 2.0 * key.block_m * key.block_n * k_pad / (peak / arch.sm_count * _tile_efficiency(key, arch))
    busy = arch.sm_count if balanced else min(tiles, arch.sm_count)
    min_bytes = (p.M * p.K + p.K * p.N + p.M * p.N) * item * p.batch
    if split_k > 1:  # partial tiles written and read back once, in fp32
        min_bytes += 2 * split_k * min(p.M, key.block_m * math.ceil(p.M / key.block_m)) * p.N * 4
    # Out-of-range rows and columns of a tile are masked or zero-filled: no traffic.
    tile_bytes = per_sm * (min(key.block_m, p.M) + min(key.block_n, p.N)) * k_pad * item
    per_sm_bw = bw * L2_OVER_HBM / arch.sm_count * min(1.3, arch.sm_count / busy)
    # HBM bandwidth needs most SMs issuing loads: it falls off when fewer are busy.
    hbm_bw = bw * min(1.0, busy / (0.75 * arch.sm_count))
    # Pipeline fill and per-iteration overhead of the K loop.
    iters = k_pad // key.block_k
    latency = per_sm * iters * 0.1e-6 * (1.0 if key.num_stages >= 3 else 1.5)
    memory = max(min_bytes / hbm_bw, tile_bytes / per_sm_bw)
    return (max(compute, memory) + latency) * 1e3 + LAUNCH_MS
