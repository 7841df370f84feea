"""Keys of the direct depthwise families."""

from __future__ import annotations

import functools

from typing import ClassVar

import attrs

from ckcore import DType, KeyBase
from ckcore.keys import boolean, enum_converter, int_in, member_of, power_of_two_in
from ck_plugin_grouped_conv.keys import Access, access_in

__all__ = ["DwKey", "DwSpatialKey", "DwFwdKey", "DwBwdDataKey", "DwBwdWeightKey", "DwWindowKey", "DwWindowFwdKey",
           "DwWindowBwdDataKey", "DwWindowBwdWeightKey", "GroupWindowFwdKey", "GroupWindowBwdDataKey",
           "GroupWindowBwdWeightKey"]


@attrs.frozen(kw_only=True)
class DwKey(KeyBase):
    """One direct depthwise kernel: a program owns ``block_p`` pixels × ``block_c`` channels
    (vectorised across channels in channels-last layouts), loops over the filter taps without
    unrolling the whole filter (``unroll`` taps per step; compile time stays flat for 7×7 and 31-tap filters), accumulates in fp32
    with the weights of its channels in registers.

    :ivar access: ``a16`` (16-byte aligned, 16-divisible channel counts and strides), ``v4``
        (16-byte aligned pointers, channel counts and strides divisible by 4 elements), ``i32``
        or ``generic`` (64-bit offsets, every valid problem).
    :ivar multiplier_one: assumes channel multiplier K/G = 1, so output channel k reads input
        channel k and channel vectors stay contiguous (``_m1``).
    :ivar multiplier_two: assumes K/G = 2 (``_m2``; the sliding windows and the channels-last
        tap-by-tap backward-data kernels). ``block_c``
        counts filter channels k (y's in the forward, dy's in the backward directions); the
        program's x / dx channels are the ``block_c / 2`` channels k // 2, loaded or stored as
        contiguous channel vectors: the forward keeps two accumulators, of the even and the odd
        k, and interleaves them at the store; backward-data accumulates per dy channel and adds
        the pairs at the store; backward-weight splits each dy tile into its even and odd
        channels. Without either, output channel k reads input channel k // Kg through a
        division, and the kernel loads those channels one element at a time.
    :ivar unroll: filter taps per loop step (``_t{unroll}``; 1 keeps one tap per step). Forward
        and backward-data: the step's loads are issued back to back, so ``unroll`` of them are in
        flight per warp. Backward-weight: taps per pass over the pixels, each with its own
        accumulator tile, so dy is read ceil(taps / unroll) times. The last step masks the taps
        past the filter.
    """

    direction: ClassVar[str] = ""
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    channels_last: bool = attrs.field(validator=boolean)
    block_p: int = attrs.field(validator=power_of_two_in(1, 1024))
    block_c: int = attrs.field(validator=power_of_two_in(1, 1024))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=1, validator=int_in(1, 8))
    access: Access = attrs.field(default=Access.A16, converter=enum_converter(Access),
                                 validator=[member_of(Access), access_in(Access.A16, Access.V4, Access.I32, Access.GENERIC)])
    multiplier_one: bool = attrs.field(default=False, validator=boolean)
    multiplier_two: bool = attrs.field(default=False, validator=boolean)
    unroll: int = attrs.field(default=1, validator=int_in(1, 32))

    groups_per_block: ClassVar[int] = 1

    @property
    def aligned(self) -> bool:
        return self.access is Access.A16

    @property
    def name(self) -> str:
        return (f"dw_{self.direction}_{self.dtype.value}_{'cl' if self.channels_last else 'cf'}"
                f"_p{self.block_p}xc{self.block_c}_w{self.num_warps}_s{self.num_stages}{self._suffix()}"
                f"{'_m1' if self.multiplier_one else ''}{'_m2' if self.multiplier_two else ''}{f'_t{self.unroll}' if self.unroll > 1 else ''}"
                f"_{self.access.value}")

    def _suffix(self) -> str:
        return ""


