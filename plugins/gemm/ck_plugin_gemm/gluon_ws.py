"""The ``gemm_gluon_ws`` kernel family (sm_90): fp8 GEMM with promoted accumulation, written in
Gluon (``triton.experimental.gluon``) with explicit warp specialisation.

Why a Gluon family: fp8 on Hopper accumulates in the tensor cores at reduced precision, and
``torch._scaled_mm`` (cuBLAS) without ``use_fast_accum`` adds the tensor cores' partial sums into
an fp32 total every 128 products. The plain-Triton kernels that do the same (``gemm_tiled`` /
``gemm_persistent`` with ``fast_accum=False``) wait for their MMAs before every add and reached
0.869 of ``torch._scaled_mm`` (``docs/performance.md``). Here a program is:

- a **producer** warp that walks the program's (tile, k-block) stream and fills a ring of
  ``num_stages`` shared-memory slots by TMA (A as two [BLOCK_M/2, BLOCK_K] halves, B^T as
  [BLOCK_N, BLOCK_K]), each slot guarded by a ``ready`` mbarrier (transaction bytes) and an
  ``empty`` one (two arrivals);
- two **consumer** warpgroups, each owning BLOCK_M/2 rows of the tile. Per k-block
  (BLOCK_K = 128: four chained m64nNk32 wgmmas, cuBLAS's promotion interval) a consumer runs the
  wgmmas into a fresh fp32 partial, waits for them, releases the slot and adds the partial into
  its fp32 total. The warpgroups meet only at the ring's barriers, so while one adds (or stores
  its part of C) the other's wgmmas keep the tensor cores busy. ``n_split`` = 2 (``_n2``) runs a
  tile's BLOCK_N columns as two halves one after the other (two totals of BLOCK_N/2 columns, one
  partial of BLOCK_N/2 alive at a time), which fits a 128x256 tile in the 232 registers a
  consumer thread gets (``setmaxnreg``; the launch asks for 168 a thread over 12 warps).

The grid is persistent (min(SMs, tiles) programs, tiles in grouped order); C leaves through TMA
stores from each consumer's staging buffer. Measured on an H100 (twenty-sixth session, the probe
``benchmarks/fp8_gluon_probe.py``, ``benchmarks/results/fp8_gluon_ws_probe_h100.jsonl``): 128x256
``_n2`` four stages 0.955 of ``torch._scaled_mm`` over the 68 fp8 rows of
``benchmarks/suites/gemm_fp8.jsonl``, 128x128 0.934; the best of four configurations per row
0.978; every output within the probe's bound.

Scope (``check`` and ``supports``): fp8 e4m3 / e5m2, layout ``rcr`` (both operands K-major, as
``torch._scaled_mm`` takes them), promoted accumulation only (``fast_accum=False``: the other
families reach 0.98 of cuBLAS with fast accumulation), no epilogue but dequantization scales, per
tensor (``sten``) or per row of A and column of B (``srow``), bf16 / fp16 / fp32 out, one matrix
per launch, the TMA alignment rules of ``gemm_tma`` (``supports`` is that family's).

In ``ckcore bench`` on an H100 (``docs/performance.md``, twenty-sixth session), as the retrained gemm
model picks it on every row: 1.021 of ``torch._scaled_mm`` over the fp8 suite (the plain-Triton
kernels before: 0.871), 1.045 with per-row scales (0.943).
Gluon kernels do not run in Triton's interpreter: the family is ``interpretable = False``, its
CPU tests compile it for sm_90a, and its results are checked on the GPU (``gpu`` tests).
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

import attrs

from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import int_in
from ckcore.tma import checked_views, host_descriptors

from .epilogue import out_type, variant_suffix
from .keys import GemmKey
from .quant import QuantType
from .schedule import tiles
from .family import TiledGemm
from .persistent import PersistentGemm
from .tma import TmaGemm

__all__ = ["GluonWsGemmKey", "GluonWsGemm"]

#: The launch's register budget per thread: 12 warps (4 + 4 + the producer's 1, allocated by
#: warpgroups) x 32 threads x 168 = 64512 of the 65536 registers of an SM.
MAXNREG = 168


@attrs.frozen(kw_only=True)
class GluonWsGemmKey(GemmKey):
    """A ``gemm_gluon_ws`` kernel: the :class:`GemmKey` fields (``num_warps`` is 4, the default
    partition's warpgroup; ``block_m`` 128, two consumer halves of 64 rows; ``block_k`` 128, the
    promotion interval) and ``n_split`` (1 or 2, ``_n2``: the tile's columns in two halves per
    consumer)."""

    n_split: int = attrs.field(default=1, validator=int_in(1, 2))

    @property
    def warp_specialize(self) -> bool:
        """Always: a producer warp and two consumer warpgroups (read by the TMA family's rules)."""
        return True

    @property
    def name(self) -> str:
        return (f"gemm_gluon_ws_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_g{self.group_m}_s{self.num_stages}{'_n2' if self.n_split == 2 else ''}" + variant_suffix(self))


@functools.lru_cache(maxsize=None)
def _layouts(key: GluonWsGemmKey) -> dict[str, tuple[str, tuple[int, int], str]]:
    """Per descriptor parameter: (Triton element type, block, the Gluon shared layout's repr that
    the kernel signature spells). A [64, BLOCK_K]; B^T [BLOCK_N, BLOCK_K]; C [64, BLOCK_N / n_split]."""
    import triton.language as tl
    from triton.experimental.gluon import language as gl

    half, sub = key.block_m // 2, key.block_n // key.n_split
    out = {}
    for name, dtype, block in (("a_desc", key.dtype.triton, (half, key.block_k)),
                               ("b_desc", key.dtype.triton, (key.block_n, key.block_k)),
                               ("c_desc", out_type(key).triton, (half, sub))):
        layout = gl.NVMMASharedLayout.get_default_for(list(block), tl.str_to_ty(dtype, None))
        out[name] = (dtype, block, repr(layout))
    return out


@functools.lru_cache(maxsize=4096)
def _views(key: GluonWsGemmKey, p) -> tuple:
    """(tensor, shape, strides, block) of A [M, K], B^T [N, K] and C [M, N] (``rcr``)."""
    blocks = {n: b for n, (_, b, _) in _layouts(key).items()}
    return checked_views((("a", [p.M, p.K], [p.lda, 1], blocks["a_desc"], key.dtype.itemsize),
                          ("b", [p.N, p.K], [p.ldb, 1], blocks["b_desc"], key.dtype.itemsize),
                          ("c", [p.M, p.N], [p.ldc, 1], blocks["c_desc"], out_type(key).itemsize)))


class GluonWsGemm(TmaGemm):
    """Warp-specialised persistent fp8 GEMM with promoted accumulation (Gluon)."""

    name = "gemm_gluon_ws"
    key_cls = GluonWsGemmKey
    template = "gemm_gluon_ws.py.j2"
    batches = False
    halves = False
    interpretable = False

    def check(self, key: GluonWsGemmKey, arch: ArchSpec) -> list[str]:
        """The tiled family's rules (not its shared-memory or register terms: the kernel's own
        below), TMA, and the kernel's own: fp8 inputs,
        ``rcr``, promoted accumulation, block_m 128, block_k 128, num_warps 4, no fused epilogue
        beyond dequantization scales, no batch, shared memory of the ring and the two consumers' C
        staging within the block limit, wgmma (sm_90)."""
        reasons = [r for r in TiledGemm.check(self, key, arch) if "shared memory" not in r and "accumulator registers" not in r]
        if not arch.tma:
            reasons.append(f"{arch.arch} has no TMA (tensor memory accelerator)")
        if not isinstance(key.dtype, QuantType) or not key.dtype.value.startswith("fp8"):
            reasons.append(f"dtype {key.dtype.value}: the kernel is written for fp8 (e4m3, e5m2)")
        if key.layout.value != "rcr":
            reasons.append(f"layout {key.layout.value}: needs rcr (K-major A and B, as torch._scaled_mm)")
        if key.fast_accum:
            reasons.append("fast_accum: the kernel exists for promoted accumulation (the other families serve fast_accum)")
        if key.block_m != 128:
            reasons.append(f"block_m {key.block_m}: two consumer warpgroups of 64 rows need 128")
        if key.block_k != 128:
            reasons.append(f"block_k {key.block_k}: one promotion per 128 products (cuBLAS's interval) needs 128")
        if key.num_warps != 4:
            reasons.append(f"num_warps {key.num_warps}: the default partition is one consumer warpgroup (4)")
        if key.block_n // key.n_split > 128:
            reasons.append(f"block_n / n_split = {key.block_n // key.n_split}: a consumer holds a total and a partial of "
                           f"64 x that many fp32 values in 232 registers a thread, so at most 128")
        if key.epilogue not in ("none", "sten", "srow"):
            reasons.append(f"epilogue {key.epilogue}: only dequantization scales (sten, srow) are implemented")
        if key.batched:
            reasons.append("batched: one matrix per launch")
        if not getattr(arch, "wgmma", False):
            reasons.append(f"{arch.arch} has no wgmma (warpgroup MMA)")
        smem = self.smem_bytes(key)
        if smem > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem} B (ring + C staging) > {arch.smem_per_block_bytes} B")
        return reasons

    @staticmethod
    def smem_bytes(key: GluonWsGemmKey) -> int:
        """Bytes of shared memory the kernel allocates, at most: the ring (stages x (BLOCK_M +
        BLOCK_N) x BLOCK_K fp8), both consumers' C staging (2 x 64 x BLOCK_N / n_split of the output
        type) and 1 KB for the mbarriers and alignment (the default set compiled for sm_90a with
        Triton 3.6 used 152-160 B beyond ring and staging; the CPU tests check the bound)."""
        ring = key.num_stages * (key.block_m + key.block_n) * key.block_k * key.dtype.itemsize
        staging = 2 * (key.block_m // 2) * (key.block_n // key.n_split) * out_type(key).itemsize
        return ring + staging + 1024

    def mma_warps(self, key: GluonWsGemmKey) -> int:
        return 8

    def signature(self, key: GluonWsGemmKey) -> dict[str, str]:
        """Host descriptors of A, B^T and C (``tensordesc<type[block],layout>``), M, N, K, then the
        epilogue's parameters (``sten`` / ``srow``: scale_a_ptr, scale_b_ptr, alpha, beta)."""
        sig = {name: f"tensordesc<{ty}{list(block)},{layout}>" for name, (ty, block, layout) in _layouts(key).items()}
        sig.update({"M": "i32", "N": "i32", "K": "i32"})
        return {**sig, **self.variant_signature(key, f"*{out_type(key).triton}")}

    def constexprs(self, key: GluonWsGemmKey) -> dict[str, Any]:
        return {}

    def divisible_by_16(self, key: GluonWsGemmKey) -> tuple[str, ...]:
        return ("scale_a_ptr", "scale_b_ptr") if key.epilogue in ("sten", "srow") else ()

    def compile_options(self, key: GluonWsGemmKey) -> dict[str, Any]:
        return {"num_warps": 4, "maxnreg": MAXNREG}

    def grid(self, key: GluonWsGemmKey, p) -> tuple[int, int, int]:
        return (min(self.sm_count, tiles(key, p)), 1, 1)

    #: Programs at most, as the persistent TMA family's.
    sm_count = PersistentGemm.sm_count

    def launch_args(self, key: GluonWsGemmKey, p, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        return (*host_descriptors(_views(key, p), tensors), p.M, p.N, p.K) + self.variant_args(key, p, tensors)

    def kernel_sets(self):
        from . import sets

        return {"default": sets.gluon_ws_default_set, "full": sets.gluon_ws_full_set}

    def estimate_ms(self, key: GluonWsGemmKey, p, arch: ArchSpec, device: DeviceSpec) -> float:
        """The tiled GEMM's estimate with the work spread evenly over the SMs (persistent)."""
        from .rules import estimate_ms

        return estimate_ms(key, p, arch, device, balanced=True)

    def features(self, key: GluonWsGemmKey) -> dict[str, Any]:
        """The tiled features with ``tma``, ``persistent``, ``warp_specialize`` and ``gluon`` = 1 and
        ``n_split``; ``smem`` is this kernel's allocation, ``acc_per_thread`` a consumer's total."""
        return {**TiledGemm.features(self, key), "tma": 1.0, "persistent": 1.0, "warp_specialize": 1.0, "gluon": 1.0,
                "n_split": float(key.n_split), "smem": self.smem_bytes(key),
                "acc_per_thread": 64 * key.block_n / 128}
