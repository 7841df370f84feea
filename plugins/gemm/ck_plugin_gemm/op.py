"""The ``gemm`` operator: problem from tensors, tensor checks, NumPy reference, FLOP and byte counts."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ckcore import DType, Operator, Tolerance, UnsupportedProblem

from .problem import GemmProblem

__all__ = ["GemmOperator"]


def _ptr_align(t) -> int:
    p = t.data_ptr()
    for align in (16, 8, 4, 2):
        if p % align == 0:
            return align
    return 1


def _layout_of(name: str, t, rows: int, cols: int) -> tuple[str, int]:
    """('r' or 'c', leading dimension) of a 2-D view, from its strides."""
    s0, s1 = t.stride()
    if cols == 1 or s1 == 1:
        if rows == 1 or s0 >= max(cols, 1):
            return "r", (s0 if rows > 1 else max(cols, 1))
    if rows == 1 or s0 == 1:
        if cols == 1 or s1 >= max(rows, 1):
            return "c", (s1 if cols > 1 else max(rows, 1))
    raise UnsupportedProblem(f"{name}.stride", (s0, s1), "row-major (stride (ld, 1)) or column-major (stride (1, ld)) with ld >= the packed size", op="gemm")


class GemmOperator(Operator):
    """C[M,N] = A[M,K] @ B[K,N] with fp32 accumulation; tensors ``a``, ``b``, optional ``c``."""

    name = "gemm"
    problem_cls = GemmProblem
    inputs = ("a", "b")
    output = "c"
    models_package = "ck_plugin_gemm"

    def bucket(self, problem: GemmProblem):
        """(dtype, layout), as the gemm families' ``bucket``."""
        return problem.dtype, problem.layout

    def problem_from_tensors(self, a=None, b=None, c=None) -> GemmProblem:
        """The problem of torch tensors ``a`` [M,K], ``b`` [K,N] (and ``c`` [M,N]); layout and
        leading dimensions come from the strides. :raises UnsupportedProblem:"""
        for name, t in (("a", a), ("b", b)):
            if t is None or not hasattr(t, "stride"):
                raise UnsupportedProblem(name, t, "a torch tensor", op="gemm")
            if t.dim() != 2:
                raise UnsupportedProblem(f"{name}.dim", t.dim(), "2 (a matrix)", op="gemm")
        (M, K), (K2, N) = a.shape, b.shape
        if K2 != K:
            raise UnsupportedProblem("b.shape", tuple(b.shape), f"[{K}, N] (K from a.shape = {tuple(a.shape)})", op="gemm")
        dtype = DType.from_torch(a.dtype)
        if dtype is None:
            raise UnsupportedProblem("a.dtype", str(a.dtype), "torch.float16, torch.bfloat16 or torch.float32", op="gemm")
        la, lda = _layout_of("a", a, M, K)
        lb, ldb = _layout_of("b", b, K, N)
        fields = dict(M=M, N=N, K=K, dtype=dtype, layout=la + lb + "r", lda=lda, ldb=ldb)
        tensors = [a, b]
        if c is not None:
            lc, ldc = _layout_of("c", c, *c.shape) if c.dim() == 2 else ("?", 0)
            if lc != "r":
                raise UnsupportedProblem("c.stride", tuple(c.stride()), "row-major (stride (ldc, 1))", op="gemm")
            fields["ldc"] = ldc
            tensors.append(c)
        fields["ptr_align"] = min(_ptr_align(t) for t in tensors)
        problem = GemmProblem(**fields)
        self.check_tensors(problem, {"a": a, "b": b, "c": c})
        return problem

    def check_tensors(self, problem: GemmProblem, tensors: Mapping[str, Any]) -> None:
        shapes, strides = problem.tensor_shapes(), problem.tensor_strides()
        torch_dtype = problem.dtype.torch
        for name in ("a", "b", "c"):
            t = tensors.get(name)
            if t is None:
                continue
            if not hasattr(t, "data_ptr"):
                raise UnsupportedProblem(name, type(t).__name__, "a torch tensor", op="gemm")
            if tuple(t.shape) != shapes[name]:
                raise UnsupportedProblem(f"{name}.shape", tuple(t.shape), f"{list(shapes[name])}", op="gemm")
            if t.dtype != torch_dtype:
                raise UnsupportedProblem(f"{name}.dtype", str(t.dtype), f"{torch_dtype} (problem dtype {problem.dtype.value})", op="gemm")
            for dim, (size, have, want) in enumerate(zip(t.shape, t.stride(), strides[name])):
                if size > 1 and have != want:
                    raise UnsupportedProblem(
                        f"{name}.stride", tuple(t.stride()),
                        f"{strides[name]} (layout {problem.layout.value}, ld as the problem says; size-1 dims are free)",
                        op="gemm",
                    )
            if t.data_ptr() % problem.ptr_align:
                raise UnsupportedProblem(f"{name}.data_ptr", t.data_ptr(), f"a multiple of ptr_align={problem.ptr_align} bytes", op="gemm")

    def empty_output(self, problem: GemmProblem, like) -> Any:
        import torch

        return torch.empty_strided((problem.M, problem.N), (problem.ldc, 1), dtype=problem.dtype.torch, device=like.device)

    def random_inputs(self, problem: GemmProblem, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Standard-normal A [M,K] and B [K,N], rounded to the problem's dtype (float64 arrays)."""
        a = problem.dtype.round_numpy(rng.standard_normal((problem.M, problem.K)))
        b = problem.dtype.round_numpy(rng.standard_normal((problem.K, problem.N)))
        return {"a": a, "b": b}

    def to_torch(self, problem: GemmProblem, arrays, device) -> dict[str, Any]:
        """Tensors with the problem's layout and leading dimensions (padding filled with NaN,
        so a kernel that reads it is caught)."""
        import torch

        return {name: self._laid_out(problem, name, torch.from_numpy(np.ascontiguousarray(arrays[name])), device)
                for name in ("a", "b")}

    def random_tensors(self, problem: GemmProblem, seed: int, device) -> dict[str, Any]:
        """Standard-normal A and B generated on ``device`` (fast for large problems)."""
        import torch

        g = torch.Generator(device=device).manual_seed(seed)
        shapes = problem.tensor_shapes()
        return {name: self._laid_out(problem, name, torch.randn(shapes[name], generator=g, device=device,
                                                                dtype=torch.float32), device)
                for name in ("a", "b")}

    @staticmethod
    def _laid_out(problem: GemmProblem, name: str, logical, device):
        import torch

        rows, cols = logical.shape
        row_major = (problem.layout.a if name == "a" else problem.layout.b) == "r"
        ld = problem.lda if name == "a" else problem.ldb
        if row_major:
            storage = torch.full((rows, ld), float("nan"), dtype=logical.dtype, device=logical.device)
            storage[:, :cols] = logical
            return storage.to(device=device, dtype=problem.dtype.torch)[:, :cols]
        storage = torch.full((cols, ld), float("nan"), dtype=logical.dtype, device=logical.device)
        storage[:, :rows] = logical.t()
        return storage.to(device=device, dtype=problem.dtype.torch)[:, :rows].t()

    def reference(self, problem: GemmProblem, arrays) -> np.ndarray:
        """A @ B in float64."""
        return np.asarray(arrays["a"], np.float64) @ np.asarray(arrays["b"], np.float64)

    def flops(self, problem: GemmProblem) -> float:
        """2·M·N·K."""
        return 2.0 * problem.M * problem.N * problem.K

    def min_bytes(self, problem: GemmProblem) -> float:
        """(M·K + K·N + M·N) · bytes per element."""
        return float(problem.M * problem.K + problem.K * problem.N + problem.M * problem.N) * problem.dtype.itemsize

    def tolerance(self, problem: GemmProblem) -> Tolerance:
        """Output rounding (relative) plus accumulation error growing with sqrt(K) (absolute):
        fp16 2^-10, bf16 2^-7 (the interpreter truncates), fp32 as tf32 (10-bit mantissa inputs)."""
        root_k = math.sqrt(problem.K)
        if problem.dtype is DType.FP32:
            return Tolerance(atol=4 * 2**-10 * root_k, rtol=2e-3)
        if problem.dtype is DType.BF16:
            return Tolerance(atol=1e-4 * root_k, rtol=2 * 2**-7)
        return Tolerance(atol=1e-4 * root_k, rtol=2 * 2**-10)

    def torch_baseline(self, problem: GemmProblem, tensors):
        """``torch.matmul(a, b, out=c)`` (cuBLAS on the GPU; tf32 allowed for fp32)."""
        import torch

        a, b, c = tensors["a"], tensors["b"], tensors.get("c")
        if c is None:
            c = self.empty_output(problem, a)

        def run():
            return torch.matmul(a, b, out=c)

        return run

    # Hidden and intermediate sizes of common LLMs (Llama, Mistral, Qwen, Gemma families).
    _LLM_DIMS = (896, 1024, 1536, 2048, 2304, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 9216, 11008,
                 12288, 13824, 14336, 16384, 18944, 24576, 28672)

    def generate(self, rng):
        """M: decode (1-16), small batches (17-256) or prefill (257-16384), log-uniform, half of
        them multiples of 16; N, K: LLM dimensions 60% of the time, else log-uniform 16-16384
        (odd sizes included); bf16 70%, fp16 20%, fp32 10%; layout rcr 70%, else any."""
        def size(lo, hi):
            v = int(np.exp(rng.uniform(np.log(lo), np.log(hi))))
            return max(lo, v - v % 16) if rng.random() < 0.5 else v

        band = rng.choice(3, p=[0.3, 0.3, 0.4])
        M = size(*((1, 16), (17, 256), (257, 16384))[band])
        N, K = (int(rng.choice(self._LLM_DIMS)) if rng.random() < 0.6 else size(16, 16384) for _ in range(2))
        dtype = rng.choice(["bf16", "fp16", "fp32"], p=[0.7, 0.2, 0.1])
        layout = "rcr" if rng.random() < 0.7 else rng.choice(["rrr", "crr", "ccr", "rcr"])
        return {"M": M, "N": N, "K": K, "dtype": str(dtype), "layout": str(layout)}

    def bench_groups(self):
        """Small-M (M <= 128) and large (M >= 1024) rows, the classes the targets name."""
        return {"m_le_128": lambda p: p["M"] <= 128, "m_ge_1024": lambda p: p["M"] >= 1024}

    def features(self, problem: GemmProblem) -> dict[str, float]:
        return {"M": problem.M, "N": problem.N, "K": problem.K, "itemsize": problem.dtype.itemsize,
                "layout_a_row": float(problem.layout.a == "r"), "layout_b_row": float(problem.layout.b == "r")}
