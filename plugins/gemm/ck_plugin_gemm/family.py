"""The ``gemm_tiled`` kernel family: one output tile per program, grouped-M ordering, a
pipelined K loop of ``tl.dot`` with fp32 accumulation (tf32 for fp32 inputs)."""

from __future__ import annotations

import math
from typing import Any, Mapping

from ckcore import DType, KernelFamily
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.features import wave_features

from .epilogue import GemmEpilogueMixin, out_type
from .keys import GemmKey
from .problem import GemmProblem
from . import sets

__all__ = ["TiledGemm", "smem_bytes"]

INT32_MAX = 2**31 - 1


def smem_bytes(key: GemmKey) -> int:
    """Shared memory of the operand pipeline: stages · (BM·BK + BK·BN) · bytes per element."""
    return key.num_stages * (key.block_m + key.block_n) * key.block_k * key.dtype.itemsize


def _contiguous_sizes(key: GemmKey) -> tuple[str, ...]:
    a = "K" if key.layout.a == "r" else "M"
    b = "N" if key.layout.b == "r" else "K"
    return tuple(sorted({a, b, "N"}))


MAX_BATCH = 65535  # grid axis 1


class GemmMatch(GemmEpilogueMixin):
    """What every gemm family shares: an instance serves one (dtype, layout), its ``bucket``,
    and one epilogue and batching (:class:`~ck_plugin_gemm.epilogue.GemmEpilogueMixin`)."""

    def bucket(self, key):
        """(dtype, layout): ``supports`` rejects every problem of another."""
        return key.dtype, key.layout

    def match_reason(self, key, p: GemmProblem) -> str | None:
        """Why ``key``'s dtype, layout, epilogue or batching is not ``p``'s, or None."""
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        if key.layout is not p.layout:
            return f"layout {key.layout.value} != {p.layout.value}"
        if p.batch > MAX_BATCH:
            return f"batch={p.batch} > {MAX_BATCH} (one grid axis)"
        return self.variant_reason(key, p)

    def variant_divisible(self, key) -> tuple[str, ...]:
        """The epilogue pointers and batch strides an aligned kernel may assume divisible by 16
        (``supports`` checks the strides; ``check_tensors`` the pointers, against ``ptr_align``)."""
        return tuple(n for n in self.variant_signature(key, "*ptr") if n.endswith("_ptr") or n.startswith("stride_"))