@attrs.frozen(kw_only=True)
class DwSpatialKey(DwKey):
    """Plus ``block_h`` (forward, backward-data, backward-weight): 0 takes ``block_p``
    consecutive pixels of N·output pixels; above 0 a spatial tile of ``block_h`` output rows ×
    ``block_p / block_h`` columns of one plane (``_h{block_h}``, channels-last). Forward and
    backward-data (templates/dw_tile.j2) run the taps as nested loops over the filter's depth,
    rows and columns, so bounds and offsets are computed once per filter row and checked once per
    column tap (SASS: 3.7-4.6 instead of 7.5 instructions per fp32 FMA in the tap loop);
    backward-weight steps over patches with one unsigned bound per dimension and tap (5.2-5.9
    instead of 5.7-6.9)."""

    block_h: int = attrs.field(default=0, validator=int_in(0, 1024))

    def _suffix(self) -> str:
        return f"_h{self.block_h}" if self.block_h else ""


@attrs.frozen(kw_only=True)
class DwFwdKey(DwSpatialKey):
    direction: ClassVar[str] = "fwd"


@attrs.frozen(kw_only=True)
class DwBwdDataKey(DwSpatialKey):
    """Plus ``unit_stride``: the kernel assumes stride 1 in every dimension, so output pixels
    are input pixels shifted by the tap, with no per-tap division by the stride (``_u1``, as in
    the implicit-GEMM backward-data family). Spatial tiles need unit stride and multiplier one
    (the forward of dy with the filter flipped)."""

    direction: ClassVar[str] = "bwd_data"
    unit_stride: bool = attrs.field(default=False, validator=boolean)

    def _suffix(self) -> str:
        return ("_u1" if self.unit_stride else "") + super()._suffix()


