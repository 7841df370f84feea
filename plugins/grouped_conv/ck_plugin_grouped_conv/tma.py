"""The TMA implicit-GEMM families (sm_90) for channels-last problems: ``conv_tma_fwd`` and
``conv_tma_bwd_data`` (template ``conv_tma.py.j2``) and ``conv_tma_bwd_weight``
(``conv_tma_bwd_weight.py.j2``). Backward-data takes stride 1; forward (its ``phases`` kernels)
and backward-weight take strides above 1 by reading the input's row phases (:func:`source_view`).

A forward / backward-data program computes a ``block_h × block_w`` patch of output pixels (one
image row of depth) by ``block_n`` channels of one group. With unit height and width strides the
activation is a 5-D TMA descriptor [N·D, H, W, G, RED] (RED: reduction channels per group), so
each filter tap is one box load shifted by the tap, its padding zero-filled by TMA, and a group's
channels never bleed into the next group's (the group is its own descriptor dimension): C/G need
not be a multiple of the tile. With a height or width stride above 1 it is the input's row phases
(:func:`source_view`), and C/G must be a multiple of the channel box.
Backward-data with stride 1 is the forward convolution of dy with the filter mirrored.
Backward-weight reduces over patches of output pixels (dy and the x patch shifted by the tap),
split over programs with a deterministic workspace reduction. A 1×1 unit-stride filter without
padding folds N·D·H·W into one row, so tiles never straddle image rows.

The descriptors are made on the host and passed by value (:meth:`ConvTmaFamily.descriptor_blocks`).
Needs TMA, 16-byte aligned tensors and C/G, K/G multiples of 16 bytes (descriptor strides);
32-bit coordinates; for strides the rules of :meth:`ConvTmaFamily._stride_reason`. Other problems are left to the pointer families. Measured on an H200 against
cuDNN (``docs/performance.md``, session 7): 0.7-2.2x cuDNN and 1.5-7x the pointer kernels on
RegNet's 40-channel groups in all three directions; about the pointer kernels' speed on dense
ResNet layers; slower than their merged groups on 16-32 channels per group, which selection
leaves to them.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar, Mapping

import attrs

from ckcore import DType, KernelFamily, KeyBase
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import enum_converter, int_in, member_of, power_of_two_in
from ckcore.tma import checked_views, host_descriptors

from . import rules
from .family import (MAX_UNSPLIT_REDUCTION, accumulator_reason, grid_reason, int32_reason, mma_tile_reasons, split_reason,
                     SplitSumTemplate, split_workspace_views, split_workspaces, tile_features)
from .keys import Access
from .problem import ConvProblem

# The longest reduction (N·output pixels) one split of a TMA backward-weight program takes in its
# fp32 accumulator: half the pointer family's unsplit MAX_UNSPLIT_REDUCTION, and per split. Measured
# on four H100s (twenty-third session, benchmarks/datasets/grouped_conv_bwd_weight_h200.jsonl.gz):
# at split 2, 953312 pixels per split failed the bf16 check twice (max abs error 18.2 and 21.1,
# where the split-4 instances' 18.2 passed: the check is per element, atol + rtol · |reference|);
# unsplit, the 8x8 patch tile failed once at 401408 (max abs error 5.28; the other instances there
# at most 4.62) while both unsplit tiles passed at 430336-524288: near the limit it is rounding luck.
# Problems beyond it keep the TMA instances of more splits and the pointer family's.
MAX_TMA_SPLIT_REDUCTION = MAX_UNSPLIT_REDUCTION // 2

__all__ = ["ConvTmaKey", "ConvTmaFwdKey", "ConvTmaBwdDataKey", "ConvTmaBwdWeightKey", "ConvTmaFwd", "ConvTmaBwdData",
           "ConvTmaBwdWeight", "TMA_FAMILIES"]


class _TmaTraits:
    """What the shared conv code (rules, tests) reads from a key: TMA kernels are channels-last,
    one group per program and aligned."""

    channels_last: ClassVar[bool] = True
    groups_per_block: ClassVar[int] = 1
    access: ClassVar[Access] = Access.A16


@attrs.frozen(kw_only=True)
class ConvTmaKey(_TmaTraits, KeyBase):
    """One TMA forward or backward-data convolution kernel (channels-last).

    :ivar dtype: element type of every tensor (fp32 runs on tensor cores as tf32).
    :ivar block_h, block_w: the output-pixel patch of a program (rows of the implicit GEMM:
        ``block_h · block_w``).
    :ivar block_n: output channels of the group per program (the implicit GEMM's columns).
    :ivar block_k: reduction channels per step (at most 128 bytes: one swizzled TMA row).
    :ivar num_warps, num_stages: Triton launch and pipelining options.
    :ivar split_k: programs sharing one output tile's reduction (taps × channel blocks), fp32
        partials summed in fixed order (deterministic); for grids too small to fill the GPU
        (``_k<split>`` in the name when above 1).
    :ivar groups_per_block: groups one program serves at once (``_gpb<n>`` in the name when
        above 1), for few channels per group (ResNeXt's 4-32): the patch's channels of ``gpb``
        consecutive groups are one TMA box (``gpb · C/G`` reduction channels, at most
        ``block_k``), and the filter tile is block-diagonal, gathered with pointers (a group's
        outputs see only its own inputs). One reduction step per tap and one column tile.
    :ivar phases: forward only (``_ph`` in the name): the kernel for strides above 1, which reads
        each tap's pixels from the input's row phases (:func:`source_view`); its twin without
        it serves stride 1. The phase arithmetic in the reduction loop cost the stride-1 kernels
        14-16% on ResNet-50's dense 3×3 rows (one H100, ``docs/performance.md``), hence two
        kernels rather than one.
    """

    direction: ClassVar[str] = ""
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    block_h: int = attrs.field(validator=power_of_two_in(1, 256))
    block_w: int = attrs.field(validator=power_of_two_in(1, 256))
    block_n: int = attrs.field(validator=power_of_two_in(16, 256))
    block_k: int = attrs.field(validator=power_of_two_in(8, 128))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))
    split_k: int = attrs.field(default=1, validator=int_in(1, 64))
    groups_per_block: int = attrs.field(default=1, validator=power_of_two_in(1, 64))
    phases: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    unit_stride: ClassVar[bool] = True  # backward-data's stride-1 flag, read by the rules

    @property
    def block_m(self) -> int:
        """Rows of the implicit GEMM per program: ``block_h · block_w`` output pixels."""
        return self.block_h * self.block_w

    @property
    def name(self) -> str:
        return (f"conv_tma_{self.direction}_{self.dtype.value}_{self.block_h}x{self.block_w}x{self.block_n}"
                f"x{self.block_k}_w{self.num_warps}_s{self.num_stages}" + (f"_k{self.split_k}" if self.split_k > 1 else "")
                + (f"_gpb{self.groups_per_block}" if self.groups_per_block > 1 else "") + ("_ph" if self.phases else ""))


@attrs.frozen(kw_only=True)
class ConvTmaFwdKey(ConvTmaKey):
    direction: ClassVar[str] = "fwd"


@attrs.frozen(kw_only=True)
class ConvTmaBwdDataKey(ConvTmaKey):
    direction: ClassVar[str] = "bwd_data"


@functools.lru_cache(maxsize=4096)
def geometry(direction: str, p: ConvProblem) -> dict[str, int]:
    """Kernel integer arguments by name: the source descriptor (x, or dy) [N·D, H, W, G, RED],
    the destination (y, or dx) [N·D_dst, H_dst, W_dst, G, COLS], filter sizes, padding,
    dilation, convolution strides (``str_*``; backward-data: 1), the row / h / w strides
    (elements) of both, and ``group_dim``: 1 where the source descriptor's fourth dimension is the
    group, 0 where it is the row phase of a height or width stride above 1 (:func:`source_view`).
    A 1×1 unpadded unit-stride filter folds N·D·H·W into W (size-1 dimensions get the w stride,
    which TMA accepts). Backward-weight reads x and dy, which have the forward's x and y geometry."""
    d3 = p.as_3d()
    (D, H, W), (Do, Ho, Wo) = d3["spatial"], d3["out"]
    red, cols = (p.Kg, p.Cg) if direction == "bwd_data" else (p.Cg, p.Kg)
    if direction == "bwd_data":
        (D, H, W), (Do, Ho, Wo) = (Do, Ho, Wo), (D, H, W)
    s_w, d_w = p.G * red, p.G * cols
    (str_d, str_h, str_w) = d3["stride"] if direction != "bwd_data" else (1, 1, 1)
    out = {"G": p.G, "RED": red, "COLS": cols, "s_w": s_w, "d_w": d_w, "str_d": str_d, "str_h": str_h,
           "str_w": str_w, "group_dim": int(str_h == str_w == 1)}
    if all(f == 1 for f in p.filter) and not any(p.pad) and all(s == 1 for s in p.stride):
        out.update(ND_src=1, D=1, H=1, W=p.N * D * H * W, ND_dst=1, D_dst=1, H_dst=1, W_dst=p.N * Do * Ho * Wo,
                   s_row=s_w, s_h=s_w, d_row=d_w, d_h=d_w)
    else:
        out.update(ND_src=p.N * D, D=D, H=H, W=W, ND_dst=p.N * Do, D_dst=Do, H_dst=Ho, W_dst=Wo,
                   s_row=H * W * s_w, s_h=W * s_w, d_row=Ho * Wo * d_w, d_h=Wo * d_w)
    out.update(zip(("Z", "Y", "X"), d3["filter"]))
    out.update(zip(("pad_d", "pad_h", "pad_w"), d3["pad"]))
    out.update(zip(("dil_d", "dil_h", "dil_w"), d3["dilation"]))
    return out


@functools.lru_cache(maxsize=4096)
def _views_of(family, key, p: ConvProblem) -> tuple:
    """(tensor, shape, strides, block) of each of ``family``'s descriptors for ``key`` on ``p``,
    in parameter order (memoised: a launch only wraps the tensors)."""
    views = family._views(key, p)
    return checked_views((t, *views[n], block, key.dtype.itemsize) for n, (t, block) in family.descriptor_blocks(key).items())


@functools.lru_cache(maxsize=4096)
def _int_args(direction: str, p: ConvProblem) -> tuple[int, ...]:
    """The integer kernel arguments in signature order (memoised: dispatch pays a lookup)."""
    g = geometry(direction, p)
    return tuple(g[n] for n in _ARGS)


_ARGS = ("ND_src", "D", "H", "W", "G", "RED", "ND_dst", "D_dst", "H_dst", "W_dst", "COLS", "Z", "Y", "X",
         "pad_d", "pad_h", "pad_w", "dil_d", "dil_h", "dil_w", "str_d", "str_h", "str_w", "group_dim",
         "s_row", "s_h", "s_w", "d_row", "d_h", "d_w")


def source_view(g: Mapping[str, int], groups: int, gpb: int = 1) -> tuple[list[int], list[int]]:
    """(shape, strides) in elements of the source activation's descriptor (x: forward and
    backward-weight; dy: backward-data), boxes [1, block_h, block_w, 1, channels], from
    :func:`geometry` ``g``:

    - unit height and width strides: [N·D, H, W, G / gpb, gpb · RED], the group its own
      dimension (a partial channel box never reads the next group's channels);
    - a height or width stride s_h, s_w above 1 (forward, backward-weight): the input split into
      row phases, [N·D, H / s_h, W / s_w, s_h, s_w · C] with strides [row, s_h · h, s_w · w, h, 1]:
      input pixel (s_h·i + a, s_w·j + b) at (i, j, a, b · C + channel). A tap's pixels for
      output rows oh0... are then one box at (oh0 + q_h, ow0 + q_w, a, b · C + g · RED + c0),
      where fy·dil - pad = q_h·s_h + a (``conv_tma.py.j2``); TMA's zero fill outside
      [0, H / s_h) is the padding. Needs H % s_h == W % s_w == 0 (no phase row beyond the
      image) and RED a multiple of the channel box (a box never reaches the next phase's or
      group's channels): :meth:`ConvTmaFamily._stride_reason`. The phase view does not depend
      on ``gpb``: a kernel of merged groups reads boxes of exactly ``gpb`` groups' channels
      (the stride-2 halo keys: :func:`.halo._phase_reason`)."""
    if g["group_dim"]:
        return ([g["ND_src"], g["H"], g["W"], groups // gpb, gpb * g["RED"]],
                [g["s_row"], g["s_h"], g["s_w"], gpb * g["RED"], 1])
    sh, sw = g["str_h"], g["str_w"]
    return ([g["ND_src"], g["H"] // sh, g["W"] // sw, sh, sw * g["s_w"]],
            [g["s_row"], sh * g["s_h"], sw * g["s_w"], g["s_h"], 1])


def dest_view(g: Mapping[str, int], groups: int, gpb: int = 1) -> tuple[list[int], list[int]]:
    """(shape, strides) in elements of the output-pixel activation's descriptor (y: forward; dx:
    backward-data; dy: backward-weight) from :func:`geometry` ``g``: [N·D_dst, H_dst, W_dst,
    G / gpb, gpb · COLS], boxes [1, block_h, block_w, 1, channels]."""
    return ([g["ND_dst"], g["H_dst"], g["W_dst"], groups // gpb, gpb * g["COLS"]],
            [g["d_row"], g["d_h"], g["d_w"], gpb * g["COLS"], 1])


class ConvTmaFamily(SplitSumTemplate, KernelFamily):
    """Shared behaviour of the TMA families."""

    direction: str
    template_package = "ck_plugin_grouped_conv"
    template = "conv_tma.py.j2"
    tensors: tuple[str, str, str]  # source activation, filter, destination

    def check(self, key, arch: ArchSpec) -> list[str]:
        """Static validity: TMA and tensor cores for the dtype, the operand pipeline plus an
        output tile fit shared memory, accumulators fit registers, warps fit a block, and the
        family's tile rules (:meth:`_tile_reasons`)."""
        item = key.dtype.itemsize
        smem = (key.num_stages * (key.block_m + key.block_n) * key.block_k + key.block_m * key.block_n) * item
        reasons = [f"{arch.arch} has no TMA (tensor memory accelerator)"] if not arch.tma else []
        reasons += mma_tile_reasons(key, arch, smem, smem_what=" (pipeline + output tile)")
        return reasons + self._tile_reasons(key)

    def _tile_reasons(self, key: ConvTmaKey) -> list[str]:
        """Forward and backward-data: a reduction row of at most one 128-byte swizzled TMA row,
        and a pixel patch of one or two warpgroup MMA tiles."""
        reasons = []
        if key.block_k * key.dtype.itemsize > 128:
            reasons.append(f"block_k {key.block_k} x {key.dtype.itemsize} B > 128 B (one swizzled TMA row)")
        if not 64 <= key.block_m <= 256:
            reasons.append(f"block_h*block_w = {key.block_m} outside [64, 256] (one or two warpgroup MMA tiles)")
        if key.groups_per_block > 1 and key.split_k > 1:
            reasons.append(f"groups_per_block {key.groups_per_block} with split_k {key.split_k}: merged groups take "
                           "one reduction step per tap, too few to split")
        if key.phases and (self.direction != "fwd" or key.groups_per_block > 1):
            reasons.append("phases: forward kernels with one group per program only (backward-data takes stride 1)")
        return reasons

    def bucket(self, key: ConvTmaKey):
        """(dtype, channels-last) of the conv op's ``bucket``, and for backward-data (stride 1
        only) and forward (stride 1 without ``phases``, above 1 with them) whether every stride
        is 1; backward-weight takes any stride."""
        if self.direction == "bwd_weight":
            return key.dtype, True
        return key.dtype, True, None, None, self.direction == "bwd_data" or not getattr(key, "phases", False)

    def supports(self, key: ConvTmaKey, p: ConvProblem) -> str | None:
        """Why ``key`` cannot run ``p`` (dtype, layout, stride, alignment, 32-bit coordinates,
        grid limits), or None."""
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        if not p.layout.channels_last:
            return f"TMA kernels are channels-last, layout {p.layout.value}"
        why = self._stride_reason(key, p)
        if why:
            return why
        if p.ptr_align != 16:
            return f"TMA needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
        item, gpb = p.dtype.itemsize, key.groups_per_block
        if gpb > 1:
            why = self._merged_reason(key, p)
            if why:
                return why
        for field in ("Cg", "Kg"):
            if gpb * getattr(p, field) * item % 16:
                return (f"TMA needs {'groups_per_block * ' if gpb > 1 else ''}{field} * {item} B % 16 == 0 "
                        f"({field}={getattr(p, field)}{f', groups_per_block={gpb}' if gpb > 1 else ''}: a descriptor stride)")
        return (int32_reason(p, "32-bit TMA coordinates") or grid_reason(self.grid(key, p))
                or self._split_reason(key, p))

    def _stride_reason(self, key, p: ConvProblem) -> str | None:
        """Backward-data takes stride 1; so do the forward kernels without ``phases``, and those
        with it take only strides above 1. Forward (``phases``: one group per program) and
        backward-weight take any depth stride, and height / width strides above 1 through the
        row-phase view of :func:`source_view`: H and W multiples of their strides, and C/G a
        multiple of the channel box (``block_k``; backward-weight ``block_n``)."""
        unit = all(s == 1 for s in p.stride)
        if self.direction == "bwd_data" or (self.direction == "fwd" and not key.phases):
            if unit:
                return None
            twin = " (one-group `_ph` kernels serve strides above 1)" if self.direction == "fwd" else ""
            return f"TMA kernels need stride 1 (stride {list(p.stride)}){twin}"
        if self.direction == "fwd" and unit:
            return "phases (`_ph`) kernels serve strides above 1; their twins without it serve stride 1"
        g = geometry(self.direction, p)
        if g["group_dim"]:
            return None
        box = key.block_n if self.direction == "bwd_weight" else key.block_k
        if g["H"] % g["str_h"] or g["W"] % g["str_w"]:
            return (f"a height / width stride above 1 needs input sizes divisible by it "
                    f"(H={g['H']}, W={g['W']}, stride {list(p.stride)})")
        if g["RED"] % box:
            return f"a height / width stride above 1 needs C/G={g['RED']} a multiple of the channel box {box}"
        return None

    def _merged_reason(self, key: ConvTmaKey, p: ConvProblem) -> str | None:
        """Why merged groups (``groups_per_block`` > 1) cannot serve ``p``: G not a multiple of
        them, or their reduction channels or columns beyond one tile."""
        g, gpb = geometry(self.direction, p), key.groups_per_block
        if p.G % gpb:
            return f"G={p.G} is not a multiple of groups_per_block={gpb}"
        if gpb * g["RED"] > key.block_k:
            return f"groups_per_block * {g['RED']} reduction channels per group > block_k {key.block_k}"
        if gpb * g["COLS"] > key.block_n:
            return f"groups_per_block * {g['COLS']} channels per group > block_n {key.block_n}"
        return None

    def _split_reason(self, key, p: ConvProblem) -> str | None:
        return split_reason(self, key, p, self._steps(key, p))

    def _steps(self, key, p: ConvProblem) -> int:
        """Reduction steps of one output tile: taps × blocks of ``block_k`` reduction channels
        (of ``groups_per_block`` groups)."""
        return p.taps * math.ceil(key.groups_per_block * geometry(self.direction, p)["RED"] / key.block_k)

    def signature(self, key) -> dict[str, str]:
        """The three tensors (and with a split the fp32 partials and int32 counters), the
        integer arguments of :func:`geometry`, the TMA descriptors (:meth:`descriptor_blocks`)
        and UPCAST."""
        ptr = f"*{key.dtype.triton}"
        sig = dict.fromkeys(self._ptr_names, ptr)
        if key.split_k > 1:
            sig.update({"ws_ptr": "*fp32", "lock_ptr": "*i32"})
        descs = {n: f"tensordesc<{key.dtype.triton}[{', '.join(map(str, b))}]>" for n, (_, b) in self.descriptor_blocks(key).items()}
        return {**sig, **{n: "i32" for n in _ARGS}, **descs, "UPCAST": "constexpr"}

    def descriptor_blocks(self, key) -> dict[str, tuple[str, tuple[int, ...]]]:
        """The kernel's TMA descriptors, made on the host and passed by value, by parameter name:
        (tensor, block shape). Forward / backward-data: ``src`` (x or dy) in boxes [1, block_h,
        block_w, 1, block_k], ``filt`` (w; one group per program only) in [1, block_n, 1,
        block_k] (backward-data: [1, block_k, 1, block_n]) and ``dst`` (y or dx) in [1, block_h,
        block_w, 1, block_n]. Made in each program instead, as before the seventeenth session,
        the descriptors cost the GEMM 2-4 µs a launch (``docs/performance.md``)."""
        src, w, dst = self.tensors
        out = {"src": (src, (1, key.block_h, key.block_w, 1, key.block_k))}
        if key.groups_per_block == 1:
            out["filt"] = (w, (1, key.block_n, 1, key.block_k) if self.direction == "fwd" else (1, key.block_k, 1, key.block_n))
        out["dst"] = (dst, (1, key.block_h, key.block_w, 1, key.block_n))
        return out

    def _views(self, key, p: ConvProblem) -> dict[str, tuple[list[int], list[int]]]:
        """(shape, strides) in elements of each descriptor of :meth:`descriptor_blocks`:
        the source activation of :func:`source_view` ([N·D, H, W, G / gpb, gpb · channels per
        group] at unit height and width strides, else the row phases), the destination of
        :func:`dest_view`, the filter [G, K/G, taps, C/G] (backward-data: [G, C/G, taps, K/G])."""
        g, gpb = geometry(self.direction, p), key.groups_per_block
        red, cols, taps = g["RED"], g["COLS"], p.taps
        return {"src": source_view(g, p.G, gpb),
                "filt": ([p.G, cols, taps, red] if self.direction == "fwd" else [p.G, red, taps, cols],
                         [cols * taps * red, taps * red, red, 1] if self.direction == "fwd" else [red * taps * cols, taps * cols, cols, 1]),
                "dst": dest_view(g, p.G, gpb)}

    def host_descriptors(self, key, p: ConvProblem, tensors: Mapping[str, Any]) -> tuple:
        """The descriptors of :meth:`descriptor_blocks` over the launch's tensors (their data
        pointers are the tensors' first elements: the op's tensor checks ensure it)."""
        return host_descriptors(_views_of(self, key, p), tensors)

    _ptr_names = ("src_ptr", "w_ptr", "dst_ptr")

    def constexprs(self, key: ConvTmaKey) -> dict[str, Any]:
        return {"UPCAST": False}

    def divisible_by_16(self, key) -> tuple[str, ...]:
        return self._ptr_names

    def compile_options(self, key: ConvTmaKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    def grid(self, key: ConvTmaKey, p: ConvProblem) -> tuple[int, int, int]:
        g = geometry(self.direction, p)
        pixels = g["ND_dst"] * math.ceil(g["H_dst"] / key.block_h) * math.ceil(g["W_dst"] / key.block_w)
        gpb = key.groups_per_block
        return pixels, math.ceil(gpb * g["COLS"] / key.block_n), p.G // gpb * key.split_k

    def workspaces(self, key, p: ConvProblem) -> dict[str, int]:
        """Split instances' partial tiles and counters (:func:`.family.split_workspaces`)."""
        return split_workspaces(self, key, p)

    def launch_args(self, key, p: ConvProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        upcast = interpret and key.dtype is DType.BF16  # the interpreter dots bf16 as integers
        ptrs = tuple(tensors[t] for t in self.tensors)
        if key.split_k > 1:
            ptrs += split_workspace_views(tensors)
        return ptrs + _int_args(self.direction, p) + self.host_descriptors(key, p, tensors) + (upcast,)

    def kernel_sets(self):
        from . import sets

        return {"default": lambda arch: sets.tma_set(self, arch, full=False),
                "full": lambda arch: sets.tma_set(self, arch, full=True)}

    def estimate_ms(self, key: ConvTmaKey, p: ConvProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        """The implicit-GEMM cost model of :mod:`.rules` (tiles of ``block_h · block_w`` rows)."""
        return rules.estimate_ms(self, key, p, arch, device)

    def features(self, key) -> dict[str, float]:
        """Tile sizes (the pixel patch too), warps, stages, split, merged groups and ``tma``."""
        feats = {"block_m": key.block_m, "block_n": key.block_n, "block_k": key.block_k, "block_h": key.block_h,
                 "block_w": key.block_w, "num_warps": key.num_warps, "num_stages": key.num_stages,
                 "split_k": float(key.split_k), "tma": 1.0}
        if self.direction != "bwd_weight":  # one group per program there
            feats["groups_per_block"] = float(key.groups_per_block)
        return feats

    def pair_features(self, key, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves; padding waste of the pixel patches and channel tiles (tile
        area over output pixels × channels); K steps per program (a split's share); log of the
        multiply-adds issued."""
        g = geometry(self.direction, p)
        grid = self.grid(key, p)
        programs = grid[0] * grid[1] * grid[2]
        k_steps = math.ceil(self._steps(key, p) / key.split_k)
        covered = g["ND_dst"] * g["H_dst"] * g["W_dst"] * g["COLS"] * p.G
        issued = programs * key.block_m * key.block_n * k_steps * key.block_k
        return tile_features(programs, arch.sm_count, k_steps,
                             programs * key.block_m * key.block_n / max(covered, 1) - 1.0, issued)


class ConvTmaFwd(ConvTmaFamily):
    """Forward through TMA: rows output pixels, columns output channels, reduction taps × C/G."""

    name = "conv_tma_fwd"
    op = "grouped_conv_fwd"
    direction = "fwd"
    key_cls = ConvTmaFwdKey
    tensors = ("x", "w", "y")


class ConvTmaBwdData(ConvTmaFamily):
    """Backward-data through TMA (stride 1): rows input pixels, columns input channels,
    reduction taps × K/G."""

    name = "conv_tma_bwd_data"
    op = "grouped_conv_bwd_data"
    direction = "bwd_data"
    key_cls = ConvTmaBwdDataKey
    tensors = ("dy", "w", "dx")


@attrs.frozen(kw_only=True)
class ConvTmaBwdWeightKey(_TmaTraits, KeyBase):
    """One TMA backward-weight kernel (channels-last, any stride: :func:`source_view`).

    :ivar block_h, block_w: the output-pixel patch one reduction step covers
        (``block_k = block_h · block_w`` pixels).
    :ivar block_m, block_n: output and input channels of the group per program (the dw tile).
    :ivar split_k: programs sharing one dw tile's patches (fp32 partials summed in fixed order:
        deterministic).
    """

    direction: ClassVar[str] = "bwd_weight"
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    block_h: int = attrs.field(validator=power_of_two_in(1, 256))
    block_w: int = attrs.field(validator=power_of_two_in(1, 256))
    block_m: int = attrs.field(validator=power_of_two_in(16, 256))
    block_n: int = attrs.field(validator=power_of_two_in(16, 256))
    split_k: int = attrs.field(default=1, validator=int_in(1, 256))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))

    @property
    def block_k(self) -> int:
        """Pixels per reduction step: ``block_h · block_w``."""
        return self.block_h * self.block_w

    @property
    def name(self) -> str:
        return (f"conv_tma_bwd_weight_{self.dtype.value}_{self.block_h}x{self.block_w}_{self.block_m}x{self.block_n}"
                f"_k{self.split_k}_w{self.num_warps}_s{self.num_stages}")


class ConvTmaBwdWeight(ConvTmaFamily):
    """Backward-weight through TMA: per tap, rows output channels, columns input
    channels, reduction output pixels in patches, optionally split over ``split_k`` programs."""

    name = "conv_tma_bwd_weight"
    op = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    key_cls = ConvTmaBwdWeightKey
    template = "conv_tma_bwd_weight.py.j2"
    tensors = ("x", "dy", "dw")

    def _tile_reasons(self, key: ConvTmaBwdWeightKey) -> list[str]:
        """The patch is the reduction step (16-256 pixels); each channel tile is at most 256
        bytes (two swizzled TMA rows)."""
        reasons = []
        if not 16 <= key.block_k <= 256:
            reasons.append(f"block_h*block_w = {key.block_k} outside [16, 256] pixels per step")
        for field in ("block_m", "block_n"):
            if getattr(key, field) * key.dtype.itemsize > 256:
                reasons.append(f"{field} {getattr(key, field)} x {key.dtype.itemsize} B > 256 B per TMA row")
        return reasons

    _ptr_names = ("x_ptr", "dy_ptr", "dw_ptr")

    def descriptor_blocks(self, key) -> dict[str, tuple[str, tuple[int, ...]]]:
        """``x_desc`` (x) in boxes [1, block_h, block_w, 1, block_n] and ``dy_desc`` (dy) in
        [1, block_h, block_w, 1, block_m], made on the host."""
        x, dy, _ = self.tensors
        return {"x_desc": (x, (1, key.block_h, key.block_w, 1, key.block_n)),
                "dy_desc": (dy, (1, key.block_h, key.block_w, 1, key.block_m))}

    def _views(self, key, p: ConvProblem) -> dict[str, tuple[list[int], list[int]]]:
        """x as :func:`source_view` describes it ([N·D, H, W, G, C/G], or its row phases with a
        height or width stride above 1) and dy as :func:`dest_view` describes it."""
        g = geometry(self.direction, p)
        return {"x_desc": source_view(g, p.G),
                "dy_desc": dest_view(g, p.G)}

    def _split_reason(self, key: ConvTmaBwdWeightKey, p: ConvProblem) -> str | None:
        """At most one split per pixel patch; at most :data:`MAX_TMA_SPLIT_REDUCTION` pixels per
        split in one fp32 accumulator."""
        tiles = self._steps(key, p)
        if key.split_k > tiles:
            return f"{tiles} pixel patches of {key.block_h}x{key.block_w}, fewer than split_k={key.split_k}"
        return accumulator_reason(p.N * p.out_pixels, key.split_k, MAX_TMA_SPLIT_REDUCTION)

    def _steps(self, key, p: ConvProblem) -> int:
        """Reduction steps of one dw tile: the pixel patches of the output."""
        g = geometry("bwd_weight", p)
        return g["ND_dst"] * math.ceil(g["H_dst"] / key.block_h) * math.ceil(g["W_dst"] / key.block_w)

    def grid(self, key: ConvTmaBwdWeightKey, p: ConvProblem) -> tuple[int, int, int]:
        return (math.ceil(p.Kg / key.block_m), p.taps * math.ceil(p.Cg / key.block_n), p.G * key.split_k)

    def pair_features(self, key: ConvTmaBwdWeightKey, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves; padding waste of the dw tiles and of the pixel patches; patch
        steps per program; log of the multiply-adds issued."""
        g = geometry(self.direction, p)
        grid = self.grid(key, p)
        programs = grid[0] * grid[1] * grid[2]
        k_steps = math.ceil(self._steps(key, p) / key.split_k)
        covered = p.Kg * p.Cg * p.taps * p.G * g["ND_dst"] * g["H_dst"] * g["W_dst"]
        issued = programs * key.block_m * key.block_n * k_steps * key.block_k
        return tile_features(programs, arch.sm_count, k_steps, issued / max(covered, 1) - 1.0, issued)


TMA_FAMILIES = (ConvTmaFwd, ConvTmaBwdData, ConvTmaBwdWeight)
