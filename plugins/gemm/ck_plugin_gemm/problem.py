"""The ``gemm`` problem: C[M,N] = A[M,K] @ B[K,N], fp32 accumulation.

Layouts spell A, B, C as ``r`` (row-major) or ``c`` (column-major): ``rcr`` is nn.Linear's
forward (B is a [N,K] row-major weight read as its transpose). Leading dimensions (``lda``,
``ldb``, ``ldc``, in elements) default to packed storage. ``ptr_align`` is the byte alignment
every base pointer is known to have (16 for fresh torch allocations).
"""

from __future__ import annotations

import enum

import attrs

from ckcore import DType, ProblemBase, UnsupportedProblem
from ckcore.keys import enum_converter, member_of, positive_int

__all__ = ["Layout", "GemmProblem", "MAX_DIM"]

MAX_DIM = 2**31 - 1


class Layout(str, enum.Enum):
    """Storage order of A, B and C (C is always row-major)."""

    RCR = "rcr"
    RRR = "rrr"
    CRR = "crr"
    CCR = "ccr"

    @property
    def a(self) -> str:
        return self.value[0]

    @property
    def b(self) -> str:
        return self.value[1]


def _dim(instance, attribute, value):
    positive_int(instance, attribute, value)
    if value > MAX_DIM:
        raise UnsupportedProblem(attribute.name, value, f"at most {MAX_DIM}", op="gemm")


def _optional_ld(instance, attribute, value):
    if value is not None:
        positive_int(instance, attribute, value)


def _ptr_align(instance, attribute, value):
    if value not in (1, 2, 4, 8, 16):
        raise UnsupportedProblem(attribute.name, value, "one of 1, 2, 4, 8, 16 (bytes)", op="gemm")


@attrs.frozen(kw_only=True)
class GemmProblem(ProblemBase):
    """C[M,N] = A[M,K] @ B[K,N].

    :ivar M, N, K: sizes, 1 <= size < 2**31.
    :ivar dtype: ``fp16``, ``bf16`` or ``fp32`` (fp32 runs on tensor cores as tf32).
    :ivar layout: ``rcr``, ``rrr``, ``crr`` or ``ccr``.
    :ivar lda, ldb, ldc: leading dimensions in elements (None: packed).
    :ivar ptr_align: byte alignment of every base pointer (default 16).
    :raises UnsupportedProblem: any field out of range, naming the field.
    """

    op = "gemm"

    M: int = attrs.field(validator=_dim)
    N: int = attrs.field(validator=_dim)
    K: int = attrs.field(validator=_dim)
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    layout: Layout = attrs.field(converter=enum_converter(Layout), validator=member_of(Layout))
    lda: int | None = attrs.field(default=None, validator=_optional_ld)
    ldb: int | None = attrs.field(default=None, validator=_optional_ld)
    ldc: int | None = attrs.field(default=None, validator=_optional_ld)
    ptr_align: int = attrs.field(default=16, validator=_ptr_align)

    def __attrs_post_init__(self):
        packed = self.packed_ld()
        for field, least in packed.items():
            value = getattr(self, field)
            if value is None:
                object.__setattr__(self, field, least)
            elif value < least:
                raise UnsupportedProblem(field, value, f">= {least} for layout {self.layout.value}", op="gemm")

    def packed_ld(self) -> dict[str, int]:
        """The smallest legal leading dimensions (those of packed storage)."""
        return {
            "lda": self.K if self.layout.a == "r" else self.M,
            "ldb": self.N if self.layout.b == "r" else self.K,
            "ldc": self.N,
        }

    @property
    def name(self) -> str:
        s = f"gemm_{self.dtype.value}_{self.layout.value}_M{self.M}_N{self.N}_K{self.K}"
        for field, packed in self.packed_ld().items():
            if getattr(self, field) != packed:
                s += f"_{field}{getattr(self, field)}"
        if self.ptr_align != 16:
            s += f"_pa{self.ptr_align}"
        return s

    def tensor_strides(self) -> dict[str, tuple[int, int]]:
        """Strides (elements) of the logical [M,K], [K,N], [M,N] views of A, B, C."""
        a = (self.lda, 1) if self.layout.a == "r" else (1, self.lda)
        b = (self.ldb, 1) if self.layout.b == "r" else (1, self.ldb)
        return {"a": a, "b": b, "c": (self.ldc, 1)}

    def tensor_shapes(self) -> dict[str, tuple[int, int]]:
        return {"a": (self.M, self.K), "b": (self.K, self.N), "c": (self.M, self.N)}
