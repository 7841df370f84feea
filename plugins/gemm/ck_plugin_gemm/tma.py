"""The ``gemm_tma`` kernel family (Hopper and later): operands through TMA tensor descriptors.

Needs 16-byte aligned base pointers and leading dimensions that are multiples of 16 bytes;
sizes are free (TMA zero-fills out-of-bounds tiles). 32-bit coordinates.
"""

from __future__ import annotations

from typing import Any

import attrs

from ckcore.arch import ArchSpec
from ckcore.keys import boolean

from .epilogue import fused_parts, out_type, variant_suffix
from .family import INT32_MAX, TiledGemm, smem_bytes
from .keys import GemmKey
from .problem import GemmProblem

__all__ = ["TmaGemmKey", "TmaGemm"]


@attrs.frozen(kw_only=True)
class TmaGemmKey(GemmKey):
    """A ``gemm_tma`` kernel: the fields of :class:`GemmKey` (``aligned`` must stay true) and
    ``warp_specialize``: the K loop is split by Triton into a TMA producer warp group and
    two consumer warp groups (Triton's Hopper auto warp specialization; needs num_warps=4,
    runs 12 warps)."""

    warp_specialize: bool = attrs.field(default=False, validator=boolean)

    @property
    def name(self) -> str:
        return (f"gemm_tma_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_g{self.group_m}_w{self.num_warps}_s{self.num_stages}{'_ws' if self.warp_specialize else ''}"
                + variant_suffix(self))


class TmaGemm(TiledGemm):
    """Tiled GEMM whose operand and output tiles move through TMA."""

    name = "gemm_tma"
    key_cls = TmaGemmKey
    template = "gemm_tma.py.j2"
    halves = False

    def check(self, key: TmaGemmKey, arch: ArchSpec) -> list[str]:
        reasons = super().check(key, arch)
        if not arch.tma:
            reasons.append(f"{arch.arch} has no TMA (tensor memory accelerator)")
        if not key.aligned:
            reasons.append("aligned=False: TMA needs 16-byte aligned operands")
        if key.warp_specialize and key.num_warps != 4:
            reasons.append(f"warp_specialize needs num_warps=4 (Triton 3.6 on Hopper), got {key.num_warps}")
        if key.warp_specialize and key.num_stages > 3:
            # Measured on an H200 with Triton 3.6: 128x128x64, 5 stages, warp-specialised wrote
            # non-finite results (benchmarks/results/bench_gemm_h200_ws_s5_failure.jsonl).
            reasons.append(f"warp_specialize with num_stages={key.num_stages}: only <= 3 is validated (Triton 3.6 produced wrong results with 5)")
        # Output staging tile (BM x BN) shares shared memory with the operand pipeline.
        staging = key.block_m * key.block_n * out_type(key).itemsize
        if smem_bytes(key) + staging > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem_bytes(key) + staging} B (pipeline + output tile) > {arch.smem_per_block_bytes} B")
        return reasons

    def mma_warps(self, key: TmaGemmKey) -> int:
        # With warp specialization two consumer warp groups (8 warps) hold the accumulators.
        return 8 if key.warp_specialize else key.num_warps

    def supports(self, key: TmaGemmKey, p: GemmProblem) -> str | None:
        reason = self.match_reason(key, p)
        if reason:
            return reason
        if key.warp_specialize and p.epilogue != "none" and self.name == "gemm_tma":
            # Measured on an H200: these kernels ran 1.55x slower with a fused bias + gelu than
            # without it (geomean of 27 runs; the other families 1.03-1.14x), more than the
            # epilogue saves (benchmarks/results/epilogue_probe_h200.jsonl).
            return "warp-specialised gemm_tma kernels serve plain epilogues only (measured slow with a fused one)"
        if key.warp_specialize and self.name == "gemm_persistent" and fused_parts(p.epilogue):
            # Measured on an H200 (2026-11-25): on the 48 problems of the epilogue training
            # suite they support, never the fastest instance, 0.64x the best (geomean;
            # benchmarks/datasets/gemm_h200.jsonl.gz); on the bias-gelu suite the ones selected
            # ran 1.4-3.5x their plain twins. Dequantization scales alone stay allowed.
            return "warp-specialised gemm_persistent kernels serve dequantization scales only (measured slow with a fused epilogue)"
        if p.ptr_align != 16:
            return f"TMA needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
        for field in ("lda", "ldb", "ldc"):
            size = p.out.itemsize if field == "ldc" else p.dtype.itemsize
            if getattr(p, field) * size % 16:
                return f"TMA needs {field} * {size} B % 16 == 0 ({field}={getattr(p, field)})"
        if max(p.M, p.N, p.K, p.lda, p.ldb, p.ldc) > INT32_MAX:
            return "sizes beyond 32-bit TMA coordinates"
        if p.batch > 1:
            for field in ("stride_a", "stride_b", "stride_c"):
                size = p.out.itemsize if field == "stride_c" else p.dtype.itemsize
                if getattr(p, field) * size % 16:
                    return f"TMA needs {field} * {size} B % 16 == 0 ({field}={getattr(p, field)})"
        return None

    def divisible_by_16(self, key: TmaGemmKey) -> tuple[str, ...]:
        return ("a_ptr", "b_ptr", "c_ptr") + self.variant_divisible(key)

    def kernel_sets(self):
        from . import sets

        return {"default": sets.tma_default_set, "full": sets.tma_full_set}

    def features(self, key: TmaGemmKey) -> dict[str, Any]:
        return {**super().features(key), "tma": 1.0, "warp_specialize": float(key.warp_specialize)}
