"""The ``gemm`` operator: problem from tensors, tensor checks, NumPy reference, FLOP and byte counts."""

from __future__ import annotations

import functools
import math
from typing import Any, Mapping

import attrs
import numpy as np

from ckcore import DType, Operator, Tolerance, UnsupportedProblem
from ckcore.staging import StagedTensor, Staging

from .epilogue import EPILOGUE_TENSORS, Activation, Bias, activation_numpy, activation_torch
from .problem import GemmProblem, Layout
from .quant import OutType, QuantType, Scale

__all__ = ["GemmOperator", "STAGED_ROW_BYTES"]

#: Staged copies' rows are padded to a multiple of this many bytes (TMA's 128-byte swizzle rows).
STAGED_ROW_BYTES = 128


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


@functools.lru_cache(maxsize=4096)
def _expectations(problem: GemmProblem):
    """(tensors that must be absent, [(name, shape, strides, shared by the batch, torch dtype)])."""
    import torch

    shapes, strides = problem.tensor_shapes(), problem.tensor_strides()
    absent = tuple(n for n in EPILOGUE_TENSORS if n not in shapes)
    expected = [(n, torch.Size(shapes[n]), strides[n], problem.batch > 1 and n in ("a", "b") and strides[n][0] == 0,
                 problem.tensor_type(n).torch) for n in ("a", "b", "c", *problem.epilogue_tensors())]
    return absent, tuple(expected)


