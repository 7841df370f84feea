"""The implicit-GEMM grouped convolution families, one per direction: ``conv_fwd``,
``conv_bwd_data`` and ``conv_bwd_weight`` (templates ``conv_<direction>.py.j2``).

Every family serves every valid problem of its op: ``access=generic`` instances are the
fallback (64-bit offsets, no divisibility assumptions); groups are a launch dimension, several
at a time (``groups_per_block``) when channels per group are few.
"""

from __future__ import annotations

import functools
import math
import types
from typing import Any, Mapping

from ckcore import DType, KernelFamily
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.features import wave_features

from . import rules, sets
from .keys import Access, ConvBwdDataKey, ConvBwdWeightKey, ConvFwdKey, ConvKey
from .problem import ConvProblem

__all__ = ["ConvFamily", "ConvFwd", "ConvBwdData", "ConvBwdWeight", "FAMILIES", "gemm_shape", "grid_reason", "int32_reason", "split_reason",
           "mma_tile_reasons", "pixel_split_reason", "split_workspace_views", "split_workspaces", "stride_phases", "tile_features"]

INT32_MAX = 2**31 - 1
GRID_YZ_MAX = 65535
_SIZES = ("C", "K", "Cg", "Kg", "Cs", "Ks", "D", "H", "W", "Do", "Ho", "Wo", "Z", "Y", "X",
          "str_d", "str_h", "str_w", "pad_d", "pad_h", "pad_w", "dil_d", "dil_h", "dil_w")
_STRIDES_CL = ("sxn", "sxd", "sxh", "sxw", "swk", "swz", "swy", "swx", "syn", "syd", "syh", "syw")
_STRIDES_CF = ("sxn", "sxc", "sxd", "sxh", "swk", "swc", "swz", "swy", "syn", "syk", "syd", "syh")


def grid_reason(grid: tuple[int, int, int]) -> str | None:
    """Why a launch ``grid`` cannot run (more than :data:`GRID_YZ_MAX` programs in dimension 1
    or 2: CUDA's limit), or None."""
    if max(grid[1:]) > GRID_YZ_MAX:
        return f"grid {grid} exceeds {GRID_YZ_MAX} programs in dimension 1 or 2"
    return None


@functools.lru_cache(maxsize=4096)
def int32_reason(p: ConvProblem, what: str = "32-bit offsets") -> str | None:
    """Why a kernel indexing with 32-bit ``what`` cannot address ``p``'s tensors (one beyond
    :data:`INT32_MAX` elements), or None. Memoised: selection asks it of every candidate."""
    for role, count in p.numel().items():
        if count > INT32_MAX:
            return f"tensor {role} has {count} elements, beyond {what}"
    return None


def access_features(key) -> dict[str, float]:
    """One-hot of a key's :class:`Access` (``access_a16``, ``access_a16k``, ``access_v4``,
    ``access_i32``, ``access_generic``)."""
    return {f"access_{a.value}": float(key.access is a) for a in Access}


def gemm_shape(direction: str, p: ConvProblem, gpb: int) -> tuple[int, int, int]:
    """(rows, columns, reduction length) of one block of ``gpb`` groups' implicit GEMM."""
    cs, ks = gpb * p.Cg, gpb * p.Kg
    if direction == "fwd":
        return p.N * p.out_pixels, ks, cs * p.taps
    if direction == "bwd_data":
        return p.N * p.pixels, cs, ks * p.taps
    return ks, cs * p.taps, p.N * p.out_pixels


def stride_phases(p: ConvProblem) -> tuple[int, int]:
    """(S, rows per phase) of backward-data's stride-phase decomposition: S = the product of the
    strides, and N · ceil(D/str_d) · ceil(H/str_h) · ceil(W/str_w) input pixels per phase (a
    phase's pixels share the remainder of their coordinates modulo the stride). Each phase
    reduces over about taps / S filter taps (exactly that many on average over the phases)."""
    d3 = p.as_3d()
    per = [math.ceil(n / s) for n, s in zip(d3["spatial"], d3["stride"])]
    return math.prod(d3["stride"]), p.N * math.prod(per)


