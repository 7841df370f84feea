"""Keys of the implicit-GEMM grouped convolution families (one family per direction)."""

from __future__ import annotations

import enum
from typing import ClassVar

import attrs

from ckcore import DType, KeyBase
from ckcore.errors import InvalidKernelKey
from ckcore.keys import boolean, enum_converter, int_in, member_of, power_of_two_in

__all__ = ["Access", "access_in", "ConvKey", "ConvFwdKey", "ConvBwdDataKey", "ConvBwdWeightKey"]


class Access(str, enum.Enum):
    """How a kernel addresses memory: ``a16`` (16-byte aligned pointers, 16-divisible channel
    counts and strides, 32-bit offsets: vector loads), ``a16k`` (the same assumptions on the
    output-channel side only: K, the y / dy pointer and strides; the input-channel side (C, x /
    dx, w) unassumed, for first layers with C = 3 and K = 64), ``i32`` (no divisibility
    assumptions, 32-bit offsets), ``generic`` (no assumptions, 64-bit offsets: any valid
    problem); ``v4`` (direct depthwise kernels only: channel counts and x / y strides divisible
    by 4 elements, 16-byte aligned pointers: 4-element channel vectors, e.g. X3D's 108 channels)."""

    A16 = "a16"
    A16K = "a16k"
    V4 = "v4"
    I32 = "i32"
    GENERIC = "generic"


def access_in(*allowed: Access):
    """attrs validator: the access modes a key family implements (a member of :class:`Access`
    outside ``allowed`` raises :class:`InvalidKernelKey` naming the value and the choices)."""
    choices = ", ".join(a.value for a in allowed)

    def check(instance, attribute, value):
        if isinstance(value, Access) and value not in allowed:
            raise InvalidKernelKey(type(instance).__name__, [f"{attribute.name}='{value.value}': expected one of {choices}"])

    return check


@attrs.frozen(kw_only=True)
class ConvKey(KeyBase):
    """One implicit-GEMM convolution kernel.

    :ivar dtype: element type of every tensor (fp32 runs on tensor cores as tf32, as cuDNN does
        by default in PyTorch).
    :ivar channels_last: the layout family (``nwgc``/``nhwgc``/``ndhwgc``) or contiguous.
    :ivar block_m, block_n, block_k: tile of the implicit GEMM (rows, columns, reduction step).
    :ivar groups_per_block: groups one program serves together (GPB); with GPB > 1 the filter
        tile is block-diagonal, so groups with few channels still fill the tensor-core tile.
    :ivar num_warps, num_stages: Triton launch and pipelining options.
    :ivar access: :class:`Access` (``a16``, ``a16k``, ``i32``, or ``generic``, the fallback).
    """

    direction: ClassVar[str] = ""
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    channels_last: bool = attrs.field(validator=boolean)
    block_m: int = attrs.field(validator=power_of_two_in(16, 256))
    block_n: int = attrs.field(validator=power_of_two_in(16, 256))
    block_k: int = attrs.field(validator=power_of_two_in(16, 256))
    groups_per_block: int = attrs.field(default=1, validator=power_of_two_in(1, 64))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))
    access: Access = attrs.field(default=Access.A16, converter=enum_converter(Access),
                                 validator=[member_of(Access), access_in(Access.A16, Access.A16K, Access.I32, Access.GENERIC)])

    @property
    def aligned(self) -> bool:
        """Whether the instance assumes alignment and divisibility (``access == a16``)."""
        return self.access is Access.A16

    @property
    def name(self) -> str:
        return (f"conv_{self.direction}_{self.dtype.value}_{'cl' if self.channels_last else 'cf'}"
                f"_{self.block_m}x{self.block_n}x{self.block_k}_gpb{self.groups_per_block}"
                f"_w{self.num_warps}_s{self.num_stages}{self._suffix()}_{self.access.value}")

    def _suffix(self) -> str:
        return ""


@attrs.frozen(kw_only=True)
class ConvFwdKey(ConvKey):
    """A forward key plus ``flat``: the reduction runs over taps × channels as one index, for
    few channels per group (a first layer's C = 3); one group per program (``_flat``), and
    ``split_k``: programs sharing one output tile's reduction over taps × channel blocks (fp32
    partials summed in fixed order: deterministic), for grids too small to fill the GPU
    (``_k<split>`` in the name when above 1)."""

    direction: ClassVar[str] = "fwd"
    flat: bool = attrs.field(default=False, validator=boolean)
    split_k: int = attrs.field(default=1, validator=int_in(1, 64))

    def _suffix(self) -> str:
        return ("_flat" if self.flat else "") + (f"_k{self.split_k}" if self.split_k > 1 else "")


@attrs.frozen(kw_only=True)
class ConvBwdDataKey(ConvKey):
    """A backward-data key plus ``unit_stride``: the kernel assumes stride 1 in every dimension
    and skips the per-tap divisibility test (``_u1`` in the name), and ``split_k``, as for
    :class:`ConvFwdKey` (a stride phase's taps × channel blocks; ``_k<split>``)."""

    direction: ClassVar[str] = "bwd_data"
    unit_stride: bool = attrs.field(default=False, validator=boolean)
    split_k: int = attrs.field(default=1, validator=int_in(1, 64))

    def _suffix(self) -> str:
        return ("_u1" if self.unit_stride else "") + (f"_k{self.split_k}" if self.split_k > 1 else "")


@attrs.frozen(kw_only=True)
class ConvBwdWeightKey(ConvKey):
    """A backward-weight key plus ``split_k``: programs sharing one dw tile's reduction over
    N·output pixels (fp32 partials summed in fixed order: deterministic); ``flat``: a tile's
    columns run over taps × channels as one index (few channels per group; one group per
    program); and ``tap_block``: filter taps one program accumulates at once, one accumulator
    tile each, so a dy tile loaded once serves them all and the pixel index arithmetic runs once
    per block of pixels (``_tb<n>`` in the name when above 1; the problem's taps must be a
    multiple of it)."""

    direction: ClassVar[str] = "bwd_weight"
    split_k: int = attrs.field(default=1, validator=int_in(1, 256))
    flat: bool = attrs.field(default=False, validator=boolean)
    tap_block: int = attrs.field(default=1, validator=int_in(1, 27))

    def _suffix(self) -> str:
        return f"_k{self.split_k}" + ("_flat" if self.flat else "") + (f"_tb{self.tap_block}" if self.tap_block > 1 else "")