class GemmOperator(Operator):
    """C[M,N] = act(alpha · A[M,K] @ B[K,N] + beta · C_in + bias + D...) with fp32 accumulation,
    optionally batched; tensors ``a``, ``b``, the problem's epilogue tensors (``c_in``, ``bias``,
    ``d0``...) and optional ``c``."""

    name = "gemm"
    problem_cls = GemmProblem
    inputs = ("a", "b")
    optional_inputs = EPILOGUE_TENSORS
    output = "c"

    def required_inputs(self, problem: GemmProblem) -> tuple[str, ...]:
        """``a``, ``b`` and the epilogue tensors ``problem`` names."""
        return self.inputs + problem.epilogue_tensors()
    models_package = "ck_plugin_gemm"

    def bucket(self, problem: GemmProblem):
        """(dtype, layout), as the gemm families' ``bucket``."""
        return problem.dtype, problem.layout

    def staging(self, problem: GemmProblem) -> Staging | None:
        """The twin of a problem whose leading dimensions are not multiples of 16 bytes (TMA's
        rule, which the ``gemm_tma`` and ``gemm_persistent`` families follow), or of an int8 /
        fp8 problem with a row-major B (layout ``rrr``; the quantized kernels read both operands
        K-major): A, B and C (with ``c_in`` and the D tensors, which share C's strides) copied
        into buffers whose leading dimension is the packed one rounded up to 128 bytes, and a
        quantized ``rrr`` B transposed into a K-major copy (twin layout ``rcr``). The sizes stay
        the problem's, so the padding is never read (TMA fills past the sizes with zeros, the
        other kernels mask). Offered for batch 1 and (except the quantized ``rrr`` twin, the only
        way those run) 16-byte aligned pointers; None otherwise, or where nothing needs a copy."""
        transpose_b = isinstance(problem.dtype, QuantType) and problem.layout is not Layout.RCR
        if problem.batch != 1 or (problem.ptr_align != 16 and not transpose_b):
            return None
        layout = Layout.RCR if transpose_b else problem.layout
        packed = attrs.evolve(problem, layout=layout, lda=None, ldb=None, ldc=None).packed_ld()
        changes: dict = {"layout": layout} if transpose_b else {}
        for field, name in (("lda", "a"), ("ldb", "b"), ("ldc", "c")):
            size = problem.tensor_type(name).itemsize
            if getattr(problem, field) * size % 16 or (transpose_b and name == "b"):
                row = STAGED_ROW_BYTES // size
                changes[field] = -(-packed[field] // row) * row
        if not changes:
            return None
        twin = attrs.evolve(problem, **changes)
        shapes, strides = twin.tensor_shapes(), twin.tensor_strides()
        names = [n for f, n in (("lda", "a"), ("ldb", "b")) if f in changes]
        if "ldc" in changes:
            names += [n for n in twin.epilogue_tensors() if n not in ("bias", "scale_a", "scale_b")] + ["c"]
        tensors = tuple(StagedTensor(n, tuple(shapes[n]), tuple(strides[n]), twin.tensor_type(n), output=n == "c",
                                     permuted=transpose_b and n == "b") for n in names)
        reason = ", ".join(f"{f} {getattr(problem, f).value if f == 'layout' else getattr(problem, f)} -> "
                           f"{v.value if f == 'layout' else v}" for f, v in changes.items())
        return Staging(twin, tensors, reason)

    def problem_from_tensors(self, a=None, b=None, c=None, **epilogue) -> GemmProblem:
        """The problem of torch tensors ``a`` [M,K], ``b`` [K,N] (and ``c`` [M,N]), each with an
        optional leading batch dimension (a 2-D ``b`` is shared by the batch); layout, leading
        dimensions and batch strides come from the strides. Epilogue fields (``alpha``, ``beta``,
        ``bias``, ``num_d``, ``activation``) pass through as keywords.
        :raises UnsupportedProblem:"""
        for name, t in (("a", a), ("b", b)):
            if t is None or not hasattr(t, "stride"):
                raise UnsupportedProblem(name, t, "a torch tensor", op="gemm")
            if t.dim() not in (2, 3):
                raise UnsupportedProblem(f"{name}.dim", t.dim(), "2 (a matrix) or 3 (a batch of matrices)", op="gemm")
        batch = a.shape[0] if a.dim() == 3 else 1
        if b.dim() == 3 and (a.dim() != 3 or b.shape[0] != batch):
            raise UnsupportedProblem("b.shape", tuple(b.shape), f"[K, N] or [{batch}, K, N] (batch from a.shape = {tuple(a.shape)})", op="gemm")
        a2, b2 = (a[0] if a.dim() == 3 else a), (b[0] if b.dim() == 3 else b)
        (M, K), (K2, N) = a2.shape, b2.shape
        if K2 != K:
            raise UnsupportedProblem("b.shape", tuple(b.shape), f"[{K}, N] (K from a.shape = {tuple(a.shape)})", op="gemm")
        dtype = DType.from_torch(a.dtype) or QuantType.from_torch(a.dtype)
        if dtype is None:
            raise UnsupportedProblem("a.dtype", str(a.dtype), "torch.float16, torch.bfloat16, torch.float32, torch.int8, "
                                     "torch.float8_e4m3fn or torch.float8_e5m2", op="gemm")
        la, lda = _layout_of("a", a2, M, K)
        lb, ldb = _layout_of("b", b2, K, N)
        fields = dict(M=M, N=N, K=K, dtype=dtype, layout=la + lb + "r", lda=lda, ldb=ldb, **epilogue)
        tensors = [a, b]
        if c is not None:
            c2 = c[0] if c.dim() == 3 else c
            lc, ldc = _layout_of("c", c2, *c2.shape) if c2.dim() == 2 else ("?", 0)
            if lc != "r":
                raise UnsupportedProblem("c.stride", tuple(c.stride()), "row-major (stride (ldc, 1))", op="gemm")
            fields["ldc"] = ldc
            tensors.append(c)
        if batch > 1:
            fields.update(batch=batch, stride_a=a.stride(0), stride_b=b.stride(0) if b.dim() == 3 else 0)
            if c is not None and c.dim() == 3:
                fields["stride_c"] = c.stride(0)
        fields["ptr_align"] = min(_ptr_align(t) for t in tensors)
        problem = GemmProblem(**fields)
        self.check_tensors(problem, {"a": a, "b": b, "c": c})
        return problem

    def check_tensors(self, problem: GemmProblem, tensors: Mapping[str, Any]) -> None:
        """Shapes, strides, dtypes and alignment of every tensor the problem reads or writes, and
        no tensor it does not read. The expectations are computed once per problem (this runs
        on every dispatch). :raises UnsupportedProblem: naming the tensor field."""
        absent, expected = _expectations(problem)
        for name in absent:
            if tensors.get(name) is not None:
                raise UnsupportedProblem(name, "<tensor>", f"absent: the problem's epilogue ({problem.epilogue}) does not read it", op="gemm")
        for name, shape, stride, shared, want in expected:
            t = tensors.get(name)
            if t is None:
                continue
            if not hasattr(t, "data_ptr"):
                raise UnsupportedProblem(name, type(t).__name__, "a torch tensor", op="gemm")
            if shared and t.dim() == 2:
                shape, stride = shape[1:], stride[1:]  # one matrix shared by the batch
            if t.shape != shape:
                raise UnsupportedProblem(f"{name}.shape", tuple(t.shape), f"{list(shape)}", op="gemm")
            if t.dtype != want:
                raise UnsupportedProblem(f"{name}.dtype", str(t.dtype), f"{want} (problem dtype {problem.dtype.value}, "
                                         f"out_dtype {problem.out.value})", op="gemm")
            for size, have, need in zip(t.shape, t.stride(), stride):
                if size > 1 and have != need:
                    raise UnsupportedProblem(
                        f"{name}.stride", tuple(t.stride()),
                        f"{stride} (layout {problem.layout.value}, ld and batch strides as the problem says; size-1 dims are free)",
                        op="gemm",
                    )
            if t.data_ptr() % problem.ptr_align:
                raise UnsupportedProblem(f"{name}.data_ptr", t.data_ptr(), f"a multiple of ptr_align={problem.ptr_align} bytes", op="gemm")

    def empty_output(self, problem: GemmProblem, like) -> Any:
        import torch

        shape, strides = problem.tensor_shapes()["c"], problem.tensor_strides()["c"]
        if problem.batch > 1 and problem.stride_c != problem.matrix_spans()["c"]:
            storage = torch.empty(problem.batch * problem.stride_c, dtype=problem.out.torch, device=like.device)
            return storage.as_strided(shape, strides)
        return torch.empty_strided(shape, strides, dtype=problem.out.torch, device=like.device)

    def random_inputs(self, problem: GemmProblem, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Standard-normal A, B and epilogue tensors (logical shapes, :meth:`GemmProblem.tensor_shapes`),
        rounded to each tensor's type (float64 arrays); int8 operands uniform in [-4, 4] (so
        that int32 sums of K = 4096 products, scaled, stay in fp16's range), dequantization scales
        uniform in [0.5, 2]."""
        out = {}
        for name, shape in problem.tensor_shapes().items():
            if name == "c":
                continue
            if name in ("scale_a", "scale_b"):
                x = rng.uniform(0.5, 2.0, shape)
            elif problem.tensor_type(name) is QuantType.INT8:
                x = rng.integers(-4, 5, shape).astype(np.float64)
            else:
                x = rng.standard_normal(shape)
            out[name] = problem.tensor_type(name).round_numpy(x)
        return out

    def to_torch(self, problem: GemmProblem, arrays, device) -> dict[str, Any]:
        """Tensors with the problem's layout, leading dimensions and batch strides (padding
        filled with NaN, so a kernel that reads it is caught)."""
        import torch

        return {name: self._laid_out(problem, name, torch.from_numpy(np.ascontiguousarray(arrays[name])), device)
                for name in arrays}

    def random_tensors(self, problem: GemmProblem, seed: int, device) -> dict[str, Any]:
        """Standard-normal A, B and epilogue tensors generated on ``device`` (fast for large problems)."""
        import torch

        g = torch.Generator(device=device).manual_seed(seed)
        out = {}
        for name, shape in problem.tensor_shapes().items():
            if name == "c":
                continue
            x = torch.randn(shape, generator=g, device=device, dtype=torch.float32)
            if name in ("scale_a", "scale_b"):
                x = 0.5 + x.abs().clamp(max=1.5)
            elif problem.tensor_type(name) is QuantType.INT8:
                x = (x * 2).round().clamp(-4, 4)
            out[name] = self._laid_out(problem, name, x, device)
        return out

    @staticmethod
    def _laid_out(problem: GemmProblem, name: str, logical, device):
        """``logical`` (the tensor's logical shape) copied into storage of the problem's strides."""
        import torch

        shape, strides = problem.tensor_shapes()[name], problem.tensor_strides()[name]
        # Storage large enough for the strides (stride 0 on the batch: one shared matrix).
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        dtype = problem.tensor_type(name).torch
        # Padding holds NaN (int8: 127), so a kernel that reads it is caught.
        storage = torch.full((extent,), 127 if dtype == torch.int8 else float("nan"), dtype=dtype, device=device)
        view = storage.as_strided(shape, strides)
        if problem.batch > 1 and name in ("a", "b") and strides[0] == 0:
            view[0].copy_(logical[0].to(device=device, dtype=dtype))  # the one shared matrix
        else:
            view.copy_(logical.to(device=device, dtype=dtype))
        return view

    def reference(self, problem: GemmProblem, arrays) -> np.ndarray:
        """act(alpha · A @ B + beta · C_in + bias + sum D) in float64 (batched with a leading batch axis)."""
        a, b = np.asarray(arrays["a"], np.float64), np.asarray(arrays["b"], np.float64)
        if problem.batch > 1 and problem.stride_a == 0:
            a = np.broadcast_to(a[:1], a.shape)
        if problem.batch > 1 and problem.stride_b == 0:
            b = np.broadcast_to(b[:1], b.shape)
        out = np.matmul(a, b)
        if problem.epilogue == "none":
            return out
        if problem.scale is not Scale.NONE:
            sa, sb = np.asarray(arrays["scale_a"], np.float64), np.asarray(arrays["scale_b"], np.float64)
            out = out * (sa[:, None] if problem.scale is Scale.ROW else sa) * sb
        out = problem.alpha * out
        if problem.beta != 0.0:
            out = out + problem.beta * np.asarray(arrays["c_in"], np.float64)
        if problem.bias is Bias.ROW:
            out = out + np.asarray(arrays["bias"], np.float64)[:, None]
        elif problem.bias is Bias.COL:
            out = out + np.asarray(arrays["bias"], np.float64)
        for i in range(problem.num_d):
            out = out + np.asarray(arrays[f"d{i}"], np.float64)
        return activation_numpy(problem.activation, out)

    def flops(self, problem: GemmProblem) -> float:
        """2·M·N·K per matrix of the batch (the epilogue's element-wise work is not counted)."""
        return 2.0 * problem.M * problem.N * problem.K * problem.batch

    def min_bytes(self, problem: GemmProblem) -> float:
        """Every distinct input element read once and C written once: (M·K + K·N + M·N) per
        matrix (A or B once when the batch shares it), plus C_in and D (M·N each) and the bias,
        times bytes per element."""
        p = problem
        a = p.M * p.K * (1 if p.batch > 1 and p.stride_a == 0 else p.batch)
        b = p.K * p.N * (1 if p.batch > 1 and p.stride_b == 0 else p.batch)
        c_like = p.M * p.N * p.batch * (1 + (p.beta != 0.0) + p.num_d)
        bias = {Bias.NONE: 0, Bias.ROW: p.M, Bias.COL: p.N}[p.bias]
        scales = {Scale.NONE: 0, Scale.TENSOR: 2, Scale.ROW: p.M + p.N}[p.scale] * 4
        return float(a + b) * p.dtype.itemsize + float(c_like + bias) * p.out.itemsize + scales

    def tolerance(self, problem: GemmProblem) -> Tolerance:
        """Output rounding (relative) plus accumulation error growing with sqrt(K) (absolute),
        scaled by |alpha| (the accumulated sum is scaled before the epilogue adds the rest; every
        activation has slope at most 1.13, so it does not amplify the error):
        fp16 2^-10, bf16 2^-7 (the interpreter truncates), fp32 as tf32 (10-bit mantissa inputs)."""
        root_k = math.sqrt(problem.K) * max(1.0, abs(problem.alpha))
        if problem.out is OutType.INT32:
            return Tolerance(atol=0.0, rtol=0.0)  # exact integer arithmetic
        if isinstance(problem.dtype, QuantType):
            # Products of int8 / fp8 values are exact; int8 sums are exact in int32. fp8 sums run
            # in the tensor cores' accumulator, which keeps about 14 bits (DeepSeek-V3 technical
            # report, section 3.3.2) between promotions to fp32: allowed 2^-7 of sqrt(K) per unit
            # product, times the scales (at most 2 each). Measured on an H200: torch._scaled_mm
            # (cuBLAS) errs by the same amount as ckcore, to the last digit, on every row of
            # benchmarks/results/bench_gemm_fp8_h200.jsonl; the largest, 1.26 at K = 2048, needs
            # this bound. Then the output rounding of C's type.
            rtol = {OutType.BF16: 2 * 2**-7, OutType.FP16: 2 * 2**-10, OutType.FP32: 1e-5}[problem.out]
            atol = 0.0 if problem.dtype is QuantType.INT8 else 2**-7 * root_k * 4
            if problem.fast_accum:  # no promotion at all: measured errors up to 7x (H200 bench)
                atol *= 4
            return Tolerance(atol=atol + 1e-6, rtol=rtol)
        if problem.dtype is DType.FP32:
            return Tolerance(atol=4 * 2**-10 * root_k, rtol=2e-3)
        if problem.dtype is DType.BF16:
            return Tolerance(atol=1e-4 * root_k, rtol=2 * 2**-7)
        return Tolerance(atol=1e-4 * root_k, rtol=2 * 2**-10)

    def torch_baseline(self, problem: GemmProblem, tensors):
        """``torch.matmul(a, b, out=c)`` (cuBLAS on the GPU; tf32 allowed for fp32; fp8:
        ``torch._scaled_mm`` with the scales, int8: ``torch._int_mm``), then the rest of the
        epilogue as the unfused torch sequence: ``c *= alpha``, ``c += beta * c_in``, ``c += bias``,
        ``c += d_i``, then the activation (in place where torch has one; gelu returns a new tensor,
        which is returned, not copied back: the sequence is matmul, add, gelu, nothing more)."""
        import torch

        a, b, c = tensors["a"], tensors["b"], tensors.get("c")
        if c is None:
            c = self.empty_output(problem, a)
        p = problem
        bias = tensors.get("bias")
        if bias is not None and p.bias is Bias.ROW:
            bias = bias[:, None]

        def run():
            out = self._torch_product(p, a, b, c, tensors)  # scales applied
            if p.alpha != 1.0:
                out.mul_(p.alpha)
            if p.beta != 0.0:
                out.add_(tensors["c_in"], alpha=p.beta)
            if bias is not None:
                out.add_(bias)
            for i in range(p.num_d):
                out.add_(tensors[f"d{i}"])
            out = activation_torch(p.activation, out)  # a new tensor where torch has no in-place form
            return out if out.dtype == c.dtype or out.dtype == torch.float64 else out.to(c.dtype)

        return run

    @staticmethod
    def _torch_product(p: GemmProblem, a, b, c, tensors):
        """scale_a · (A @ B) · scale_b as torch computes it: ``torch._scaled_mm`` for fp8 (scales
        included; ones without), ``torch._int_mm`` for int8 where it takes the sizes (M > 16, K
        and N multiples of 8; else an exact float64 product), ``torch.matmul`` otherwise (the
        float64 recomputation included: its tensors are float64 and its scales applied here). A
        row-major quantized B (layout ``rrr``) is copied K-major first, on every call."""
        import torch

        if p.scale is Scale.NONE:
            sa = sb = None
        elif p.scale is Scale.TENSOR:
            sa, sb = tensors["scale_a"].reshape(()), tensors["scale_b"].reshape(())
        else:
            sa, sb = tensors["scale_a"][:, None], tensors["scale_b"][None, :]
        if p.layout.b == "r" and a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.int8):
            b = b.t().contiguous().t()  # torch takes quantized operands K-major only: a copy per call
        if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            one = torch.ones((), device=a.device, dtype=torch.float32)
            return torch._scaled_mm(a, b, scale_a=one if sa is None else sa, scale_b=one if sb is None else sb,
                                    out_dtype=c.dtype, use_fast_accum=p.fast_accum)
        if a.dtype == torch.int8:
            if p.M > 16 and p.K % 8 == 0 and p.N % 8 == 0 and a.is_cuda and p.batch == 1:
                prod = torch._int_mm(a, b)
            else:
                prod = (a.double() @ b.double()).to(torch.int32)
            if p.out is OutType.INT32:
                return c.copy_(prod)
            prod = prod.float()
        else:
            prod = torch.matmul(a, b, out=c)
        if sa is not None:
            prod = prod * sa * sb
        return prod

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

    def float64_problem(self, problem: GemmProblem) -> GemmProblem:
        """The problem as its float64 recomputation runs it (fp32 types, same scales and epilogue)."""
        import attrs

        return attrs.evolve(problem, dtype="fp32", out_dtype=None, fast_accum=False)

    def features(self, problem: GemmProblem) -> dict[str, float]:
        """Sizes, element size, operand layouts, the input class (``int8``, ``fp8``: one
        byte each, but their kernels rank differently; fp8 with promoted accumulation,
        ``fp8_promoted``, pays for every promotion) and the fused epilogue's work per element of
        C: ``epi_inputs`` (C-shaped tensors read: C_in and the D tensors), ``epi_bias``, and the
        activation's class (``act_erf``: gelu through erf; ``act_exp``: one exponential,
        gelu_tanh / silu / sigmoid / tanh; ``act_relu``)."""
        fp8 = problem.dtype in (QuantType.FP8E4M3, QuantType.FP8E5M2)
        act = problem.activation
        return {"M": problem.M, "N": problem.N, "K": problem.K, "itemsize": problem.dtype.itemsize,
                "layout_a_row": float(problem.layout.a == "r"), "layout_b_row": float(problem.layout.b == "r"),
                "int8": float(problem.dtype is QuantType.INT8), "fp8": float(fp8),
                "fp8_promoted": float(fp8 and not problem.fast_accum),
                "epi_inputs": float(problem.beta != 0.0) + problem.num_d, "epi_bias": float(problem.bias is not Bias.NONE),
                "act_erf": float(act is Activation.GELU), "act_relu": float(act is Activation.RELU),
                "act_exp": float(act in (Activation.GELU_TANH, Activation.SILU, Activation.SIGMOID, Activation.TANH))}
