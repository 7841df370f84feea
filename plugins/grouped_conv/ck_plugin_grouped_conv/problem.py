"""The grouped convolution problem, shared by the three directions.

Fields are those of the lines of the public conv suite: ``ndim`` (1, 2, 3), ``N``, ``G``, ``C``,
``K`` (total input and output channels, as PyTorch; both divisible by ``G``), ``spatial`` (input
sizes ``(W,)``, ``(H, W)`` or ``(D, H, W)``), ``filter`` (``X``, ``Y, X`` or ``Z, Y, X``),
``stride``, ``pad`` (symmetric; asymmetric padding is not supported yet) and ``dilation``, each of
length ``ndim``; ``dtype``; ``layout``. Output sizes follow PyTorch's formula
``floor((size + 2·pad - dilation·(filter - 1) - 1) / stride) + 1``.

Tensors have PyTorch's logical shapes: x ``(N, C, *spatial)``, w ``(K, C/G, *filter)``, y ``(N, K,
*out)``, all in the memory format the layout names: ``nwgc`` / ``nhwgc`` / ``ndhwgc`` are
channels-last (PyTorch ``channels_last`` / ``channels_last_3d``; channels innermost, groups
outside the channels of a group), ``ngcw`` / ``ngchw`` / ``ngcdhw`` are contiguous.
"""

from __future__ import annotations

import enum
import functools
import math

import attrs

from ckcore import DType, ProblemBase, UnsupportedProblem
from ckcore.keys import enum_converter, member_of, positive_int

__all__ = ["ConvLayout", "ConvProblem", "ConvFwdProblem", "ConvBwdDataProblem", "ConvBwdWeightProblem",
           "out_size", "MAX_DIM"]

MAX_DIM = 2**31 - 1
SUITE_OP = "grouped_conv"


class ConvLayout(str, enum.Enum):
    """Memory format of x, w and y."""

    NWGC = "nwgc"
    NHWGC = "nhwgc"
    NDHWGC = "ndhwgc"
    NGCW = "ngcw"
    NGCHW = "ngchw"
    NGCDHW = "ngcdhw"

    @property
    def ndim(self) -> int:
        return len(self.value) - 3

    @property
    def channels_last(self) -> bool:
        return self.value.endswith("gc")

    @classmethod
    def of(cls, ndim: int, channels_last: bool) -> "ConvLayout":
        spatial = "dhw"[3 - ndim:]
        return cls(f"n{spatial}gc" if channels_last else f"ngc{spatial}")


def out_size(size: int, filter: int, stride: int, pad: int, dilation: int) -> int:
    """PyTorch's output size: floor((size + 2·pad - dilation·(filter - 1) - 1) / stride) + 1."""
    return (size + 2 * pad - dilation * (filter - 1) - 1) // stride + 1


def _ints(value):
    if isinstance(value, list):
        return tuple(value)
    return value


def _int_tuple(least: int):
    def check(instance, attribute, value):
        ok = isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) and least <= v <= MAX_DIM
                                              for v in value)
        if not ok:
            raise UnsupportedProblem(attribute.name, value, f"a list of integers >= {least}, one per spatial dimension",
                                     op=instance.op)

    return check


def _ndim(instance, attribute, value):
    if value not in (1, 2, 3) or isinstance(value, bool):
        raise UnsupportedProblem("ndim", value, "1, 2 or 3", op=instance.op)


def _dim(instance, attribute, value):
    positive_int(instance, attribute, value)
    if value > MAX_DIM:
        raise UnsupportedProblem(attribute.name, value, f"at most {MAX_DIM}", op=instance.op)


def _ptr_align(instance, attribute, value):
    if value not in (1, 2, 4, 8, 16):
        raise UnsupportedProblem(attribute.name, value, "one of 1, 2, 4, 8, 16 (bytes)", op=instance.op)


