"""The ``gemm_persistent`` kernel family (Hopper and later): a persistent grid of one program per
SM (``programs_per_sm``: more) walking the output tiles in grouped order, operands through device-side TMA descriptors,
and the epilogue on column subtiles.

Each program creates its descriptors once and loops over tiles ``pid, pid + P, ...`` (P = the
grid, at most the SM count). With ``flatten`` Triton pipelines the tile loop and the K loop as
one, so the loads of the next tile are in flight during this tile's epilogue (the fused
epilogue's cost hides behind them); with ``warp_specialize`` it splits the loop into a TMA
producer and two MMA consumer warp groups instead (no flattening, no subtiling: Triton 3.6 does
not compile those together, ``../shared/TRITON_NOTES.md`` §1.3). ``subtile`` stores C in
column slices of 64 (less shared memory for the output staging, so a deeper pipeline fits).

Same alignment rules as ``gemm_tma`` (16-byte aligned pointers and leading dimensions); one
matrix per launch (batched problems go to ``gemm_tiled`` and ``gemm_tma``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import attrs

from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import boolean, int_in

from .epilogue import c_inputs, out_type, variant_suffix
from .family import smem_bytes
from .tma import TmaGemm, TmaGemmKey

__all__ = ["PersistentGemmKey", "PersistentGemm"]


@attrs.frozen(kw_only=True)
class PersistentGemmKey(TmaGemmKey):
    """A ``gemm_persistent`` kernel: the fields of :class:`TmaGemmKey` plus ``flatten`` (one
    software pipeline over tiles and K steps), ``subtile`` (C stored in 64-column slices) and
    ``programs_per_sm`` (the grid: that many programs per SM, ``_p{n}`` when above 1, so that two
    resident programs can overlap one's CUDA-core work with the other's MMAs; with ``halves``,
    fp8's promotion adds)."""

    flatten: bool = attrs.field(default=True, validator=boolean)
    subtile: bool = attrs.field(default=False, validator=boolean)
    programs_per_sm: int = attrs.field(default=1, validator=int_in(1, 4))

    @property
    def name(self) -> str:
        return (f"gemm_persistent_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_g{self.group_m}_w{self.num_warps}_s{self.num_stages}{'_ws' if self.warp_specialize else ''}"
                f"{'_flat' if self.flatten else ''}{'_sub' if self.subtile else ''}{'_h2' if self.halves else ''}"
                f"{f'_p{self.programs_per_sm}' if self.programs_per_sm > 1 else ''}" + variant_suffix(self))


def subtiles(key: PersistentGemmKey) -> int:
    """Column slices of the C tile in the store (and the epilogue): 64 columns each when subtiling."""
    return max(1, key.block_n // 64) if key.subtile else 1


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
        need = key.programs_per_sm * (smem_bytes(key) + staging + convert)
        if key.programs_per_sm > 1 and need > arch.smem_per_sm_bytes:
            reasons.append(f"programs_per_sm {key.programs_per_sm}: {need} B of shared memory > {arch.smem_per_sm_bytes} B per SM")
        return reasons

    def core_signature(self, key: PersistentGemmKey) -> dict[str, str]:
        sig = super().core_signature(key)
        upcast = sig.pop("UPCAST")
        return {**sig, "PROGRAMS": "i32", "UPCAST": upcast}

    def core_args(self, key: PersistentGemmKey, p, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        *args, upcast = super().core_args(key, p, tensors, interpret=interpret)
        return (*args, self._programs(key, p), upcast)

    def grid(self, key: PersistentGemmKey, p) -> tuple[int, int, int]:
        return (self._programs(key, p), 1, 1)

    def _programs(self, key: PersistentGemmKey, p) -> int:
        return min(self.sm_count * key.programs_per_sm, math.ceil(p.M / key.block_m) * math.ceil(p.N / key.block_n))

    #: Programs at most: the SM count of the H100 SXM and H200 (arch spec ``sm_90``). The kernel
    #: takes the grid size as an argument, so another count is correct, only less balanced.
    sm_count = 132

    def kernel_sets(self):
        from . import sets

        return {"default": sets.persistent_default_set, "full": sets.persistent_full_set}

    def estimate_ms(self, key: PersistentGemmKey, p, arch: ArchSpec, device: DeviceSpec) -> float:
        """The tiled GEMM's estimate (``rules.estimate_ms``); not fitted to this family yet."""
        from .rules import estimate_ms

        return estimate_ms(key, p, arch, device)

    def features(self, key: PersistentGemmKey) -> dict[str, Any]:
        return {**super().features(key), "persistent": 1.0, "flatten": float(key.flatten), "subtile": float(key.subtile),
                "programs_per_sm": float(key.programs_per_sm)}