@functools.lru_cache(maxsize=4096)
def int_args(p: ConvProblem, gpb: int) -> Mapping[str, int]:
    """Every integer kernel argument by name (sizes padded to 3-D, all strides, M and P), read
    only. Memoised per (problem, groups per block): selection asks it of every candidate."""
    d3 = p.as_3d()
    out = {"C": p.C, "K": p.K, "Cg": p.Cg, "Kg": p.Kg, "Cs": gpb * p.Cg, "Ks": gpb * p.Kg}
    out.update(zip(("D", "H", "W"), d3["spatial"]))
    out.update(zip(("Do", "Ho", "Wo"), d3["out"]))
    out.update(zip(("Z", "Y", "X"), d3["filter"]))
    for field, prefix in (("stride", "str"), ("pad", "pad"), ("dilation", "dil")):
        out.update(zip((f"{prefix}_d", f"{prefix}_h", f"{prefix}_w"), d3[field]))
    lead = (0,) * (3 - p.ndim)
    for role, names in (("x", "nc"), ("w", "kc"), ("y", "nk")):
        s = p.tensor_strides()[role]
        spatial = lead + s[2:]
        axes = "dhw" if role != "w" else "zyx"
        out.update({f"s{role}{names[0]}": s[0], f"s{role}{names[1]}": s[1]})
        out.update({f"s{role}{a}": v for a, v in zip(axes, spatial)})
    out["P"] = p.N * p.out_pixels
    return types.MappingProxyType(out)


def tile_features(programs: int, sm_count: int, k_steps: int, pad_waste: float, issued: int) -> dict[str, float]:
    """The implicit-GEMM pair features every conv family shares: programs and SM waves
    (:func:`ckcore.features.wave_features`), K steps per program, padding waste (issued tile area
    over the useful one, minus 1) and the log of the multiply-adds issued (2 · ``issued``)."""
    return {**wave_features(programs, sm_count), "k_steps": float(k_steps), "pad_waste": pad_waste,
            "log_issued": math.log(2.0 * issued)}


def split_levels(split_k: int) -> tuple[int, int]:
    """(B, S / B) of a split sum over S = ``split_k`` partials (``conv_common.split_k_reduce`` and
    the halo backward-weight kernel's): at S >= 8 the splits form S / B groups of B (B the least
    divisor of S with B² >= S, e.g. 8 of 8 at 64), the last of each group to arrive sums its
    group's partials and the last group sums the group sums (a serial chain of B + S / B
    partials, not S); below 8, (S, 1): the last split sums them all."""
    if split_k < 8:
        return split_k, 1
    b = next(d for d in range(2, split_k + 1) if split_k % d == 0 and d * d >= split_k)
    return b, split_k // b


def split_workspace_views(tensors: Mapping[str, Any]) -> tuple[Any, Any]:
    """The split-K workspaces a kernel takes (:func:`split_workspaces`, raw bytes from ckcore)
    viewed as its fp32 partial tiles and int32 arrival counters."""
    import torch

    return tensors["workspace_partials"].view(torch.float32), tensors["workspace_counters"].view(torch.int32)


def split_workspaces(family, key, p: ConvProblem) -> dict[str, int]:
    """Bytes of a split-K instance's workspaces: ``partials``, one fp32 tile per (output tile,
    split; per tap of a backward-weight tap block); ``counters``, split_k + 1 int32 arrival counts
    per output tile (one per group of splits and the tile's; ``conv_common.split_k_reduce``), left at
    zero by the kernel.
    None without a split. The splits are the last grid dimension's factor ``split_k``."""
    split = getattr(key, "split_k", 1)
    if split == 1:
        return {}
    tiles = math.prod(family.grid(key, p)) // split
    accs = getattr(key, "tap_block", 1)  # backward-weight's tap blocks: one partial tile per tap
    return {"partials": tiles * split * accs * key.block_m * key.block_n * 4, "counters": 4 * tiles * (split + 1)}