@attrs.frozen(kw_only=True, cache_hash=True)
class ConvProblem(ProblemBase):
    """One grouped convolution (see the module docstring for the fields).

    :ivar ptr_align: byte alignment every tensor's base pointer is known to have (16 for fresh
        torch allocations).
    :raises UnsupportedProblem: a field out of range or inconsistent (lengths that differ from
        ``ndim``, C or K not divisible by G, a layout of another ndim, an empty output).
    """

    op = "grouped_conv"

    ndim: int = attrs.field(validator=_ndim)
    N: int = attrs.field(validator=_dim)
    G: int = attrs.field(validator=_dim)
    C: int = attrs.field(validator=_dim)
    K: int = attrs.field(validator=_dim)
    spatial: tuple = attrs.field(converter=_ints, validator=_int_tuple(1))
    filter: tuple = attrs.field(converter=_ints, validator=_int_tuple(1))
    stride: tuple = attrs.field(converter=_ints, validator=_int_tuple(1))
    pad: tuple = attrs.field(converter=_ints, validator=_int_tuple(0))
    dilation: tuple = attrs.field(converter=_ints, validator=_int_tuple(1))
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    layout: ConvLayout = attrs.field(converter=enum_converter(ConvLayout), validator=member_of(ConvLayout))
    ptr_align: int = attrs.field(default=16, validator=_ptr_align)

    def __attrs_post_init__(self):
        op = self.op
        for field in ("spatial", "filter", "stride", "pad", "dilation"):
            if len(getattr(self, field)) != self.ndim:
                raise UnsupportedProblem(field, list(getattr(self, field)), f"{self.ndim} values (ndim={self.ndim})", op=op)
        if self.layout.ndim != self.ndim:
            expected = " or ".join(ConvLayout.of(self.ndim, cl).value for cl in (True, False))
            raise UnsupportedProblem("layout", self.layout.value, f"{expected} (ndim={self.ndim})", op=op)
        for field in ("C", "K"):
            if getattr(self, field) % self.G:
                raise UnsupportedProblem(field, getattr(self, field), f"a multiple of G={self.G}", op=op)
        for i, size in enumerate(_out_sizes(self)):  # not the memo: the hash is not set up yet
            if size < 1:
                raise UnsupportedProblem(
                    "spatial", list(self.spatial),
                    f"sizes giving a non-empty output (dimension {i}: {self.spatial[i]} + 2*{self.pad[i]} < "
                    f"{self.dilation[i]}*({self.filter[i]}-1)+1)", op=op)

    # ---- derived sizes -------------------------------------------------------------------
    @property
    def Cg(self) -> int:
        """Input channels per group (C/G)."""
        return self.C // self.G

    @property
    def Kg(self) -> int:
        """Output channels per group (K/G)."""
        return self.K // self.G

    @property
    def out_spatial(self) -> tuple[int, ...]:
        """Output sizes (Wo,), (Ho, Wo) or (Do, Ho, Wo)."""
        return _out_spatial(self)

    def as_3d(self) -> dict[str, tuple[int, int, int]]:
        """Spatial fields padded to three dimensions (D, H, W) with size-1 leading dims
        (memoised per problem: read, do not modify)."""
        return _as_3d(self)

    @property
    def taps(self) -> int:
        """Filter taps, Z·Y·X."""
        return math.prod(self.filter)

    @property
    def pixels(self) -> int:
        """Input pixels per image."""
        return math.prod(self.spatial)

    @property
    def out_pixels(self) -> int:
        """Output pixels per image."""
        return _out_pixels(self)

    @property
    def name(self) -> str:
        def j(v):
            return "x".join(map(str, v))

        return (f"{self.op}_{self.dtype.value}_{self.layout.value}_n{self.N}_g{self.G}_c{self.C}_k{self.K}"
                f"_in{j(self.spatial)}_f{j(self.filter)}_s{j(self.stride)}_p{j(self.pad)}_d{j(self.dilation)}"
                + ("" if self.ptr_align == 16 else f"_pa{self.ptr_align}"))

    # ---- tensors -------------------------------------------------------------------------
    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Logical (PyTorch) shapes of x, w, y."""
        return _shapes(self)

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides (elements) of x, w, y in the layout's memory format (packed)."""
        return _strides(self)

    def numel(self) -> dict[str, int]:
        """Elements of x, w, y (memoised per problem: read, do not modify)."""
        return _numel(self)


# Derived sizes, memoised per problem: selection asks for them once per candidate instance.
def _out_sizes(self: ConvProblem) -> tuple[int, ...]:
    return tuple(out_size(*v) for v in zip(self.spatial, self.filter, self.stride, self.pad, self.dilation))


@functools.lru_cache(maxsize=4096)
def _out_spatial(self: ConvProblem) -> tuple[int, ...]:
    return _out_sizes(self)


@functools.lru_cache(maxsize=4096)
def _out_pixels(self: ConvProblem) -> int:
    return math.prod(_out_spatial(self))


@functools.lru_cache(maxsize=4096)
def _as_3d(self: ConvProblem) -> dict[str, tuple[int, int, int]]:
    lead = 3 - self.ndim
    return {
        "spatial": (1,) * lead + self.spatial, "filter": (1,) * lead + self.filter,
        "stride": (1,) * lead + self.stride, "pad": (0,) * lead + self.pad,
        "dilation": (1,) * lead + self.dilation, "out": (1,) * lead + _out_spatial(self),
    }


@functools.lru_cache(maxsize=4096)
def _numel(self: ConvProblem) -> dict[str, int]:
    return {name: math.prod(shape) for name, shape in _shapes(self).items()}


@functools.lru_cache(maxsize=4096)
def _shapes(self: ConvProblem) -> dict[str, tuple[int, ...]]:
    return {"x": (self.N, self.C) + self.spatial, "w": (self.K, self.Cg) + self.filter,
            "y": (self.N, self.K) + self.out_spatial}


@functools.lru_cache(maxsize=4096)
def _strides(self: ConvProblem) -> dict[str, tuple[int, ...]]:
    return {name: packed_strides(shape, self.layout.channels_last) for name, shape in _shapes(self).items()}


def packed_strides(shape: tuple[int, ...], channels_last: bool) -> tuple[int, ...]:
    """Packed strides of a logical (N, C, *spatial) shape, contiguous or channels-last."""
    order = [0] + list(range(2, len(shape))) + [1] if channels_last else list(range(len(shape)))
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= shape[dim]
    return tuple(strides)


@attrs.frozen(kw_only=True, cache_hash=True)
class ConvFwdProblem(ConvProblem):
    """``y = conv(x, w)`` (see :class:`ConvProblem`)."""

    op = "grouped_conv_fwd"


@attrs.frozen(kw_only=True, cache_hash=True)
class ConvBwdDataProblem(ConvProblem):
    """``dx = conv_bwd_data(dy, w)``, the gradient of the forward wrt x (see :class:`ConvProblem`)."""

    op = "grouped_conv_bwd_data"


@attrs.frozen(kw_only=True, cache_hash=True)
class ConvBwdWeightProblem(ConvProblem):
    """``dw = conv_bwd_weight(x, dy)``, the gradient of the forward wrt w (see :class:`ConvProblem`)."""

    op = "grouped_conv_bwd_weight"
