"""The ``gemm_persistent`` kernel family (Hopper and later): a persistent grid of one program per
SM (``programs_per_sm``: more) walking the output tiles in grouped order, operands and C through
TMA descriptors, and the epilogue on column subtiles.

The descriptors are made on the host and passed by value
(:attr:`PersistentGemmKey.host_descriptors`), except in the warp-specialised and stream-K kernels
and those with a column-major A and a fused epilogue, whose programs each make theirs once in
global scratch. Each program loops over tiles ``pid, pid + P, ...`` (P = the grid, at most the
SM count). With ``flatten`` Triton pipelines the tile loop and the K loop as
one, so the loads of the next tile are in flight during this tile's epilogue (the fused
epilogue's cost hides behind them); with ``warp_specialize`` it splits the loop into a TMA
producer and two MMA consumer warp groups instead (no flattening, no subtiling: Triton 3.6 does
not compile those together, ``../shared/TRITON_NOTES.md`` §1.3). ``subtile`` stores C in
column slices of 64 (less shared memory for the output staging, so a deeper pipeline fits).

``stream_k`` (``_sk``, 16-bit and fp32 types) adds a stream-K tail (:mod:`.schedule`): the grid
is always the SM count, whole waves of tiles run as above, and the K steps of the last one to
two waves' worth of tiles are shared out evenly over the programs, a tile split between programs
being combined through an fp32 workspace by the last to arrive, in program order (bitwise
reproducible; no program waits on another). It is for tile counts that fill the SMs badly: 1.45
waves of 128x256 tiles on the M = 1024 projections and on 3000 x 2000.

``tail_split`` (``_ts``) splits the tail instead: the tiles after the whole waves, when they fill
at most half a wave, run as two tiles of ``block_n / 2`` columns each (their own descriptors and
accumulators), so that twice as many programs share them and no partial sums are combined. On
3000 x 2000 with 128x256 tiles: one wave of 132 tiles, then 60 tiles as 120 halves. Offered only
after one to three whole waves (two with a fused epilogue), where it measured faster
(:meth:`supports`).

Same alignment rules as ``gemm_tma`` (16-byte aligned pointers and leading dimensions); one
matrix per launch (batched problems go to ``gemm_tiled`` and ``gemm_tma``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Mapping

import attrs

from ckcore import DType
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import boolean, int_in
from ckcore.tma import checked_views, host_descriptors

from .epilogue import c_inputs, fused_parts, out_type, variant_suffix
from .family import smem_bytes
from .schedule import dp_tiles, fixup_args, fixup_ms, fixup_signature, tiles
from .tma import TmaGemm, TmaGemmKey

__all__ = ["PersistentGemmKey", "PersistentGemm"]


@attrs.frozen(kw_only=True)
class PersistentGemmKey(TmaGemmKey):
    """A ``gemm_persistent`` kernel: the fields of :class:`TmaGemmKey` plus ``flatten`` (one
    software pipeline over tiles and K steps), ``subtile`` (C stored in 64-column slices) and
    ``programs_per_sm`` (the grid: that many programs per SM, ``_p{n}`` when above 1, so that two
    resident programs can overlap one's CUDA-core work with the other's MMAs; with ``halves``,
    fp8's promotion adds), ``stream_k`` (``_sk``: a stream-K tail after whole waves) and
    ``tail_split`` (``_ts``: the tail's tiles split in two along N)."""

    flatten: bool = attrs.field(default=True, validator=boolean)
    subtile: bool = attrs.field(default=False, validator=boolean)
    programs_per_sm: int = attrs.field(default=1, validator=int_in(1, 4))
    stream_k: bool = attrs.field(default=False, validator=boolean)
    tail_split: bool = attrs.field(default=False, validator=boolean)

    @property
    def host_descriptors(self) -> bool:
        """The TMA descriptors are made on the host and passed by value (the template's ``hd``)
        for all but the warp-specialised and stream-K kernels and those with a column-major A
        and a fused epilogue. Measured on an H100 (``docs/performance.md``, seventeenth session):
        a program making its three descriptors in global scratch (write, release and acquire
        fences) cost 2.1-3.7 µs per launch on 1024-4096 problems
        (``benchmarks/gemm_midsize_probe.py``), and host descriptors made the bf16 suite 1.35%
        faster (kernel time, same picks); but ``crr`` kernels with a fused bias + gelu ran
        0.875-0.942x as fast on M = 1024-2048 (twice, within 0.5%), so those keep device
        descriptors. Triton 3.6 does not compile host descriptors with warp specialization
        (``../shared/TRITON_NOTES.md`` §1.3); the stream-K kernels keep the device ones."""
        return not self.warp_specialize and not self.stream_k and not (self.layout.value[0] == "c" and self.epilogue != "none")

    @property
    def name(self) -> str:
        return (f"gemm_persistent_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_g{self.group_m}_w{self.num_warps}_s{self.num_stages}{'_ws' if self.warp_specialize else ''}"
                f"{'_flat' if self.flatten else ''}{'_sub' if self.subtile else ''}{'_h2' if self.halves else ''}"
                f"{f'_p{self.programs_per_sm}' if self.programs_per_sm > 1 else ''}{'_sk' if self.stream_k else ''}"
                f"{'_ts' if self.tail_split else ''}"
                + variant_suffix(self))


def subtiles(key: PersistentGemmKey) -> int:
    """Column slices of the C tile in the store (and the epilogue): 64 columns each when subtiling."""
    return max(1, key.block_n // 64) if key.subtile else 1


@functools.lru_cache(maxsize=1024)
def _descriptor_blocks(key: PersistentGemmKey) -> dict[str, tuple[str, tuple[int, int]]]:
    """Host descriptors of a :attr:`~PersistentGemmKey.host_descriptors` kernel by parameter name:
    (element type, block shape) of A, B and C (the template's ``a_hd``, ``b_hd``, ``c_hd``; with
    ``tail_split`` also ``b_hd_t`` and ``c_hd_t``, the split tail's half-width B and C tiles).
    Blocks: A [rows, BLOCK_K] (column-major A: [BLOCK_K, rows]; rows = BLOCK_M, or BLOCK_M / 2
    with ``halves``), B [BLOCK_K, bn] (column-major: [bn, BLOCK_K]), C [rows, bn / slices]."""
    rows = key.block_m // (2 if key.halves else 1)
    elem, out = key.dtype.triton, out_type(key).triton

    def bc(bn: int, slices: int) -> tuple:
        b = (key.block_k, bn) if key.layout.value[1] == "r" else (bn, key.block_k)
        return (elem, b), (out, (rows, bn // slices))

    a = (key.block_k, rows) if key.layout.value[0] == "c" else (rows, key.block_k)
    b, c = bc(key.block_n, subtiles(key))
    blocks = {"a_hd": (elem, a), "b_hd": b, "c_hd": c}
    if key.tail_split:
        blocks["b_hd_t"], blocks["c_hd_t"] = bc(key.block_n // 2, max(1, subtiles(key) // 2))
    return blocks


@functools.lru_cache(maxsize=4096)
def _descriptor_views(key: PersistentGemmKey, p) -> tuple:
    """(tensor, shape, strides, block) of each descriptor of :func:`_descriptor_blocks`, in its
    order: A [M, K] or, column-major, [K, M]; B [K, N] or [N, K]; C [M, N]; leading dimensions
    lda, ldb, ldc (memoised: a launch only wraps the tensors)."""
    views = {"a": ([p.K, p.M] if key.layout.value[0] == "c" else [p.M, p.K], p.lda),
             "b": ([p.K, p.N] if key.layout.value[1] == "r" else [p.N, p.K], p.ldb),
             "c": ([p.M, p.N], p.ldc)}
    return checked_views((name[0], views[name[0]][0], [views[name[0]][1], 1], block,
                          (out_type(key) if name[0] == "c" else key.dtype).itemsize)
                         for name, (_, block) in _descriptor_blocks(key).items())


class PersistentGemm(TmaGemm):
    """Persistent TMA GEMM: one program per SM, tiles in grouped order."""

    name = "gemm_persistent"
    key_cls = PersistentGemmKey
    template = "gemm_persistent.py.j2"
    batches = False
    halves = True

    def check(self, key: PersistentGemmKey, arch: ArchSpec) -> list[str]:
        reasons = [r for r in super().check(key, arch) if "pipeline + output tile" not in r]
        if key.warp_specialize and key.flatten:
            reasons.append("warp_specialize with flatten: Triton 3.6 silently drops the specialization")
        if key.warp_specialize and key.subtile:
            reasons.append("warp_specialize with subtile: Triton 3.6 fails to compile the split epilogue")
        if key.subtile and key.block_n // 64 not in (2, 4):
            reasons.append(f"subtile needs block_n 128 or 256 (64-column slices), got {key.block_n}")
        staging = key.block_m // (2 if key.halves else 1) * key.block_n // subtiles(key) * out_type(key).itemsize
        # Loading C-shaped epilogue tensors (C_in, D) into the accumulator's layout takes a
        # conversion buffer: with them Triton 3.6 asked for 245,784-245,824 B on the three 32K-element
        # tiles of the default set (12 compile failures on an H200, 2026-11-25), i.e. 32 KB per
        # 128 tile rows beyond pipeline + staging.
        convert = 32768 * (key.block_m // 128) if c_inputs(key.epilogue) else 0
        if smem_bytes(key) + staging + convert > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem_bytes(key) + staging + convert} B (pipeline + output staging"
                           f"{' + epilogue layout conversion' if convert else ''}) > {arch.smem_per_block_bytes} B")
        if key.halves and key.warp_specialize:
            reasons.append("halves with warp_specialize: unvalidated (in a probe, Triton 3.6 wrote wrong results for some)")
        if key.stream_k:
            if not isinstance(key.dtype, DType):
                reasons.append(f"stream_k with {key.dtype.value}: partial tiles are combined in fp32 (16-bit and fp32 inputs only)")
            if key.warp_specialize or key.halves or key.programs_per_sm > 1:
                reasons.append("stream_k with warp_specialize, halves or programs_per_sm > 1: not implemented")
        if key.tail_split:
            if key.stream_k or key.warp_specialize or key.halves or key.programs_per_sm > 1:
                reasons.append("tail_split with stream_k, warp_specialize, halves or programs_per_sm > 1: not implemented")
            if key.block_n < 64:
                reasons.append(f"tail_split needs block_n >= 64 (halves of 32 columns or more), got {key.block_n}")
        need = key.programs_per_sm * (smem_bytes(key) + staging + convert)
        if key.programs_per_sm > 1 and need > arch.smem_per_sm_bytes:
            reasons.append(f"programs_per_sm {key.programs_per_sm}: {need} B of shared memory > {arch.smem_per_sm_bytes} B per SM")
        return reasons

    def core_signature(self, key: PersistentGemmKey) -> dict[str, str]:
        sig = super().core_signature(key)
        if key.stream_k:
            return fixup_signature(sig, {"PROGRAMS": "i32", "DP_TILES": "i32"})
        upcast = sig.pop("UPCAST")
        descs = {name: f"tensordesc<{ty}[{', '.join(map(str, block))}]>"
                 for name, (ty, block) in _descriptor_blocks(key).items()} if key.host_descriptors else {}
        return {**sig, "PROGRAMS": "i32", **({"DP_TILES": "i32"} if key.tail_split else {}), **descs, "UPCAST": upcast}

    def divisible_by_16(self, key: PersistentGemmKey) -> tuple[str, ...]:
        return super().divisible_by_16(key) + (("ws_ptr", "lock_ptr") if key.stream_k else ())

    def core_args(self, key: PersistentGemmKey, p, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        core = super().core_args(key, p, tensors, interpret=interpret)
        programs = self._programs(key, p)
        if key.stream_k:
            return fixup_args(core, tensors, "partials", (programs, dp_tiles(tiles(key, p), programs)))
        *args, upcast = core
        # The tensors' data pointers are the matrices' first elements: the GEMM op's tensor
        # checks, staging and the pointwise-convolution views all guarantee it.
        descs = host_descriptors(_descriptor_views(key, p), tensors) if key.host_descriptors else ()
        if key.tail_split:
            return (*args, programs, self._whole_wave_tiles(key, p), *descs, upcast)
        return (*args, programs, *descs, upcast)

    def workspaces(self, key: PersistentGemmKey, p) -> dict[str, int]:
        """With ``stream_k``: ``partials``, two fp32 tiles per program (the first and last tile of
        its share; scratch), and ``counters``, one int32 arrival count per stream-K tile, left
        at zero."""
        if not key.stream_k:
            return super().workspaces(key, p)
        return {"partials": self.sm_count * 2 * key.block_m * key.block_n * 4,
                "counters": 4 * max(1, self._tail_tiles(key, p))}

    def grid(self, key: PersistentGemmKey, p) -> tuple[int, int, int]:
        return (self._programs(key, p), 1, 1)

    def _programs(self, key: PersistentGemmKey, p) -> int:
        """The grid: programs_per_sm per SM, at most one per tile; with ``stream_k`` the SM
        count whatever the tiles (fewer tiles than SMs are shared out by K steps)."""
        if key.stream_k:
            return self.sm_count
        return min(self.sm_count * key.programs_per_sm, tiles(key, p))

    def _whole_wave_tiles(self, key: PersistentGemmKey, p) -> int:
        """Tiles in the whole waves of a ``tail_split`` key, before its split tail."""
        n_tiles = tiles(key, p)
        return n_tiles - n_tiles % self.sm_count

    #: Whole waves of tiles before a split tail: {fused epilogue: (fewest, most)}. Measured on an
    #: H100 (benchmarks/results/tail_split_h100.jsonl.gz, each 128x256 tile against its twin):
    #: after one to three whole waves the split made plain problems 1.01-1.17x faster (12 pairs);
    #: with a fused bias + gelu, 0.75-1.06x after one wave, 1.05-1.07x after two, 0.99-1.02x
    #: after three (and in a bench 0.95x, benchmarks/results/bench_gemm_bias_gelu_new_ab3_h100.jsonl);
    #: after 23 or more waves 0.93-1.17x either way, where the bench lost by the model's picks
    #: (benchmarks/results/bench_gemm_bf16_m1024_ts_ts_h100x4.jsonl).
    TAIL_SPLIT_WAVES = {False: (1, 3), True: (2, 2)}

    def supports(self, key: PersistentGemmKey, p) -> str | None:
        """The TMA family's rules; a ``tail_split`` key also needs a tail of at most half a wave
        after one to three whole waves of tiles (two with a fused epilogue:
        :attr:`TAIL_SPLIT_WAVES`)."""
        reason = super().supports(key, p)
        if reason is None and key.tail_split:
            n_tiles, fused = tiles(key, p), fused_parts(p.epilogue)
            waves, tail = divmod(n_tiles, self.sm_count)
            lo, hi = self.TAIL_SPLIT_WAVES[fused]
            if not (lo <= waves <= hi and 0 < 2 * tail <= self.sm_count):
                epilogue = "a fused epilogue" if fused else "a plain epilogue"
                span = f"{lo}" if lo == hi else f"{lo} to {hi}"
                reason = (f"tail_split needs {span} whole waves of {self.sm_count} tiles ({epilogue}) and a "
                          f"tail of at most half a wave: {n_tiles} tiles")
        return reason

    def _tail_tiles(self, key: PersistentGemmKey, p) -> int:
        """Tiles of a ``stream_k`` key's tail: those after its whole data-parallel waves."""
        n_tiles = tiles(key, p)
        return n_tiles - dp_tiles(n_tiles, self.sm_count)

    #: Programs at most: the SM count of the H100 SXM and H200 (arch spec ``sm_90``). The kernel
    #: takes the grid size as an argument, so another count is correct, only less balanced.
    sm_count = 132

    def kernel_sets(self):
        from . import sets

        return {"default": sets.persistent_default_set, "full": sets.persistent_full_set}

    def estimate_ms(self, key: PersistentGemmKey, p, arch: ArchSpec, device: DeviceSpec) -> float:
        """The tiled GEMM's estimate (``rules.estimate_ms``); with ``tail_split`` or ``stream_k``,
        with the work spread evenly over the SMs, plus for ``stream_k`` the fix-up
        (:func:`.schedule.fixup_ms`). Not fitted to this family yet. For ``tail_split`` this is
        optimistic by up to half a wave (the busiest SM runs the whole waves and a half tile);
        the shipped model was trained on it, so a correction needs new training too."""
        from .rules import estimate_ms

        if key.tail_split:
            return estimate_ms(key, p, arch, device, balanced=True)
        if not key.stream_k:
            return estimate_ms(key, p, arch, device)
        return (estimate_ms(key, p, arch, device, balanced=True)
                + fixup_ms(self._tail_tiles(key, p), self.sm_count, key.block_m, key.block_n, device.mem_bandwidth_gbps))

    def pair_features(self, key: PersistentGemmKey, p, arch: ArchSpec) -> dict[str, float]:
        """The tiled features; with ``stream_k``, also ``sk_tile_share``, the share of tiles in
        the stream-K tail (see :meth:`features` for why only then)."""
        out = super().pair_features(key, p, arch)
        if key.stream_k:
            out["sk_tile_share"] = self._tail_tiles(key, p) / tiles(key, p)
        if key.tail_split:
            n_tiles = tiles(key, p)
            out["ts_tile_share"] = n_tiles % self.sm_count / n_tiles
        return out

    def features(self, key: PersistentGemmKey) -> dict[str, Any]:
        """The TMA features, the persistent fields, and ``stream_k`` = 1 for keys with a tail.
        Keys without one leave both stream-K features out (missing, to LightGBM), so a model
        trained before the tail existed still matches the family: the stream-K instances are in
        the ``full`` set only, and the shipped model has no rows of them (their measurements
        are in ``benchmarks/datasets/gemm_stream_k_h200.jsonl.gz``)."""
        out = {**super().features(key), "persistent": 1.0, "flatten": float(key.flatten), "subtile": float(key.subtile),
               "programs_per_sm": float(key.programs_per_sm)}
        if key.stream_k:
            out["stream_k"] = 1.0
        if key.tail_split:
            out["tail_split"] = 1.0
        return out