class TiledGemm(GemmMatch, KernelFamily):
    """Tiled GEMM for every layout and dtype; ``aligned=False`` keys are the generic fallback."""

    name = "gemm_tiled"
    op = "gemm"
    key_cls = GemmKey
    template_package = "ck_plugin_gemm"
    template = "gemm_tiled.py.j2"
    halves = True  # the template can split the tile's rows into two accumulators (GemmKey.halves)

    def check(self, key: GemmKey, arch: ArchSpec) -> list[str]:
        """Static validity on ``arch``: operand pipeline fits shared memory, tensor cores take the
        dtype, the tile meets the MMA minimum K, accumulators fit the register file; ``halves``
        only in this family, with halves of at least 64 rows (a warpgroup MMA's M) and, for fp8
        with promoted accumulation, BLOCK_K <= 128 (a half promotes once per K step)."""
        reasons = []
        if key.halves:
            if not type(self).halves:
                reasons.append(f"halves: family {self.name} has no two-accumulator tile")
            if key.block_m < 128:
                reasons.append(f"halves needs block_m >= 128 (halves of >= 64 rows), got {key.block_m}")
            if key.dtype.value.startswith("fp8") and not key.fast_accum and key.block_k > 128:
                reasons.append(f"halves with promoted fp8 accumulation needs block_k <= 128, got {key.block_k}")
        tc = "tf32" if key.dtype is DType.FP32 else key.dtype.value
        if tc not in arch.tensor_core_dtypes:
            reasons.append(f"dtype {key.dtype.value}: {arch.arch} tensor cores take {', '.join(arch.tensor_core_dtypes)}")
        smem = smem_bytes(key)
        if smem > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem} B > {arch.smem_per_block_bytes} B per block on {arch.arch}")
        if key.block_k < arch.mma_min_k.get(key.dtype.value, 16):
            reasons.append(f"block_k {key.block_k} < MMA minimum K {arch.mma_min_k[key.dtype.value]}")
        if key.num_warps * 32 > arch.max_threads_per_block:
            reasons.append(f"num_warps {key.num_warps} exceeds {arch.max_threads_per_block} threads per block")
        mma_warps = self.mma_warps(key)
        acc_regs = key.block_m * key.block_n // (32 * mma_warps)
        if acc_regs > 128:
            reasons.append(f"{acc_regs} fp32 accumulator registers per thread > 128 (tile too large for {mma_warps} MMA warps)")
        if key.block_m * key.block_n < 32 * key.num_warps * 4:
            reasons.append(f"tile {key.block_m}x{key.block_n} too small for {key.num_warps} warps")
        return reasons

    def mma_warps(self, key: GemmKey) -> int:
        """Warps that hold the accumulator tile."""
        return key.num_warps

    def supports(self, key: GemmKey, p: GemmProblem) -> str | None:
        reason = self.match_reason(key, p)
        if reason or not key.aligned:
            return reason
        if p.ptr_align != 16:
            return f"needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
        for field in ("lda", "ldb", "ldc") + (("stride_a", "stride_b", "stride_c") if p.batch > 1 else ()):
            if getattr(p, field) % 16:
                return f"needs {field} % 16 == 0 ({field}={getattr(p, field)})"
        for dim in _contiguous_sizes(key):
            if getattr(p, dim) % 16:
                return f"needs {dim} % 16 == 0 (contiguous dimension; {dim}={getattr(p, dim)})"
        spans = {"a": (p.M if p.layout.a == "r" else p.K) * p.lda, "b": (p.K if p.layout.b == "r" else p.N) * p.ldb, "c": p.M * p.ldc}
        for name, span in spans.items():
            if span > INT32_MAX:
                return f"{name} spans {span} elements, beyond 32-bit offsets"
        return None

    def signature(self, key: GemmKey) -> dict[str, str]:
        """The family's own parameters, then the epilogue's and the batch's."""
        return {**self.core_signature(key), **self.variant_signature(key, f"*{out_type(key).triton}")}

    def core_signature(self, key: GemmKey) -> dict[str, str]:
        ptr = f"*{key.dtype.triton}"
        sig = {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": f"*{out_type(key).triton}"}
        sig.update({n: "i32" for n in ("M", "N", "K", "lda", "ldb", "ldc")})
        sig["UPCAST"] = "constexpr"
        return sig

    def constexprs(self, key: GemmKey) -> dict[str, Any]:
        return {"UPCAST": False}

    def divisible_by_16(self, key: GemmKey) -> tuple[str, ...]:
        if not key.aligned:
            return ()
        return ("a_ptr", "b_ptr", "c_ptr", "lda", "ldb", "ldc") + _contiguous_sizes(key) + self.variant_divisible(key)

    def compile_options(self, key: GemmKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    def grid(self, key: GemmKey, p: GemmProblem) -> tuple[int, int, int]:
        """One program per output tile (axis 0) and per matrix of the batch (axis 1)."""
        return (math.ceil(p.M / key.block_m) * math.ceil(p.N / key.block_n), p.batch, 1)

    def launch_args(self, key: GemmKey, p: GemmProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        return self.core_args(key, p, tensors, interpret=interpret) + self.variant_args(key, p, tensors)

    def core_args(self, key: GemmKey, p: GemmProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        # The interpreter dots bf16 as integers; upcast there (TRITON_NOTES §5.1).
        upcast = interpret and key.dtype is DType.BF16
        return (tensors["a"], tensors["b"], tensors["c"], p.M, p.N, p.K, p.lda, p.ldb, p.ldc, upcast)

    def kernel_sets(self):
        return {"default": sets.default_set, "full": sets.full_set}

    def estimate_ms(self, key: GemmKey, p: GemmProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        from .rules import estimate_ms

        return estimate_ms(key, p, arch, device)

    def pair_features(self, key: GemmKey, p: GemmProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs, SM waves and the last wave's fill, padding waste of the tiles, K steps."""
        split = getattr(key, "split_k", 1)
        tiles = math.ceil(p.M / key.block_m) * math.ceil(p.N / key.block_n)
        covered = key.block_m * math.ceil(p.M / key.block_m) * key.block_n * math.ceil(p.N / key.block_n)
        # A batch multiplies the programs and the work (the models were trained on batch 1).
        return {**wave_features(tiles * split * p.batch, arch.sm_count), "pad_waste": covered / (p.M * p.N) - 1.0,
                "k_steps": math.ceil(p.K / key.block_k / split), "log_flops": math.log(2.0 * p.M * p.N * p.K * p.batch)}

    def features(self, key: GemmKey) -> dict[str, float]:
        return {"block_m": key.block_m, "block_n": key.block_n, "block_k": key.block_k, "group_m": key.group_m,
                "num_warps": key.num_warps, "num_stages": key.num_stages, "aligned": float(key.aligned),
                "smem": smem_bytes(key), "halves": float(key.halves),
                "acc_per_thread": key.block_m * key.block_n / (32 * key.num_warps)}