# Forward and backward-data split their reduction only where it pays: grids too small to fill the
# GPU, so the partials stay small. Bound on their workspace (bytes):
MAX_SPLIT_WORKSPACE = 64 << 20


def split_reason(family, key, p: ConvProblem, steps: int) -> str | None:
    """Why a forward or backward-data ``split_k`` instance does not serve ``p``: fewer than two
    reduction steps (``steps`` per output tile) per split, or partials above
    :data:`MAX_SPLIT_WORKSPACE`; None without a split."""
    split = getattr(key, "split_k", 1)
    if split == 1:
        return None
    if steps < 2 * split:
        return f"{steps} reduction steps per tile, fewer than 2 per split (split_k={split})"
    need = split_workspaces(family, key, p)["partials"]
    if need > MAX_SPLIT_WORKSPACE:
        return f"split_k={split} partials need {need} B > {MAX_SPLIT_WORKSPACE} B (grid large enough unsplit)"
    return None


def unit_stride_reason(key, p: ConvProblem) -> str | None:
    """Why a backward-data ``unit_stride`` key cannot run ``p`` (a stride above 1), or None."""
    if key.unit_stride and any(s != 1 for s in p.stride):
        return f"unit-stride kernel, stride {list(p.stride)}"
    return None


def mma_tile_reasons(key, arch: ArchSpec, smem: int, *, accs: int = 1, smem_what: str = "") -> list[str]:
    """Static checks every tensor-core conv tile shares, on ``arch``: the tensor cores take the
    dtype (fp32 as tf32), ``smem`` bytes (``smem_what`` says of what) fit one block, the
    reduction step meets the MMA minimum K, the warps fit a block, and ``accs`` fp32 accumulator
    tiles of ``block_m × block_n`` fit 128 registers per thread."""
    reasons = []
    tc = "tf32" if key.dtype is DType.FP32 else key.dtype.value
    if tc not in arch.tensor_core_dtypes:
        reasons.append(f"dtype {key.dtype.value}: {arch.arch} tensor cores take {', '.join(arch.tensor_core_dtypes)}")
    if smem > arch.smem_per_block_bytes:
        reasons.append(f"shared memory {smem} B{smem_what} > {arch.smem_per_block_bytes} B per block on {arch.arch}")
    if key.block_k < arch.mma_min_k.get(key.dtype.value, 16):
        reasons.append(f"block_k {key.block_k} < MMA minimum K {arch.mma_min_k[key.dtype.value]}")
    if key.num_warps * 32 > arch.max_threads_per_block:
        reasons.append(f"num_warps {key.num_warps} exceeds {arch.max_threads_per_block} threads per block")
    acc_regs = accs * key.block_m * key.block_n // (32 * key.num_warps)
    if acc_regs > 128:
        reasons.append(f"{acc_regs} fp32 accumulator registers per thread > 128" + (f" ({accs} tap tiles)" if accs > 1 else ""))
    return reasons


class SplitSumTemplate:
    """Families whose templates sum split partials through ``conv_common.split_k_reduce``: the
    template value ``split_levels`` (:func:`split_levels` of the key's ``split_k``)."""

    def template_values(self, key) -> dict[str, Any]:
        return {"split_levels": split_levels(getattr(key, "split_k", 1))}


