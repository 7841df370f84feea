"""Element types ckcore knows, with their NumPy, torch and Triton spellings."""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["DType"]


class DType(str, enum.Enum):
    """Element type of a tensor. Values are the names used in problems, keys and kernel names."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return {"fp16": 2, "bf16": 2, "fp32": 4}[self.value]

    @property
    def triton(self) -> str:
        """Triton signature spelling (``bf16``)."""
        return self.value

    @property
    def torch(self):
        """The torch dtype (imports torch)."""
        import torch

        return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[self.value]

    @classmethod
    def from_torch(cls, dtype) -> "DType | None":
        """The DType of a torch dtype, or None if ckcore has none."""
        return {"torch.float16": cls.FP16, "torch.bfloat16": cls.BF16, "torch.float32": cls.FP32}.get(str(dtype))

    def round_numpy(self, x: np.ndarray) -> np.ndarray:
        """``x`` rounded to this dtype (round-to-nearest-even), returned as float64."""
        x = np.asarray(x, dtype=np.float64)
        if self is DType.FP16:
            return x.astype(np.float16).astype(np.float64)
        if self is DType.FP32:
            return x.astype(np.float32).astype(np.float64)
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