@attrs.frozen(kw_only=True)
class DwBwdWeightKey(DwSpatialKey):
    """Plus ``split``: programs sharing the reduction over N·output pixels; each writes fp32
    partial sums for all taps of its channels, the last to arrive adds them in split order
    (deterministic). With ``block_h`` a program's share is a range of spatial patches (``block_h``
    output rows × ``block_p / block_h`` columns of one plane) instead of consecutive pixels."""

    direction: ClassVar[str] = "bwd_weight"
    split: int = attrs.field(default=32, validator=int_in(1, 1024))

    def passes(self, p) -> int:
        """Passes over the pixels for problem ``p``: ``unroll`` taps each."""
        return -(-p.taps // self.unroll)

    def _suffix(self) -> str:
        return f"_k{self.split}" + super()._suffix()


@functools.lru_cache(maxsize=1024)
def _distinct_columns(block_w: int, unroll: int, stride_w: int, dilation_w: int) -> int:
    """Distinct j · stride_w + f · dilation_w for j < block_w, f < unroll (memoised: selection
    asks per candidate)."""
    return len({j * stride_w + f * dilation_w for j in range(block_w) for f in range(unroll)})


@attrs.frozen(kw_only=True)
class DwWindowKey(DwKey):
    """A sliding-window kernel (templates/dw_win.j2, channels-last): a program owns ``block_h``
    output rows (of N·depth·height of the output plane: y's forward, dx's backward-data; a tensor
    dimension) × ``block_w`` consecutive output columns (unrolled in the rendered kernel, one
    accumulator tile each) × ``block_c`` channels; ``block_p`` = ``block_h`` · ``block_w``. For
    each filter row, a step of ``unroll`` column taps loads each source column it touches once and
    accumulates every (output column, tap) pair that reads it: :attr:`columns` loads (at most
    (block_w - 1) · stride_w + (unroll - 1) · dilation_w + 1) for block_w · unroll FMA tiles. No
    ``generic`` access: problems beyond 32-bit offsets go to the tap-by-tap families. The column stride and
    dilation are compiled in and must equal the problem's (``_sw{stride_w}d{dilation_w}``);
    ``_x{block_w}`` names the column count. ``unroll_rows`` (``_r{n}``): the filter-row loop
    unrolled n times (Triton's ``loop_unroll_factor``), so the loads of n filter rows can be in
    flight together. ``max_registers`` (``_mr{n}``; 0: no cap): Triton's ``maxnreg``, a register
    cap per thread, so more programs fit an SM (the 16x8x32 tile otherwise takes 237, 12.5%
    occupancy: docs/performance.md, twelfth session); ptxas spills what does not fit."""

    dot: ClassVar[bool] = False  # tensor-core (block-diagonal tl.dot) windows: GroupWindow{Fwd,BwdData,BwdWeight}Key

    block_h: int = attrs.field(default=4, validator=power_of_two_in(1, 1024))
    block_w: int = attrs.field(default=8, validator=power_of_two_in(1, 32))
    stride_w: int = attrs.field(default=1, validator=int_in(1, 4))
    dilation_w: int = attrs.field(default=1, validator=int_in(1, 4))
    unroll_rows: int = attrs.field(default=1, validator=int_in(1, 8))
    max_registers: int = attrs.field(default=0, validator=int_in(0, 255))

    @property
    def name(self) -> str:
        """``dw_win_<direction>_...``; tensor-core grouped windows (``dot``) ``gw_win_<direction>_...``."""
        prefix = "gw_win" if self.dot else "dw_win"
        return super().name.replace(f"dw_{self.direction}_", f"{prefix}_{self.direction}_", 1)

    @property
    def columns(self) -> int:
        """Source columns one full step of ``unroll`` taps loads: the distinct j · stride_w +
        f · dilation_w over output columns j and taps f of the step."""
        return _distinct_columns(self.block_w, self.unroll, self.stride_w, self.dilation_w)

    def row_loads(self, taps_w: int) -> int:
        """Source column tiles a program loads per filter row of ``taps_w`` column taps:
        :attr:`columns` per whole step of ``unroll`` taps, ``block_w`` per remaining tap."""
        steps, rest = divmod(taps_w, self.unroll)
        return steps * self.columns + rest * self.block_w

    def _suffix(self) -> str:
        rows = f"_r{self.unroll_rows}" if self.unroll_rows > 1 else ""
        cap = f"_mr{self.max_registers}" if self.max_registers else ""
        return f"_h{self.block_h}_x{self.block_w}_sw{self.stride_w}d{self.dilation_w}{rows}{cap}"


@attrs.frozen(kw_only=True)
class DwWindowFwdKey(DwWindowKey):
    direction: ClassVar[str] = "fwd"


@attrs.frozen(kw_only=True)
class DwWindowBwdDataKey(DwWindowKey):
    """Backward-data: unit stride in every dimension and multiplier one (the forward of dy with
    the filter flipped) or two (the same per dy channel, each dx channel's pair added at the
    store)."""

    direction: ClassVar[str] = "bwd_data"

    @property
    def unit_stride(self) -> bool:
        return True


@attrs.frozen(kw_only=True)
class DwWindowBwdWeightKey(DwWindowKey):
    """Backward-weight (templates/dw_win_bwd_weight.py.j2): a program owns ``block_c`` channels,
    one filter row (depth and height) and a step of ``unroll`` column taps, and a ``split``-th of
    the rows of N·Do·Ho (in blocks of ``block_h``). Per block of rows and ``block_w`` output
    columns it loads each dy column once and each x column of the step once
    (:attr:`~DwWindowKey.columns`), and accumulates every (output column, tap) pair that reads
    it into the tap's [block_h, block_c] fp32 tile; dy is read once per filter row and step.
    ``filter_rows`` (``_fr{n}``; 1: none): a program owns n consecutive filter rows instead of
    one and reads each dy column once for all of them (n × ``unroll`` accumulator tiles), so dy
    is read once per n filter rows and step. ``tree_reduce`` (``_tr``; a power-of-two ``split``):
    the program that sums the partials (the last of a pass: ``dw_common.reduce_pass``, or
    ``reduce_pass_scan`` for 7-tap steps at split <= 16) loads up to 2048 // ``block_c`` partials of a tap at
    once and sums them as a tree (``tl.sum``, a fixed order) instead of up to 16 at a time in
    split order, so the reduction after the last arrival takes split / that many dependent steps
    per tap.
    The partials are combined as in :class:`DwBwdWeightKey` (``_k{split}``, deterministic).
    Any channel multiplier (``multiplier_one`` as elsewhere); ``num_stages`` 1 only."""

    direction: ClassVar[str] = "bwd_weight"
    split: int = attrs.field(default=32, validator=int_in(1, 1024))
    filter_rows: int = attrs.field(default=1, validator=int_in(1, 8))
    tree_reduce: bool = attrs.field(default=False, validator=boolean)

    def passes(self, p) -> int:
        """Programs per (channel block, split): filter depth × groups of ``filter_rows`` filter
        rows × steps of ``unroll`` taps."""
        z, y, x = p.as_3d()["filter"]
        return z * -(-y // self.filter_rows) * -(-x // self.unroll)

    def _suffix(self) -> str:
        rows = f"_fr{self.filter_rows}" if self.filter_rows > 1 else ""
        return f"_k{self.split}" + super()._suffix() + rows + ("_tr" if self.tree_reduce else "")


@attrs.frozen(kw_only=True)
class GroupWindowFwdKey(DwWindowKey):
    """Grouped forward sliding windows on tensor cores (``gw_win_fwd``, templates/dw_win.j2 with
    ``dot``), for few channels per group with as many outputs as inputs per group (C/G = K/G,
    e.g. ResNeXt's 4-32): a program owns ``block_h`` output rows × ``block_w`` output columns ×
    ``block_c`` channels holding whole groups. Each source column of a filter row is loaded once
    as a [block_h, block_c] tile in the input dtype, and every (output column, tap) pair that
    reads it adds ``tl.dot`` of it with the tap's block-diagonal [block_c, block_c] filter tile
    (a group's outputs see only its own inputs; block_c / (C/G) groups per tile) to that column's
    fp32 accumulator. Fields as in :class:`DwWindowKey`; ``multiplier_one`` does not apply."""

    direction: ClassVar[str] = "fwd"
    dot: ClassVar[bool] = True


@attrs.frozen(kw_only=True)
class GroupWindowBwdDataKey(DwWindowBwdDataKey):
    """Grouped backward-data sliding windows on tensor cores (``gw_win_bwd_data``): unit stride,
    C/G = K/G >= 4; the forward of dy with the filter flipped and each group's filter transposed,
    as :class:`GroupWindowFwdKey` (block-diagonal [block_c, block_c] tiles, rows of N·D·H of dx)."""

    dot: ClassVar[bool] = True


@attrs.frozen(kw_only=True)
class GroupWindowBwdWeightKey(DwWindowBwdWeightKey):
    """Grouped backward-weight sliding windows on tensor cores (``gw_win_bwd_weight``,
    templates/gw_win_bwd_weight.py.j2), C/G = K/G >= 4: as :class:`DwWindowBwdWeightKey`, but
    each (dy column, tap) pair that reads an x column adds ``tl.dot`` of the dy column's
    transpose [block_c, block_h] with the x column [block_h, block_c] to the tap's
    [block_c, block_c] fp32 tile, whose block-diagonal part (block_c × C/G values: a group's
    outputs against its own inputs) is the program's partial. Unlike the depthwise windows, a
    split's share is a range of units of ``block_h`` rows × ``block_w`` output columns, walked in
    one loop that Triton pipelines (``num_stages`` > 1 allowed), and the partials are summed per
    (channel block, pass); ``tree_reduce`` and ``unroll_rows`` do not apply."""

    dot: ClassVar[bool] = True
