"""The ``softmax`` problem: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)) per row."""

from __future__ import annotations

import attrs

from ckcore import DType, ProblemBase, UnsupportedProblem
from ckcore.keys import enum_converter, member_of, positive_int


def _rows(instance, attribute, value):
    positive_int(instance, attribute, value)
    if value > 2**31 - 1:
        raise UnsupportedProblem(attribute.name, value, "at most 2**31 - 1 (one program per row)", op="softmax")


def _optional_ld(instance, attribute, value):
    if value is not None:
        positive_int(instance, attribute, value)


@attrs.frozen(kw_only=True)
class SoftmaxProblem(ProblemBase):
    """Row-wise softmax of x [rows, cols] into y [rows, cols], same dtype.

    :ivar rows, cols: sizes >= 1.  :ivar dtype: fp16, bf16 or fp32 (arithmetic in fp32).
    :ivar ldx, ldy: row strides in elements (default cols).
    :raises UnsupportedProblem: a bad field.
    """

    op = "softmax"

    rows: int = attrs.field(validator=_rows)
    cols: int = attrs.field(validator=positive_int)
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    ldx: int | None = attrs.field(default=None, validator=_optional_ld)
    ldy: int | None = attrs.field(default=None, validator=_optional_ld)

    def __attrs_post_init__(self):
        for field in ("ldx", "ldy"):
            value = getattr(self, field)
            if value is None:
                object.__setattr__(self, field, self.cols)
            elif value < self.cols:
                raise UnsupportedProblem(field, value, f">= cols ({self.cols})", op="softmax")

    @property
    def name(self) -> str:
        s = f"softmax_{self.dtype.value}_R{self.rows}_C{self.cols}"
        if (self.ldx, self.ldy) != (self.cols, self.cols):
            s += f"_ldx{self.ldx}_ldy{self.ldy}"
        return s
