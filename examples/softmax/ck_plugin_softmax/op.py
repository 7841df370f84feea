"""The ``softmax`` operator: tensor checks, NumPy reference, FLOP and byte counts."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ckcore import DType, Operator, Tolerance, UnsupportedProblem

from .problem import SoftmaxProblem


class SoftmaxOperator(Operator):
    """y = softmax(x, dim=-1) for x [rows, cols]; tensors ``x``, optional output ``y``."""

    name = "softmax"
    problem_cls = SoftmaxProblem
    models_package = "ck_plugin_softmax"  # models/softmax_sm_90.{txt,json}: `ckcore train softmax`
    inputs = ("x",)
    output = "y"

    def problem_from_tensors(self, x=None, y=None) -> SoftmaxProblem:
        if x is None or not hasattr(x, "stride") or x.dim() != 2:
            raise UnsupportedProblem("x", getattr(x, "shape", x), "a 2-D torch tensor", op="softmax")
        dtype = DType.from_torch(x.dtype)
        if dtype is None:
            raise UnsupportedProblem("x.dtype", str(x.dtype), "float16, bfloat16 or float32", op="softmax")
        rows, cols = x.shape
        if cols > 1 and x.stride(1) != 1:
            raise UnsupportedProblem("x.stride", tuple(x.stride()), "unit stride along the rows (stride (ld, 1))", op="softmax")
        ldx = x.stride(0) if rows > 1 else cols
        ldy = y.stride(0) if y is not None and rows > 1 else cols
        p = SoftmaxProblem(rows=rows, cols=cols, dtype=dtype, ldx=ldx, ldy=ldy)
        self.check_tensors(p, {"x": x, "y": y})
        return p

    def check_tensors(self, p: SoftmaxProblem, tensors: Mapping[str, Any]) -> None:
        for name, ld in (("x", p.ldx), ("y", p.ldy)):
            t = tensors.get(name)
            if t is None:
                continue
            if tuple(t.shape) != (p.rows, p.cols):
                raise UnsupportedProblem(f"{name}.shape", tuple(t.shape), f"[{p.rows}, {p.cols}]", op="softmax")
            if t.dtype != p.dtype.torch:
                raise UnsupportedProblem(f"{name}.dtype", str(t.dtype), str(p.dtype.torch), op="softmax")
            for size, have, want in zip(t.shape, t.stride(), (ld, 1)):
                if size > 1 and have != want:
                    raise UnsupportedProblem(f"{name}.stride", tuple(t.stride()), f"({ld}, 1)", op="softmax")

    def empty_output(self, p: SoftmaxProblem, like) -> Any:
        import torch

        return torch.empty_strided((p.rows, p.cols), (p.ldy, 1), dtype=p.dtype.torch, device=like.device)

    def random_inputs(self, p: SoftmaxProblem, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Normal(0, 3) values rounded to the dtype (a spread that exercises the max shift)."""
        return {"x": p.dtype.round_numpy(3.0 * rng.standard_normal((p.rows, p.cols)))}

    def to_torch(self, p: SoftmaxProblem, arrays, device) -> dict[str, Any]:
        import torch

        storage = torch.full((p.rows, p.ldx), float("nan"), dtype=torch.float64)
        storage[:, : p.cols] = torch.from_numpy(arrays["x"])
        return {"x": storage.to(device=device, dtype=p.dtype.torch)[:, : p.cols]}

    def reference(self, p: SoftmaxProblem, arrays) -> np.ndarray:
        """Softmax in float64: exp(x - max) / sum(exp(x - max)) per row."""
        x = np.asarray(arrays["x"], np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def flops(self, p: SoftmaxProblem) -> float:
        """5 per element (max, subtract, exp, sum, divide), by convention."""
        return 5.0 * p.rows * p.cols

    def min_bytes(self, p: SoftmaxProblem) -> float:
        """x read once, y written once."""
        return 2.0 * p.rows * p.cols * p.dtype.itemsize

    def tolerance(self, p: SoftmaxProblem) -> Tolerance:
        """Output rounding of values in [0, 1]: fp32 1e-5 relative (approximate exp on the GPU),
        fp16 2^-10, bf16 2^-7 (the interpreter truncates)."""
        return {DType.FP32: Tolerance(1e-7, 1e-5), DType.FP16: Tolerance(1e-5, 2 * 2**-10),
                DType.BF16: Tolerance(1e-5, 2 * 2**-7)}[p.dtype]

    def generate(self, rng: np.random.Generator) -> dict[str, Any]:
        """Tune problems: rows log-uniform 1-65536, cols log-uniform 16-65536 (half of them
        multiples of 64, the rest odd sizes too), at most 2^28 elements; bf16 60%, fp16 20%, fp32 20%."""
        def size(lo, hi):
            v = int(np.exp(rng.uniform(np.log(lo), np.log(hi))))
            return max(lo, v - v % 64) if rng.random() < 0.5 else v

        rows, cols = size(1, 65536), size(16, 65536)
        rows = max(1, min(rows, 2**28 // cols))
        dtype = rng.choice(["bf16", "fp16", "fp32"], p=[0.6, 0.2, 0.2])
        return {"rows": rows, "cols": cols, "dtype": str(dtype)}

    def torch_baseline(self, p: SoftmaxProblem, tensors):
        """``torch.softmax(x, dim=-1)``."""
        import torch

        x = tensors["x"]
        return lambda: torch.softmax(x, dim=-1)