class ConvFamily(SplitSumTemplate, KernelFamily):
    """Shared behaviour of the three implicit-GEMM families."""

    direction: str
    template_package = "ck_plugin_grouped_conv"
    tensors: tuple[str, str, str]  # kernel pointer order: two inputs, then the output

    @property
    def template(self) -> str:
        return f"conv_{self.direction}.py.j2"

    # ---- static validity -------------------------------------------------------------------
    def check(self, key: ConvKey, arch: ArchSpec) -> list[str]:
        """Static validity on ``arch``: tensor cores take the dtype, the operand pipeline fits
        shared memory, the reduction step meets the MMA minimum K, accumulators fit registers."""
        # operand pipeline: one row tile and, with backward-weight's tap blocks, a column tile per tap
        accs = getattr(key, "tap_block", 1)
        smem = key.num_stages * (key.block_m + accs * key.block_n) * key.block_k * key.dtype.itemsize
        reasons = mma_tile_reasons(key, arch, smem, accs=accs)
        if accs > 1 and key.flat:
            reasons.append(f"tap_block={accs} needs flat=False (flat columns already span the taps)")
        if key.block_m * key.block_n < 32 * key.num_warps * 4:
            reasons.append(f"tile {key.block_m}x{key.block_n} too small for {key.num_warps} warps")
        if getattr(key, "flat", False) and key.groups_per_block != 1:
            reasons.append(f"flat={key.flat} needs groups_per_block 1 (got {key.groups_per_block})")
        if self.direction == "fwd" and key.flat and key.split_k > 1:
            reasons.append(f"split_k={key.split_k}: forward splits only the per-tap reduction (flat=False)")
        return reasons

    # ---- problem support -------------------------------------------------------------------
    def _fit(self, key: ConvKey) -> tuple[int, int]:
        """(tile extent holding the block's output channels, extent holding its input channels)."""
        raise NotImplementedError

    def bucket(self, key: ConvKey):
        """(dtype, channels-last): ``supports`` rejects every problem of another; backward-data
        ``unit_stride`` keys add stride 1 (the conv op's ``bucket``)."""
        if getattr(key, "unit_stride", False):
            return key.dtype, key.channels_last, None, None, True
        return key.dtype, key.channels_last

    def supports(self, key: ConvKey, p: ConvProblem) -> str | None:
        return self._match_reason(key, p) or self._tile_reason(key, p) or self._launch_reason(key, p)

    @staticmethod
    def _match_reason(key, p: ConvProblem) -> str | None:
        """dtype and layout family."""
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        if key.channels_last != p.layout.channels_last:
            return f"{'channels-last' if key.channels_last else 'contiguous'} kernel, layout {p.layout.value}"
        return None

    def _tile_reason(self, key: ConvKey, p: ConvProblem) -> str | None:
        """Flat reduction and merged groups fit the problem's channels per group."""
        gpb = key.groups_per_block
        if getattr(key, "flat", False) and not (p.Cg < 16 and p.Kg >= 16):
            return f"flat instances serve few input and many output channels per group (C/G={p.Cg}, K/G={p.Kg})"
        if gpb > 1:
            if gpb >= 2 * p.G:
                return f"groups_per_block {gpb} >= 2·G (G={p.G})"
            k_room, c_room = self._fit(key)
            if gpb * p.Kg > k_room or gpb * p.Cg > c_room:
                return (f"{gpb} groups of K/G={p.Kg}, C/G={p.Cg} do not fit one tile "
                        f"({k_room} output, {c_room} input channels)")
        return None

    def _launch_reason(self, key, p: ConvProblem) -> str | None:
        """Grid limits, and what the key's access mode assumes (32-bit offsets; alignment and
        16-divisible hinted arguments for ``a16`` and ``a16k``)."""
        why = grid_reason(self.grid(key, p))
        if why or key.access is Access.GENERIC:
            return why
        why = int32_reason(p)
        if why or key.access is Access.I32:
            return why
        if p.ptr_align != 16:
            return f"needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
        args = int_args(p, key.groups_per_block)
        mult = 4 if key.access is Access.V4 else 16
        for name in self._hinted_ints(key):
            if args[name] % mult:
                return f"needs {name} % {mult} == 0 ({name}={args[name]})"
        return None

    @functools.lru_cache(maxsize=4096)
    def _hinted_ints(self, key: ConvKey) -> tuple[str, ...]:
        """Integer arguments an aligned instance assumes divisible by 16, so channel vectors
        load 16 bytes at a time: channel counts, the strides of x and y, and where the filter
        tile is loaded densely (channels-last, one group per program, forward and
        backward-data) the filter's strides too. ``a16k``: K, Ks and the strides of y (dy)."""
        strides = _STRIDES_CL if key.channels_last else _STRIDES_CF
        if key.access is Access.A16K:
            return ("K", "Ks") + tuple(s for s in strides if s.startswith("sy"))
        dense_w = key.channels_last and key.groups_per_block == 1 and self.direction != "bwd_weight"
        return ("C", "K", "Cs", "Ks") + tuple(s for s in strides if dense_w or not s.startswith("sw"))

    # ---- compilation -----------------------------------------------------------------------
    def _pointer_args(self, key: ConvKey) -> dict[str, str]:
        """The three tensors, then with a split the fp32 partials and int32 counters."""
        ptr = f"*{key.dtype.triton}"
        args = {f"{t}_ptr": ptr for t in self.tensors}
        if getattr(key, "split_k", 1) > 1:
            args.update({"ws_ptr": "*fp32", "lock_ptr": "*i32"})
        return args

    def signature(self, key: ConvKey) -> dict[str, str]:
        """Pointers, then sizes, M or P and strides: 64-bit integers in generic instances (a
        stride or pixel count may pass 2^31), 32-bit otherwise."""
        sig = self._pointer_args(key)
        ints = "i64" if key.access is Access.GENERIC else "i32"
        sig.update({n: ints for n in _SIZES})
        sig[self._rows_arg] = ints
        sig.update({n: ints for n in (_STRIDES_CL if key.channels_last else _STRIDES_CF)})
        sig["UPCAST"] = "constexpr"
        return sig

    _rows_arg = "M"

    def constexprs(self, key: ConvKey) -> dict[str, Any]:
        return {"UPCAST": False}

    def divisible_by_16(self, key: ConvKey) -> tuple[str, ...]:
        """Hinted arguments by access mode; split workspaces (ckcore's 64 KiB-aligned buffers)
        always."""
        ws = ("ws_ptr", "lock_ptr") if getattr(key, "split_k", 1) > 1 else ()
        if key.access is Access.A16K:
            return tuple(f"{t}_ptr" for t in self.tensors if t in ("y", "dy")) + self._hinted_ints(key) + ws
        if key.access is Access.V4:  # the integers are hinted in the kernel (multiples of 4)
            return tuple(self._pointer_args(key))
        if not key.aligned:
            return ws
        return tuple(self._pointer_args(key)) + self._hinted_ints(key)

    def compile_options(self, key: ConvKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    # ---- launch ----------------------------------------------------------------------------
    @functools.lru_cache(maxsize=4096)
    def _arg_recipe(self, key: ConvKey, p: ConvProblem) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """(tensor names of the pointer arguments, the integer arguments), in signature order
        (pointers first, then integers, then the UPCAST constexpr); memoised."""
        args = dict(int_args(p, key.groups_per_block))
        args["M"] = gemm_shape(self.direction, p, key.groups_per_block)[0]
        sig = [n for n in self.signature(key) if n != "UPCAST"]
        names = tuple(self._tensor_of(n) for n in sig if n.endswith("_ptr"))
        assert all(n.endswith("_ptr") for n in sig[: len(names)])
        return names, tuple(args[n] for n in sig[len(names):])

    def _tensor_of(self, arg: str) -> str:
        return {"ws_ptr": "workspace_partials_f32", "lock_ptr": "workspace_counters_i32"}.get(arg, arg[: -len("_ptr")])

    def launch_args(self, key: ConvKey, p: ConvProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        if getattr(key, "split_k", 1) > 1:
            partials, counters = split_workspace_views(tensors)
            tensors = {**tensors, "workspace_partials_f32": partials, "workspace_counters_i32": counters}
        upcast = interpret and key.dtype is DType.BF16  # the interpreter dots bf16 as integers
        names, ints = self._arg_recipe(key, p)
        return tuple(tensors[n] for n in names) + ints + (upcast,)

    def workspaces(self, key: ConvKey, p: ConvProblem) -> dict[str, int]:
        """Split instances' partial tiles and counters (:func:`split_workspaces`)."""
        return split_workspaces(self, key, p)

    def _groups_grid(self, key: ConvKey, p: ConvProblem) -> int:
        return math.ceil(p.G / key.groups_per_block)

    def kernel_sets(self):
        return {"default": lambda arch: sets.default_set(self, arch), "full": lambda arch: sets.full_set(self, arch)}

    def estimate_ms(self, key: ConvKey, p: ConvProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        return rules.estimate_ms(self, key, p, arch, device)

    def features(self, key: ConvKey) -> dict[str, float]:
        """Tile sizes, warps, stages, split, the access mode one-hot and the variant flags."""
        return {"block_m": key.block_m, "block_n": key.block_n, "block_k": key.block_k,
                "groups_per_block": key.groups_per_block, "num_warps": key.num_warps, "num_stages": key.num_stages,
                "split_k": float(getattr(key, "split_k", 1)), "flat": float(getattr(key, "flat", False)),
                "unit_stride": float(getattr(key, "unit_stride", False)), **access_features(key)}

    def pair_features(self, key: ConvKey, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves of the grid; the tiles' padding waste (tile area over the
        implicit GEMM's rows × columns), K steps per program, and the log of the multiply-adds
        issued (2 · programs · tile · K steps; merged groups' block-diagonal waste included)."""
        gpb = key.groups_per_block
        rows, cols, red = gemm_shape(self.direction, p, gpb)
        split = getattr(key, "split_k", 1)
        grid = self.grid(key, p)
        programs = grid[0] * grid[1] * grid[2]
        if self.direction == "bwd_data":
            red /= stride_phases(p)[0]  # a phase's programs reduce over its taps only
        k_steps = math.ceil(red / split / key.block_k)  # a split's share
        covered = rows * cols * math.ceil(p.G / gpb) * split
        issued = programs * key.block_m * key.block_n * k_steps * key.block_k * getattr(key, "tap_block", 1)
        return tile_features(programs, arch.sm_count, k_steps,
                             programs * key.block_m * key.block_n / max(covered, 1) - 1.0, issued)


class ConvFwd(ConvFamily):
    """Forward: rows are output pixels, columns output channels, reduction taps × input channels."""

    name = "conv_fwd"
    op = "grouped_conv_fwd"
    direction = "fwd"
    key_cls = ConvFwdKey
    tensors = ("x", "w", "y")

    def _fit(self, key):
        return key.block_n, key.block_k

    def grid(self, key, p):
        rows, cols, _ = gemm_shape("fwd", p, key.groups_per_block)
        return (math.ceil(rows / key.block_m), math.ceil(cols / key.block_n), self._groups_grid(key, p) * key.split_k)

    def supports(self, key, p):
        """The shared rules, and for a split: at least two reduction steps (taps × blocks of
        ``block_k`` channels) per split and bounded partials (:func:`split_reason`)."""
        reason = super().supports(key, p)
        if reason is None and key.split_k > 1:
            steps = p.taps * math.ceil(key.groups_per_block * p.Cg / key.block_k)
            reason = split_reason(self, key, p, steps)
        return reason


class ConvBwdData(ConvFamily):
    """Backward-data: rows are input pixels, columns input channels, reduction taps × output channels."""

    name = "conv_bwd_data"
    op = "grouped_conv_bwd_data"
    direction = "bwd_data"
    key_cls = ConvBwdDataKey
    tensors = ("dy", "w", "dx")

    def _fit(self, key):
        return key.block_k, key.block_n

    def supports(self, key, p):
        """The shared rules, stride 1 for ``unit_stride`` keys, and for a split: at least two
        reduction steps (a phase's taps on average × blocks of ``block_k`` channels) per split
        and bounded partials (:func:`split_reason`)."""
        reason = unit_stride_reason(key, p) or super().supports(key, p)
        if reason is None and key.split_k > 1:
            steps = math.ceil(p.taps / stride_phases(p)[0]) * math.ceil(key.groups_per_block * p.Kg / key.block_k)
            reason = split_reason(self, key, p, steps)
        return reason

    def grid(self, key, p):
        """(stride phases × row blocks per phase, column blocks, group blocks × splits); one
        phase at unit stride (:func:`stride_phases`)."""
        _, cols, _ = gemm_shape("bwd_data", p, key.groups_per_block)
        phases, rows = stride_phases(p)
        return (phases * math.ceil(rows / key.block_m), math.ceil(cols / key.block_n),
                self._groups_grid(key, p) * key.split_k)


# The longest backward-weight reduction (N·output pixels) one unsplit fp32 tensor-core accumulator
# takes. Measured on an H200 (benchmarks/datasets/grouped_conv_bwd_weight_h200.jsonl.gz): every
# unsplit instance passed its check up to 524288 products and all four failed at 1906624 (bf16,
# max abs error 24.8 against a tolerance of ~21, where split instances erred by 14-18).
MAX_UNSPLIT_REDUCTION = 2**19


def pixel_split_reason(key, p: ConvProblem) -> str | None:
    """Why a backward-weight key whose reduction runs over N·output pixels in blocks of
    ``block_k``, split over ``split_k`` programs, cannot serve ``p``: fewer blocks than splits
    (shares are rounded up, so some splits may still get none, adding zero partials), or, unsplit,
    more than :data:`MAX_UNSPLIT_REDUCTION` pixels in one fp32 accumulator; else None. Split
    instances take any length (they passed at 1.9 M pixels where every unsplit one failed, and the
    generic split ones are what serves the longest reductions)."""
    pixels = p.N * p.out_pixels
    if key.split_k > 1:
        if math.ceil(pixels / key.block_k) < key.split_k:
            return f"N·output pixels = {pixels} has fewer than split_k={key.split_k} blocks of {key.block_k}"
        return None
    return accumulator_reason(pixels, 1, MAX_UNSPLIT_REDUCTION)


def accumulator_reason(pixels: int, split_k: int, limit: int) -> str | None:
    """Why ``pixels`` (N·output pixels) shared by ``split_k`` programs put more than ``limit``
    in one fp32 accumulator (the split's share ceil(pixels / split_k); a kernel that rounds shares
    up to whole blocks may give one split a little more), or None."""
    share = math.ceil(pixels / split_k)
    if share <= limit:
        return None
    if split_k == 1:
        return f"N·output pixels = {pixels} > {limit} in one accumulator (split_k > 1 instances divide it)"
    return f"N·output pixels / split_k = {share} > {limit} in one accumulator (more splits divide it)"


class ConvBwdWeight(ConvFamily):
    """Backward-weight: per filter tap, rows are output channels, columns input channels,
    reduction N·output pixels, optionally split over ``split_k`` programs; a program serves
    ``tap_block`` consecutive taps."""

    name = "conv_bwd_weight"
    op = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    key_cls = ConvBwdWeightKey
    tensors = ("x", "dy", "dw")
    _rows_arg = "P"

    def _fit(self, key):
        return key.block_m, key.block_n

    def grid(self, key, p):
        cs = key.groups_per_block * p.Cg
        ks = key.groups_per_block * p.Kg
        if key.flat:
            cols = math.ceil(p.taps * cs / key.block_n)
        else:  # tap blocks: taps / tap_block programs per column block (supports: taps divisible)
            cols = math.ceil(p.taps / key.tap_block) * math.ceil(cs / key.block_n)
        return (math.ceil(ks / key.block_m), cols, self._groups_grid(key, p) * key.split_k)

    def features(self, key):
        """The shared kernel features and ``tap_block`` (taps per program)."""
        return {**super().features(key), "tap_block": float(key.tap_block)}

    def supports(self, key, p):
        """The shared rules; filter taps a multiple of ``tap_block``; for a split at least
        ``split_k`` blocks of output pixels, unsplit at most :data:`MAX_UNSPLIT_REDUCTION` pixels."""
        if key.tap_block > 1 and p.taps % key.tap_block:
            return f"{p.taps} filter taps, not a multiple of tap_block={key.tap_block}"
        return super().supports(key, p) or pixel_split_reason(key, p)


FAMILIES = (ConvFwd, ConvBwdData, ConvBwdWeight)
