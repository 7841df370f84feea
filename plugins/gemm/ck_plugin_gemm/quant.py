"""Quantized GEMM inputs: int8 and fp8 (e4m3, e5m2), with the same interface as
:class:`ckcore.DType` (``itemsize``, ``triton``, ``torch``, ``round_numpy``).

A quantized problem has ``dtype`` int8, fp8e4m3 or fp8e5m2 and layout ``rcr`` (A row-major, B
column-major: both operands K-major, as ``torch._scaled_mm`` and ``torch._int_mm`` take them and
as Hopper's fp8 MMA wants them, ``../shared/TRITON_NOTES.md`` §1.5). Accumulation is int32 (int8)
or fp32 (fp8). ``out_dtype``: ``int32`` (int8 only, exact), ``fp16``, ``bf16`` or ``fp32``.
``scale``: ``none``, ``tensor`` (one fp32 ``scale_a`` and one ``scale_b``) or ``row`` (``scale_a``
per row of A, length M; ``scale_b`` per column of B, length N), applied to the accumulator
before the rest of the epilogue: C = act(alpha · scale_a · (A @ B) · scale_b + ...).
"""

from __future__ import annotations

import enum

import numpy as np

from ckcore import DType

__all__ = ["QuantType", "OutType", "Scale", "element_type", "valid_element_type", "DEFAULT_OUT"]


class QuantType(str, enum.Enum):
    """A quantized input element type."""

    INT8 = "int8"
    FP8E4M3 = "fp8e4m3"
    FP8E5M2 = "fp8e5m2"

    @property
    def itemsize(self) -> int:
        return 1

    @property
    def triton(self) -> str:
        """Triton signature spelling (``fp8e4nv`` is torch's ``float8_e4m3fn``)."""
        return {"int8": "i8", "fp8e4m3": "fp8e4nv", "fp8e5m2": "fp8e5"}[self.value]

    @property
    def torch(self):
        import torch

        return {"int8": torch.int8, "fp8e4m3": torch.float8_e4m3fn, "fp8e5m2": torch.float8_e5m2}[self.value]

    @classmethod
    def from_torch(cls, dtype) -> "QuantType | None":
        return {"torch.int8": cls.INT8, "torch.float8_e4m3fn": cls.FP8E4M3, "torch.float8_e5m2": cls.FP8E5M2}.get(str(dtype))

    def round_numpy(self, x: np.ndarray) -> np.ndarray:
        """``x`` rounded to this type (int8: nearest, saturated; fp8: torch's conversion), as float64."""
        x = np.asarray(x, dtype=np.float64)
        if self is QuantType.INT8:
            return np.clip(np.rint(x), -128, 127)
        import torch

        return torch.from_numpy(x.astype(np.float32)).to(self.torch).to(torch.float64).numpy()


class OutType(str, enum.Enum):
    """The output element type of a quantized GEMM."""

    INT32 = "int32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"

    @property
    def itemsize(self) -> int:
        return 2 if self.value in ("fp16", "bf16") else 4

    @property
    def triton(self) -> str:
        return "i32" if self is OutType.INT32 else self.value

    @property
    def torch(self):
        import torch

        return torch.int32 if self is OutType.INT32 else DType(self.value).torch

    def round_numpy(self, x):
        return np.asarray(x, np.float64) if self is OutType.INT32 else DType(self.value).round_numpy(x)


class Scale(str, enum.Enum):
    """Dequantization scales: ``none``, ``tensor`` (one each for A and B) or ``row`` (per row of
    A and per column of B)."""

    NONE = "none"
    TENSOR = "tensor"
    ROW = "row"


#: The output a quantized problem gets when it names none.
DEFAULT_OUT = {QuantType.INT8: OutType.INT32, QuantType.FP8E4M3: OutType.BF16, QuantType.FP8E5M2: OutType.BF16}


def element_type(value):
    """``value`` as a :class:`ckcore.DType` or :class:`QuantType` (unknown values pass through,
    for the validator to reject)."""
    if isinstance(value, (DType, QuantType)):
        return value
    for cls in (DType, QuantType):
        try:
            return cls(value)
        except (ValueError, TypeError):
            pass
    return value


def valid_element_type(instance, attribute, value):
    """attrs validator of a problem's or key's ``dtype``: a :class:`ckcore.DType` or :class:`QuantType`
    (an error naming the field: UnsupportedProblem for problems, InvalidKernelKey for keys)."""
    from ckcore.keys import _fail

    if not isinstance(value, (DType, QuantType)):
        _fail(instance, attribute.name, value, f"one of {', '.join([d.value for d in DType] + [q.value for q in QuantType])}")
