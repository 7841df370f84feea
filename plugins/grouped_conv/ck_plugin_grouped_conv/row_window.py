"""Filter-row families for first layers: ``conv_row_fwd`` and ``conv_row_bwd_weight``
(templates ``conv_row_fwd.py.j2``, ``conv_row_bwd_weight.py.j2``).

In a channels-last tensor the X taps of one filter row, over all C channels, read X·C
consecutive elements of one input row (unit dilation along w, one group), in the same order as
the filter row's X·C elements. A first layer (C = 3: ResNet's 7×7 stem reads 21 elements per
row) then reduces over Z·Y windows of ``block_k`` >= X·C elements whose addresses are the row's
start plus 0, 1, ...: one bounds test of the window against the row per element, where the
flat implicit-GEMM kernels decompose every reduction index into a tap and a channel and test it
against three dimensions. Backward-weight reduces over output pixels per filter row, its dw tile
being (output channels) × (the row's X·C elements).

Serves channels-last problems with G = 1, dilation 1 along w, X·C within one window (``block_k``
(forward) or ``block_n`` (backward-weight) over ``rows_per_step``; one more element for pairs
with odd window starts), K, y / dy strides and the y / dy pointer 16-divisible (the output
channel side loads and stores vectors), and 32-bit offsets. Other problems are left to the
implicit-GEMM families, which serve every valid problem.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar, Mapping

import attrs

from ckcore import DType, KernelFamily, KeyBase
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import boolean, enum_converter, int_in, member_of, power_of_two_in

from .family import (grid_reason, int32_reason, int_args, mma_tile_reasons, pixel_split_reason,
                     SplitSumTemplate, split_workspace_views, split_workspaces, tile_features)
from .keys import Access
from .problem import ConvProblem

__all__ = ["ConvRowKey", "ConvRowFwdKey", "ConvRowBwdWeightKey", "ConvRowFwd", "ConvRowBwdWeight", "ROW_FAMILIES",
           "row_set"]


@attrs.frozen(kw_only=True)
class ConvRowKey(KeyBase):
    """One filter-row kernel (channels-last, one group).

    :ivar dtype: element type of every tensor (fp32 runs on tensor cores as tf32).
    :ivar block_m, block_n, block_k: tile of the GEMM per filter row. Forward: output pixels ×
        output channels, ``block_k`` the window (>= X·C). Backward-weight: output channels × the
        window (``block_n`` >= X·C), ``block_k`` output pixels per reduction step.
    :ivar num_warps, num_stages: Triton launch and pipelining options.
    :ivar split_k: backward-weight only: programs sharing one dw tile's pixels (fp32 partials
        summed in fixed order: deterministic).
    :ivar rows_per_step: filter rows side by side in the window tile, each in ``tile / rows``
        elements: forward loads that many rows per reduction step, backward-weight serves that
        many per program from one dy tile (``_r<n>`` in the name when above 1).
    :ivar pairs: backward-weight only: windows load two elements (4 bytes in 16-bit, 8 in fp32)
        at a time from the even element at or below their start, so they go through the
        asynchronous copy pipeline (``_p2`` in the name). Not declared: :meth:`ConvRowBwdWeight.specialize`
        derives it for problems whose window starts share one parity (:func:`pairs_reason`), and
        the selection features do not tell the twins apart (the derived one runs in place of the
        declared one).
    """

    direction: ClassVar[str] = ""
    channels_last: ClassVar[bool] = True  # what the shared conv code (tests, rules) reads
    groups_per_block: ClassVar[int] = 1
    access: ClassVar[Access] = Access.A16K  # output-channel side 16-divisible, 32-bit offsets
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    block_m: int = attrs.field(validator=power_of_two_in(16, 256))
    block_n: int = attrs.field(validator=power_of_two_in(16, 256))
    block_k: int = attrs.field(validator=power_of_two_in(16, 256))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))
    split_k: int = attrs.field(default=1, validator=int_in(1, 512))
    rows_per_step: int = attrs.field(default=1, validator=power_of_two_in(1, 16))
    pairs: bool = attrs.field(default=False, validator=boolean)

    @property
    def name(self) -> str:
        return (f"conv_row_{self.direction}_{self.dtype.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_w{self.num_warps}_s{self.num_stages}" + (f"_k{self.split_k}" if self.split_k > 1 else "")
                + (f"_r{self.rows_per_step}" if self.rows_per_step > 1 else "") + ("_p2" if self.pairs else ""))


@attrs.frozen(kw_only=True)
class ConvRowFwdKey(ConvRowKey):
    direction: ClassVar[str] = "fwd"


@attrs.frozen(kw_only=True)
class ConvRowBwdWeightKey(ConvRowKey):
    direction: ClassVar[str] = "bwd_weight"


_ARGS = ("C", "K", "D", "H", "W", "Do", "Ho", "Wo", "Z", "Y", "XC", "str_d", "str_h", "str_w", "pad_d", "pad_h",
         "pad_w", "dil_d", "dil_h", "rows", "sxn", "sxd", "sxh", "swk", "swz", "swy", "syn", "syd", "syh", "syw")
_HINTED = ("K", "syn", "syd", "syh", "syw")  # the output-channel side: vectors of y / dy


@functools.lru_cache(maxsize=4096)
def _int_args(p: ConvProblem) -> dict[str, int]:
    """Kernel integer arguments by name: :func:`.family.int_args` (sizes padded to 3-D, strides),
    XC = X·C (the elements of a filter row) and rows = N·output pixels (M or P)."""
    return {**int_args(p, 1), "XC": p.as_3d()["filter"][2] * p.C, "rows": p.N * p.out_pixels}


def pairs_reason(p: ConvProblem, window: int) -> str | None:
    """Why ``p``'s windows cannot load in pairs, or None. Pairs need every window start (element
    (ow·str_w - pad_w)·C of an input row) of one parity and every row start even: str_w·C and
    W·C even (the packed channels-last pitches of rows, planes and images are multiples of
    W·C); and room in a ``window``-element tile for the element below an odd start."""
    d3 = p.as_3d()
    W, str_w, pad_w, X = d3["spatial"][2], d3["stride"][2], d3["pad"][2], d3["filter"][2]
    if str_w * p.C % 2 or W * p.C % 2:
        return f"window starts of mixed parity (str_w*C={str_w * p.C}, W*C={W * p.C})"
    if X * p.C + pad_w * p.C % 2 > window:
        return f"X*C = {X * p.C} plus one element below an odd start > {window}-element windows"
    return None


class ConvRowFamily(SplitSumTemplate, KernelFamily):
    """Shared behaviour of the two filter-row families."""

    direction: str
    template_package = "ck_plugin_grouped_conv"
    tensors: tuple[str, str, str]

    @property
    def template(self) -> str:
        return f"conv_row_{self.direction}.py.j2"

    def _tile(self, key: ConvRowKey) -> int:
        """The tile extent that holds ``rows_per_step`` filter rows."""
        raise NotImplementedError

    def _window(self, key: ConvRowKey) -> int:
        """Elements of one filter row's window (at least X·C)."""
        return self._tile(key) // key.rows_per_step

    def check(self, key: ConvRowKey, arch: ArchSpec) -> list[str]:
        """Static validity on ``arch``: tensor cores take the dtype, the operand pipeline fits
        shared memory, the reduction step meets the MMA minimum K, accumulators fit registers,
        only backward-weight splits."""
        smem = key.num_stages * (key.block_m + key.block_n) * key.block_k * key.dtype.itemsize
        reasons = mma_tile_reasons(key, arch, smem)
        if self.direction == "fwd" and key.split_k > 1:
            reasons.append(f"split_k={key.split_k}: only backward-weight splits its reduction")
        if key.pairs and self.direction == "fwd":
            # resnet50.conv1 and the first-layer suite, H100: no faster than the element loads on
            # the conv1 rows, up to 1.27x slower on others (docs/performance.md)
            reasons.append("pairs: backward-weight only (forward measured slower with them)")
        if self._window(key) < 8:
            reasons.append(f"rows_per_step={key.rows_per_step}: windows of {self._window(key)} < 8 elements")
        return reasons

    def bucket(self, key: ConvRowKey):
        """(dtype, channels-last, one group) of the conv op's ``bucket``."""
        return key.dtype, True, True

    def supports(self, key: ConvRowKey, p: ConvProblem) -> str | None:
        """Why ``key`` cannot run ``p``, or None: dtype; channels-last; one group; dilation 1
        along w; the row's X·C elements within the window tile; 16-byte aligned pointers with K
        and the y / dy strides 16-divisible; 32-bit offsets; grid limits; splits."""
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        if not p.layout.channels_last:
            return f"filter-row kernels are channels-last, layout {p.layout.value}"
        if p.G != 1:
            return f"filter-row kernels serve one group (G={p.G}): a group's channels are not a row's consecutive elements"
        if p.dilation[-1] != 1:
            return f"filter-row kernels need dilation 1 along w (dilation {list(p.dilation)})"
        args = _int_args(p)
        if key.pairs:
            why = pairs_reason(p, self._window(key))
            if why:
                return f"pairs kernel: {why}"
        if args["XC"] > self._window(key):
            return f"a filter row's X*C = {args['XC']} elements > the {self._window(key)}-element window tile"
        if p.ptr_align != 16:
            return f"needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
        for name in _HINTED:
            if args[name] % 16:
                return f"needs {name} % 16 == 0 ({name}={args[name]})"
        return int32_reason(p) or grid_reason(self.grid(key, p)) or self._split_reason(key, p)

    def _split_reason(self, key: ConvRowKey, p: ConvProblem) -> str | None:
        return None

    def signature(self, key: ConvRowKey) -> dict[str, str]:
        """The three tensors (backward-weight with a split: the fp32 partials and int32
        counters), the integer arguments (32-bit; ``rows`` is M or P) and UPCAST."""
        ptr = f"*{key.dtype.triton}"
        sig = {f"{t}_ptr": ptr for t in self.tensors}
        if key.split_k > 1:
            sig.update({"ws_ptr": "*fp32", "lock_ptr": "*i32"})
        sig.update({self._rows_arg if n == "rows" else n: "i32" for n in _ARGS})
        sig["UPCAST"] = "constexpr"
        return sig

    _rows_arg = "M"

    def constexprs(self, key: ConvRowKey) -> dict[str, Any]:
        return {"UPCAST": False}

    def divisible_by_16(self, key: ConvRowKey) -> tuple[str, ...]:
        """The output-channel side (K, the y / dy pointer and strides); split workspaces; the x
        pointer for pairs (supports checks ``ptr_align``)."""
        out_ptr = "y_ptr" if self.direction == "fwd" else "dy_ptr"
        ws = ("ws_ptr", "lock_ptr") if key.split_k > 1 else ()
        return (out_ptr,) + _HINTED + ws + (("x_ptr",) if key.pairs else ())

    def compile_options(self, key: ConvRowKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    def launch_args(self, key: ConvRowKey, p: ConvProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        upcast = interpret and key.dtype is DType.BF16  # the interpreter dots bf16 as integers
        ptrs = tuple(tensors[t] for t in self.tensors)
        if key.split_k > 1:
            ptrs += split_workspace_views(tensors)
        return ptrs + _ordered_ints(p) + (upcast,)

    def workspaces(self, key: ConvRowKey, p: ConvProblem) -> dict[str, int]:
        """Split instances' partial tiles and counters (:func:`.family.split_workspaces`)."""
        return split_workspaces(self, key, p)

    def kernel_sets(self):
        return {"default": lambda arch: row_set(self, arch, full=False),
                "full": lambda arch: row_set(self, arch, full=True)}

    def features(self, key: ConvRowKey) -> dict[str, float]:
        """Tile sizes, warps, stages, split and rows per step (not ``pairs``: the twins share
        the declared key's features)."""
        return {"block_m": key.block_m, "block_n": key.block_n, "block_k": key.block_k, "num_warps": key.num_warps,
                "num_stages": key.num_stages, "split_k": float(key.split_k), "rows_per_step": float(key.rows_per_step)}

    def estimate_ms(self, key: ConvRowKey, p: ConvProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        """max(tensor-core time of the tiles issued at half the dense peak (tiles of 64-128
        columns), minimum traffic at HBM bandwidth) + 0.05 µs per reduction step and program
        wave + 4 µs launch. Peaks and bandwidth from the arch specs; the constants order
        candidates, ``ckcore profile`` measures them."""
        peak = device.peak_tflops["tf32" if p.dtype is DType.FP32 else p.dtype.value] * 1e12
        grid = self.grid(key, p)
        programs = math.prod(grid)
        steps = self._steps(key, p)
        issued = programs * 2.0 * key.block_m * key.block_n * key.block_k * steps
        min_bytes = sum(p.numel().values()) * p.dtype.itemsize
        if key.split_k > 1:
            min_bytes += 2 * programs * key.block_m * key.block_n * 4
        waves = math.ceil(programs / arch.sm_count)
        return (max(issued / (0.5 * peak), min_bytes / (device.mem_bandwidth_gbps * 1e9)) + waves * steps * 0.05e-6) * 1e3 + 0.004

    def pair_features(self, key: ConvRowKey, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves; reduction steps per program; padding waste (tile area issued
        over the useful multiply-adds, minus 1); log of the multiply-adds issued."""
        programs = math.prod(self.grid(key, p))
        steps = self._steps(key, p)
        issued = programs * key.block_m * key.block_n * key.block_k * steps
        useful = p.N * p.out_pixels * p.K * p.C * p.taps
        return tile_features(programs, arch.sm_count, steps, issued / max(useful, 1) - 1.0, issued)

    def _steps(self, key: ConvRowKey, p: ConvProblem) -> int:
        raise NotImplementedError


@functools.lru_cache(maxsize=4096)
def _ordered_ints(p: ConvProblem) -> tuple[int, ...]:
    args = _int_args(p)
    return tuple(args[n] for n in _ARGS)


class ConvRowFwd(ConvRowFamily):
    """Forward by filter rows: rows output pixels, columns output channels, reduction Z·Y
    windows of X·C input elements."""

    name = "conv_row_fwd"
    op = "grouped_conv_fwd"
    direction = "fwd"
    key_cls = ConvRowFwdKey
    tensors = ("x", "w", "y")

    def _tile(self, key):
        return key.block_k

    def grid(self, key, p):
        return math.ceil(p.N * p.out_pixels / key.block_m), math.ceil(p.K / key.block_n), 1

    def _steps(self, key, p):
        return math.ceil(p.as_3d()["filter"][0] * p.as_3d()["filter"][1] / key.rows_per_step)


class ConvRowBwdWeight(ConvRowFamily):
    """Backward-weight by filter rows: per filter row, rows output channels, columns the row's
    X·C elements, reduction N·output pixels split over ``split_k`` programs."""

    name = "conv_row_bwd_weight"
    op = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    key_cls = ConvRowBwdWeightKey
    tensors = ("x", "dy", "dw")
    _rows_arg = "P"

    def _tile(self, key):
        return key.block_n

    def grid(self, key, p):
        d3 = p.as_3d()
        return math.ceil(p.K / key.block_m), math.ceil(d3["filter"][0] * d3["filter"][1] / key.rows_per_step), key.split_k

    def _steps(self, key, p):
        return math.ceil(math.ceil(p.N * p.out_pixels / key.block_k) / key.split_k)

    def specialize(self, key: ConvRowKey, p: ConvProblem) -> ConvRowKey:
        """The pairs twin (:attr:`ConvRowKey.pairs`) where ``key`` serves ``p`` and ``p``'s
        windows allow pairs (:func:`pairs_reason`), else ``key``."""
        if key.pairs or self.supports(key, p) is not None or pairs_reason(p, self._window(key)) is not None:
            return key
        return attrs.evolve(key, pairs=True)

    def _split_reason(self, key, p):
        """:func:`.family.pixel_split_reason`."""
        return pixel_split_reason(key, p)


ROW_FAMILIES = (ConvRowFwd, ConvRowBwdWeight)

# Forward (block_m, block_n, block_k, num_warps, num_stages, rows_per_step): output pixels × output
# channels × rows_per_step windows; windows of 16-64 elements (C = 3 with 3-16 taps per row, C = 1
# audio filters), one or several filter rows per step.
_FWD = [(128, 64, 32, 4, 3, 1), (128, 64, 64, 4, 3, 1), (256, 64, 32, 8, 3, 1), (64, 64, 32, 4, 3, 1),
        (128, 128, 32, 8, 3, 1), (128, 64, 16, 4, 3, 1), (128, 128, 64, 8, 3, 1), (64, 128, 64, 4, 3, 1),
        (128, 64, 64, 4, 3, 2), (128, 64, 128, 4, 3, 4), (128, 64, 256, 8, 2, 8), (64, 64, 256, 4, 2, 8),
        (128, 128, 128, 8, 3, 4), (128, 64, 32, 4, 3, 2), (128, 64, 64, 4, 3, 4), (128, 64, 128, 4, 3, 8),
        (128, 128, 128, 8, 3, 2)]
# Backward-weight (block_m, block_n, block_k, split_k, num_warps, num_stages, rows_per_step):
# output channels × rows_per_step windows × pixels per step, split over programs.
_WGRAD = [(64, 32, 64, s, 4, 3, 1) for s in (1, 4, 16, 64, 256)] + [(64, 64, 64, s, 4, 3, 1) for s in (16, 64, 256)] + \
         [(64, 16, 64, s, 4, 3, 1) for s in (16, 64)] + [(128, 32, 64, s, 8, 3, 1) for s in (16, 64)] + \
         [(64, 32, 128, 64, 4, 3, 1), (128, 64, 64, 64, 8, 3, 1)] + \
         [(64, 64, 64, s, 4, 3, 2) for s in (16, 64)] + [(64, 128, 64, s, 4, 3, 4) for s in (16, 64)] + \
         [(64, 256, 64, s, 8, 3, 8) for s in (16, 64)] + [(64, 64, 64, 64, 4, 3, 4), (64, 128, 64, 64, 4, 3, 8)]


def row_set(family: ConvRowFamily, arch: ArchSpec, full: bool) -> list:
    """The filter-row instances valid on ``arch``, per dtype: :data:`_FWD` or :data:`_WGRAD`
    (backward-weight in fp32 with at most 32 pixels per step: twice the bytes); ``full`` adds 2
    stages."""
    keys = []
    for dtype in DType:
        if family.direction == "fwd":
            cfgs = [(bm, bn, bk, w, s, 1, r) for bm, bn, bk, w, s, r in _FWD]
        else:
            cfgs = [(bm, bn, min(bk, 32) if dtype is DType.FP32 else bk, w, s, split, r)
                    for bm, bn, bk, split, w, s, r in _WGRAD]
        for bm, bn, bk, w, s, split, rows in cfgs:
            for st in (s, 2) if full else (s,):
                key = family.key_cls(dtype=dtype, block_m=bm, block_n=bn, block_k=bk, num_warps=w, num_stages=st,
                                     split_k=split, rows_per_step=rows)
                if key not in keys and not family.check(key, arch):
                    keys.append(key)
    return keys
