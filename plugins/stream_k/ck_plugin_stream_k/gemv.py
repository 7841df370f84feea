"""The ``gemm_gemv`` kernel family: small-M ("decode") GEMM, M <= ``rows`` (1 to 16), as GEMV.

Each program streams a [BLOCK_N, BLOCK_K] (or [BLOCK_K, BLOCK_N]) tile of B once per K step
and accumulates one fp32 row per row of A with CUDA-core FMAs: no padding of M to a tensor-core
tile, no shared memory. ``split_k`` programs share each column block's K range; their partial
rows are summed in split order by the last to arrive (deterministic). No alignment is assumed
and B is addressed with 64-bit offsets, so it serves unaligned K and N and column-major A too.
Roofline: at M rows each byte of B feeds M/2 (bf16) FMAs; up to 8 rows stays under half the
fp32 CUDA-core peak at HBM bandwidth (arch specs), 16 rows does not.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import attrs

from ckcore import DType, KernelFamily, KeyBase
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.features import wave_features
from ckcore.keys import boolean, enum_converter, int_in, member_of, power_of_two_in
from ck_plugin_gemm.epilogue import valid_epilogue, valid_out, variant_suffix
from ck_plugin_gemm.family import GemmMatch
from ck_plugin_gemm.problem import GemmProblem, Layout

__all__ = ["GemvKey", "GemvGemm"]

INT32_MAX = 2**31 - 1
LAUNCH_MS = 0.004


@attrs.frozen(kw_only=True)
class GemvKey(KeyBase):
    """dtype, layout, ``rows`` (the largest M served: one accumulator row each), the B tile
    (``block_n`` × ``block_k``), ``split_k`` (programs per column block along K), warps, stages."""

    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    layout: Layout = attrs.field(converter=enum_converter(Layout), validator=member_of(Layout))
    rows: int = attrs.field(validator=power_of_two_in(1, 16))
    block_n: int = attrs.field(validator=power_of_two_in(8, 512))
    block_k: int = attrs.field(validator=power_of_two_in(16, 512))
    split_k: int = attrs.field(default=1, validator=int_in(1, 64))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))
    epilogue: str = attrs.field(default="none", validator=valid_epilogue)
    batched: bool = attrs.field(default=False, validator=boolean)
    out_dtype: str = attrs.field(default="same", validator=valid_out)
    fast_accum: bool = attrs.field(default=False, validator=boolean)

    @property
    def name(self) -> str:
        return (f"gemm_gemv_{self.dtype.value}_{self.layout.value}_r{self.rows}_{self.block_n}x{self.block_k}"
                f"_k{self.split_k}_w{self.num_warps}_s{self.num_stages}" + variant_suffix(self))


# (rows, block_n, block_k, split_k, num_warps) per B layout: "c" (K contiguous) reads along K,
# "r" (N contiguous) along N. Not yet measured on a GPU: the `full` set only.
_CFG = {"c": [(r, 32, 256, s, 4) for r in (1, 2, 4, 8, 16) for s in (1, 4)],
        "r": [(r, 256, 32, s, 4) for r in (1, 2, 4, 8, 16) for s in (1, 4)]}


class GemvGemm(GemmMatch, KernelFamily):
    """GEMV-style small-M GEMM on CUDA cores, any alignment."""

    name = "gemm_gemv"
    op = "gemm"
    key_cls = GemvKey
    template_package = "ck_plugin_stream_k"
    template = "gemm_gemv.py.j2"
    batches = False

    def check(self, key: GemvKey, arch: ArchSpec) -> list[str]:
        reasons = []
        threads = 32 * key.num_warps
        if threads > arch.max_threads_per_block:
            reasons.append(f"num_warps {key.num_warps} exceeds {arch.max_threads_per_block} threads per block")
        regs = (key.block_n * key.block_k + key.rows * key.block_n) / threads
        if regs > 160:
            reasons.append(f"{regs:.0f} fp32 registers per thread for the B tile and accumulators > 160")
        return reasons

    def supports(self, key: GemvKey, p: GemmProblem) -> str | None:
        reason = self.match_reason(key, p)
        if reason:
            return reason
        if p.M > key.rows:
            return f"M={p.M} > rows={key.rows}"
        if p.M * p.ldc > INT32_MAX or (p.layout.a == "r" and p.M * p.lda > INT32_MAX):
            return "A or C spans beyond 32-bit offsets"
        return None

    def signature(self, key: GemvKey) -> dict[str, str]:
        ptr = f"*{key.dtype.triton}"
        sig = {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr}
        if key.split_k > 1:
            sig.update({"ws_ptr": "*fp32", "lock_ptr": "*i32"})
        sig.update({n: "i32" for n in ("M", "N", "K", "lda", "ldb", "ldc")})
        sig["UPCAST"] = "constexpr"
        return {**sig, **self.variant_signature(key, ptr)}

    def constexprs(self, key: GemvKey) -> dict[str, Any]:
        return {"UPCAST": False}

    def compile_options(self, key: GemvKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    def workspaces(self, key: GemvKey, p: GemmProblem) -> dict[str, int]:
        """With ``split_k > 1``: ``partials`` (fp32 rows per column block and split; scratch)
        and ``counters`` (one int32 arrival count per column block, left at zero)."""
        if key.split_k == 1:
            return {}
        blocks = math.ceil(p.N / key.block_n)
        return {"partials": blocks * key.split_k * key.rows * key.block_n * 4, "counters": 4 * blocks}

    def grid(self, key: GemvKey, p: GemmProblem) -> tuple[int, int, int]:
        return (math.ceil(p.N / key.block_n), key.split_k, 1)

    def launch_args(self, key: GemvKey, p: GemmProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        import torch

        args = [tensors["a"], tensors["b"], tensors["c"]]
        if key.split_k > 1:
            args += [tensors["workspace_partials"].view(torch.float32), tensors["workspace_counters"].view(torch.int32)]
        return (*args, p.M, p.N, p.K, p.lda, p.ldb, p.ldc, False, *self.variant_args(key, p, tensors))

    def kernel_sets(self):
        def full(arch: ArchSpec):
            keys = [GemvKey(dtype=d, layout=lay, rows=r, block_n=bn, block_k=bk, split_k=s, num_warps=w)
                    for d in DType for lay in Layout for r, bn, bk, s, w in _CFG[lay.b]]
            return [k for k in keys if not self.check(k, arch)]

        return {"full": full}

    def estimate_ms(self, key: GemvKey, p: GemmProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        """max(bytes / HBM bandwidth, FMAs / fp32 CUDA-core peak) / occupancy + launch. Bytes:
        A, B and C once (plus fp32 partials with split-K); FMAs: ``rows`` per element of B
        (the padded rows are skipped by masking, not by the FMA count). Occupancy falls when
        there are fewer than two programs per SM. Not fitted to measurements yet."""
        item = p.dtype.itemsize
        nbytes = (p.M * p.K + p.K * p.N + p.M * p.N) * item
        if key.split_k > 1:
            nbytes += 2 * key.split_k * key.rows * p.N * 4
        programs = math.ceil(p.N / key.block_n) * key.split_k
        occupancy = min(1.0, programs / (2 * arch.sm_count))
        memory = nbytes / (device.mem_bandwidth_gbps * 1e9)
        compute = 2.0 * key.rows * p.N * p.K / (device.peak_tflops["fp32"] * 1e12)
        return max(memory, compute) / occupancy * 1e3 + LAUNCH_MS

    def features(self, key: GemvKey) -> dict[str, float]:
        return {"rows": key.rows, "block_n": key.block_n, "block_k": key.block_k, "split_k": key.split_k,
                "num_warps": key.num_warps, "num_stages": key.num_stages}

    def pair_features(self, key: GemvKey, p: GemmProblem, arch: ArchSpec) -> dict[str, float]:
        programs = math.ceil(p.N / key.block_n) * key.split_k
        return {**wave_features(programs, arch.sm_count), "k_steps": math.ceil(p.K / key.block_k / key.split_k),
                "row_waste": key.rows / p.M - 1.0}
