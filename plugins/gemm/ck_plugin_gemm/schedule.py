"""Tile counts and the stream-K schedule shared by the persistent family's stream-K tail
(``gemm_persistent`` keys with ``stream_k``) and the stream-K plugin's ``gemm_streamk``.

Stream-K (Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix
Multiplication on the GPU", PPoPP 2023): the K steps of a GEMM's tiles are shared out evenly
over a persistent grid, so the last wave of tiles no longer leaves SMs idle; a tile whose steps
land on several programs is combined through an fp32 workspace. "Data-parallel + stream-K"
(the paper's hybrid) runs whole waves of tiles first and shares out only the rest.
"""

from __future__ import annotations

import math

__all__ = ["tiles", "dp_tiles", "fixup_ms", "fixup_signature", "fixup_args"]


def tiles(key, p) -> int:
    """Output tiles of ``key`` (``block_m`` x ``block_n``) on problem ``p`` (``M`` x ``N``)."""
    return math.ceil(p.M / key.block_m) * math.ceil(p.N / key.block_n)


def dp_tiles(n_tiles: int, programs: int) -> int:
    """Of ``n_tiles`` on a grid of ``programs``, the tiles run data-parallel (whole K each) before
    the stream-K tail: all of them when they fill whole waves, else all but the last one to two
    waves' worth (at least ``programs`` tiles are left, so that the tail spans every program)."""
    if n_tiles % programs == 0:
        return n_tiles
    return max(0, n_tiles // programs - 1) * programs


def fixup_ms(split_tiles: int, programs: int, block_m: int, block_n: int, mem_bandwidth_gbps: float) -> float:
    """Estimated cost (ms) of combining split tiles: each program writes at most two fp32
    partial tiles and the combining program reads them (at the device's memory bandwidth), plus
    2 µs for the arrivals; 0 without split tiles. Not fitted to measurements."""
    if not split_tiles:
        return 0.0
    fixup_bytes = 2 * 2 * min(split_tiles, programs) * block_m * block_n * 4
    return fixup_bytes / (mem_bandwidth_gbps * 1e9) * 1e3 + 0.002


def fixup_signature(base: dict[str, str], extra_ints: dict[str, str]) -> dict[str, str]:
    """A kernel signature with the fix-up buffers: ``base`` (a gemm family's core signature,
    pointers first, ``UPCAST`` last) with ``ws_ptr`` (fp32 partial tiles) and ``lock_ptr`` (int32
    arrival counters) after its pointers, and ``extra_ints`` after its integers."""
    ptrs = {n: t for n, t in base.items() if n.endswith("_ptr")}
    ints = {n: t for n, t in base.items() if not n.endswith("_ptr") and n != "UPCAST"}
    return {**ptrs, "ws_ptr": "*fp32", "lock_ptr": "*i32", **ints, **extra_ints, "UPCAST": base["UPCAST"]}


def fixup_args(core: tuple, tensors, workspace: str, extra_ints: tuple) -> tuple:
    """Launch arguments in :func:`fixup_signature`'s order: ``core`` (a gemm family's core
    arguments, ``a, b, c, ...integers, upcast``) with the workspace ``workspace_<workspace>`` as
    fp32 and ``workspace_counters`` as int32 after C, and ``extra_ints`` before ``upcast``."""
    import torch

    a, b, c, *ints, upcast = core
    ws = tensors[f"workspace_{workspace}"].view(torch.float32)
    locks = tensors["workspace_counters"].view(torch.int32)
    return (a, b, c, ws, locks, *ints, *extra_ints, upcast)
