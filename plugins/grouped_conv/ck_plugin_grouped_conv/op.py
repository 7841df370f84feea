"""The three grouped convolution ops: problem from tensors, tensor checks, NumPy reference,
FLOP and byte counts, and the PyTorch (cuDNN) baseline.

Every direction has three tensors in three roles: ``x`` (the input image), ``w`` (the filter),
``y`` (the output image). Forward reads x and w and writes y; backward-data reads dy and w and
writes dx; backward-weight reads x and dy and writes dw.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import attrs
import numpy as np

from ckcore import DType, Operator, Tolerance, UnsupportedProblem
from ckcore.staging import StagedTensor, Staging

from . import reference
from .problem import (SUITE_OP, ConvBwdDataProblem, ConvBwdWeightProblem, ConvFwdProblem, ConvLayout, ConvProblem,
                      packed_strides)

__all__ = ["ConvOperator", "ConvFwdOperator", "ConvBwdDataOperator", "ConvBwdWeightOperator", "OPERATORS"]


def _ptr_align(t) -> int:
    p = t.data_ptr()
    return next(a for a in (16, 8, 4, 2, 1) if p % a == 0)


class ConvOperator(Operator):
    """Base of the three directions. ``roles`` maps role (x, w, y) to tensor name."""

    direction: str
    roles: dict[str, str]
    suite_ops = (SUITE_OP,)
    models_package = "ck_plugin_grouped_conv"

    def bench_groups(self):
        """Grouped (G > 1, C/G > 1), dense (G = 1) and depthwise (C/G = 1) rows."""
        return {"grouped": lambda p: p["G"] > 1 and p["C"] > p["G"],
                "dense": lambda p: p["G"] == 1,
                "depthwise": lambda p: p["C"] == p["G"]}

    # ---- problems --------------------------------------------------------------------------
    def generate(self, rng) -> dict:
        """CNN-like problems: 2D 75%, 3D 15%, 1D 10%; N in {1, 2, 4, 8, 16, 32, 64}; channels
        16-1024 (multiples of 8, sometimes odd or 3); groups: dense 40%, depthwise 25%, else
        grouped with 2-64 channels per group; square filters 1/3/5/7 (1D: up to 31); stride 1
        or 2; dilation 2 at 10%; "same" padding; bf16 70%, fp16 20%, fp32 10%; channels-last 85%."""
        ndim = int(rng.choice([1, 2, 3], p=[0.1, 0.75, 0.15]))
        N = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
        side = {1: (64, 4096), 2: (7, 112), 3: (4, 32)}[ndim]
        spatial = [int(np.exp(rng.uniform(np.log(side[0]), np.log(side[1])))) for _ in range(ndim)]
        if ndim > 1 and rng.random() < 0.7:
            spatial = [spatial[0]] * ndim
        C = 3 if rng.random() < 0.05 else int(8 * max(2, int(np.exp(rng.uniform(np.log(2), np.log(128))))))
        if rng.random() < 0.1:
            C += int(rng.integers(1, 8))
        kind = rng.choice(["dense", "depthwise", "grouped"], p=[0.4, 0.25, 0.35])
        if kind == "depthwise":
            G, K = C, C * int(rng.choice([1, 1, 1, 2]))
        elif kind == "grouped":
            cg = int(rng.choice([2, 4, 8, 16, 32, 64]))
            G = max(1, C // cg)
            C = G * cg
            K = G * cg * int(rng.choice([1, 1, 2]))
        else:
            G, K = 1, int(8 * max(2, int(np.exp(rng.uniform(np.log(2), np.log(128))))))
        f = int(rng.choice([1, 3, 3, 3, 5, 7] + ([9, 15, 31] if ndim == 1 else [])))
        stride = int(rng.choice([1, 1, 1, 2]))
        dilation = 2 if f > 1 and rng.random() < 0.1 else 1
        pad = dilation * (f - 1) // 2
        layout = ConvLayout.of(ndim, bool(rng.random() < 0.85)).value
        return {"ndim": ndim, "N": N, "G": G, "C": C, "K": K, "spatial": spatial, "filter": [f] * ndim,
                "stride": [stride] * ndim, "pad": [pad] * ndim, "dilation": [dilation] * ndim,
                "dtype": str(rng.choice(["bf16", "fp16", "fp32"], p=[0.7, 0.2, 0.1])), "layout": layout}

    def problem(self, **fields) -> ConvProblem:
        """A validated problem; a suite line's ``op`` (``grouped_conv`` or this op) and ``name``
        keys are accepted and dropped. :raises UnsupportedProblem:"""
        fields = dict(fields)
        fields.pop("name", None)
        op = fields.pop("op", self.name)
        if op not in (self.name, SUITE_OP):
            raise UnsupportedProblem("op", op, f"{self.name!r} or {SUITE_OP!r}", op=self.name)
        try:
            return self.problem_cls(**fields)
        except TypeError as exc:  # missing or unknown field
            raise UnsupportedProblem("fields", sorted(fields), f"the fields of {self.problem_cls.__name__} ({exc})",
                                     op=self.name) from None

    def bucket(self, problem: ConvProblem):
        """(dtype, channels-last, one group, one input channel per group, every stride 1, filter
        height): the implicit-GEMM families' ``bucket`` names the first two, the filter-row and
        pointwise ones the third (G = 1), the depthwise ones the fourth (C/G = 1), the
        stride-1-only ones (backward-data's TMA and ``unit_stride`` kernels, the TMA forward
        kernels without row phases, the halo families) the fifth (the TMA ``phases`` kernels:
        not stride 1), the halo families, compiled for one filter height, the sixth (the filter
        height of the problem padded to 3-D: 1 for 1-D problems)."""
        return (problem.dtype, problem.layout.channels_last, problem.G == 1, problem.Cg == 1,
                all(s == 1 for s in problem.stride), problem.as_3d()["filter"][1])

    def staging(self, problem: ConvProblem) -> Staging | None:
        """The channels-last twin of a channels-first (contiguous, PyTorch's default memory
        format) problem: x, w and y (in this direction's roles) copied into channels-last
        buffers, where the TMA, filter-row and channels-last implicit-GEMM families serve it;
        the output copied back. Selection weighs the copies (:mod:`ckcore.staging`). None for
        channels-last problems."""
        if problem.layout.channels_last:
            return None
        twin = attrs.evolve(problem, layout=ConvLayout.of(problem.ndim, True), ptr_align=16)
        shapes, strides = twin.tensor_shapes(), twin.tensor_strides()
        tensors = tuple(StagedTensor(name, tuple(shapes[role]), tuple(strides[role]), twin.dtype,
                                     output=name == self.output, permuted=True) for role, name in self.roles.items())
        return Staging(twin, tensors, f"layout {problem.layout.value} -> {twin.layout.value}")

    def problem_from_tensors(self, *, stride=None, pad=None, dilation=None, groups: int = 1, **tensors) -> ConvProblem:
        """The problem of torch tensors in this op's names (all three needed for backward-data's
        input size; the output may be omitted otherwise), with ``stride``, ``pad``, ``dilation``
        (ints or one per spatial dim; default 1, 0, 1) and ``groups``.
        :raises UnsupportedProblem:"""
        x_name, w_name, y_name = (self.roles[r] for r in ("x", "w", "y"))
        image = tensors.get(x_name) if tensors.get(x_name) is not None else tensors.get(y_name)
        if image is None or not hasattr(image, "dim"):
            raise UnsupportedProblem(x_name, image, "a torch tensor", op=self.name)
        ndim = image.dim() - 2
        if ndim not in (1, 2, 3):
            raise UnsupportedProblem(f"{x_name}.dim", image.dim(), "3, 4 or 5 (N, C, *spatial)", op=self.name)

        def per_dim(value, default):
            value = default if value is None else value
            return (value,) * ndim if isinstance(value, int) else tuple(value)

        x, w, y = tensors.get(x_name), tensors.get(w_name), tensors.get(y_name)
        if x is None:
            raise UnsupportedProblem(x_name, None, f"a torch tensor (needed for the input size of {self.name})",
                                     op=self.name)
        if w is None and y is None:
            raise UnsupportedProblem(w_name, None, "a torch tensor", op=self.name)
        filt = tuple(w.shape[2:]) if w is not None else None
        K = w.shape[0] if w is not None else y.shape[1]
        if filt is None:
            raise UnsupportedProblem(w_name, None, f"a torch tensor (needed for the filter size of {self.name})",
                                     op=self.name)
        dtype = DType.from_torch(x.dtype)
        if dtype is None:
            raise UnsupportedProblem(f"{x_name}.dtype", str(x.dtype), "torch.float16, torch.bfloat16 or torch.float32",
                                     op=self.name)
        channels_last = _matches(x, packed_strides(tuple(x.shape), True)) and not _matches(
            x, packed_strides(tuple(x.shape), False))
        problem = self.problem(
            ndim=ndim, N=x.shape[0], G=groups, C=x.shape[1], K=K, spatial=tuple(x.shape[2:]), filter=filt,
            stride=per_dim(stride, 1), pad=per_dim(pad, 0), dilation=per_dim(dilation, 1),
            dtype=dtype, layout=ConvLayout.of(ndim, channels_last),
            ptr_align=min(_ptr_align(t) for t in tensors.values() if t is not None))
        self.check_tensors(problem, tensors)
        return problem

    def check_tensors(self, problem: ConvProblem, tensors: Mapping[str, Any]) -> None:
        shapes, strides = problem.tensor_shapes(), problem.tensor_strides()
        want_dtype = problem.dtype.torch
        for role, name in self.roles.items():
            t = tensors.get(name)
            if t is None:
                continue
            if not hasattr(t, "data_ptr"):
                raise UnsupportedProblem(name, type(t).__name__, "a torch tensor", op=self.name)
            if tuple(t.shape) != shapes[role]:
                raise UnsupportedProblem(f"{name}.shape", tuple(t.shape), f"{list(shapes[role])}", op=self.name)
            if t.dtype != want_dtype:
                raise UnsupportedProblem(f"{name}.dtype", str(t.dtype), f"{want_dtype} (problem dtype {problem.dtype.value})",
                                         op=self.name)
            if not _matches(t, strides[role]):
                fmt = "channels-last" if problem.layout.channels_last else "contiguous"
                raise UnsupportedProblem(f"{name}.stride", tuple(t.stride()),
                                             f"{strides[role]} (packed {fmt}, layout {problem.layout.value})", op=self.name)
            if t.data_ptr() % problem.ptr_align:
                raise UnsupportedProblem(f"{name}.data_ptr", t.data_ptr(), f"a multiple of ptr_align={problem.ptr_align} bytes",
                                         op=self.name)

    def empty_output(self, problem: ConvProblem, like) -> Any:
        return self.empty_like_role(problem, self._output_role(), like)

    @staticmethod
    def empty_like_role(problem: ConvProblem, role: str, like, dtype=None) -> Any:
        """A new tensor of ``role``'s (x, w or y) shape and memory format on ``like``'s device,
        of ``dtype`` (default the problem's)."""
        import torch

        shape = problem.tensor_shapes()[role]
        return torch.empty_strided(shape, problem.tensor_strides()[role], dtype=dtype or problem.dtype.torch,
                                   device=like.device)

    def _output_role(self) -> str:
        return next(r for r, n in self.roles.items() if n == self.output)

    # ---- data ------------------------------------------------------------------------------
    def random_inputs(self, problem: ConvProblem, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Standard-normal inputs with their logical shapes, rounded to the problem's dtype."""
        shapes = problem.tensor_shapes()
        return {self.roles[r]: problem.dtype.round_numpy(rng.standard_normal(shapes[r]))
                for r in self.roles if self.roles[r] in self.inputs}

    def to_torch(self, problem: ConvProblem, arrays, device) -> dict[str, Any]:
        import torch

        out = {}
        for name, a in arrays.items():
            t = torch.from_numpy(np.ascontiguousarray(a)).to(dtype=problem.dtype.torch)
            out[name] = _in_format(t, problem.layout.channels_last).to(device)
        return out

    def random_tensors(self, problem: ConvProblem, seed: int, device) -> dict[str, Any]:
        """Standard-normal inputs generated on ``device`` in the problem's memory format."""
        import torch

        g = torch.Generator(device=device).manual_seed(seed)
        shapes = problem.tensor_shapes()
        out = {}
        for role, name in self.roles.items():
            if name in self.inputs:
                t = torch.randn(shapes[role], generator=g, device=device, dtype=torch.float32).to(problem.dtype.torch)
                out[name] = _in_format(t, problem.layout.channels_last)
        return out

    # ---- counts ----------------------------------------------------------------------------
    def flops(self, problem: ConvProblem) -> float:
        """2 · N · K · (C/G) · output pixels · filter taps (the same for the three directions)."""
        return 2.0 * problem.N * problem.K * problem.Cg * problem.out_pixels * problem.taps

    def min_bytes(self, problem: ConvProblem) -> float:
        """(x + w + y elements) · bytes per element: two tensors read once, one written once."""
        return float(sum(problem.numel().values()) * problem.dtype.itemsize)

    def tolerance(self, problem: ConvProblem) -> Tolerance:
        """Output rounding (relative: fp16 2^-10, bf16 2^-7, fp32 computed as tf32 2^-10, each
        doubled) plus accumulation error growing with the square root of the reduction length
        (absolute; the reduction is C/G·taps, K/G·taps or N·output pixels by direction). fp32
        also allows 4·2^-10 of sqrt(Σ(a·b)²) per output (``magnitude_rtol``): the tensor-core
        kernels round both inputs to tf32 (2^-11 each), so each product errs by up to 2^-10 of
        itself; their sum's error grows as the root of the summed squares, as the absolute term
        assumes for unit products, and 4 is that term's margin too. Without it, six
        implicit-GEMM kernels failed on a 1×1 problem of reduction K/G = 2 and 20 M outputs,
        each by 0.0164 where atol + rtol·|ref| allowed 0.0055 + 0.002·|ref| (docs/tune.md,
        twenty-fifth session)."""
        root = math.sqrt(self.reduction_length(problem))
        if problem.dtype is DType.FP32:
            return Tolerance(atol=4 * 2**-10 * root, rtol=2e-3, magnitude_rtol=4 * 2**-10)
        if problem.dtype is DType.BF16:
            return Tolerance(atol=1e-3 * root, rtol=2 * 2**-7)
        return Tolerance(atol=1e-3 * root, rtol=2 * 2**-10)

    def reduction_length(self, problem: ConvProblem) -> int:
        raise NotImplementedError

    def features(self, problem: ConvProblem) -> dict[str, float]:
        d3 = problem.as_3d()
        feats = {"N": problem.N, "G": problem.G, "Cg": problem.Cg, "Kg": problem.Kg, "ndim": problem.ndim,
                 "itemsize": problem.dtype.itemsize, "channels_last": float(problem.layout.channels_last),
                 "out_pixels": problem.out_pixels, "taps": problem.taps}
        for i, axis in enumerate("dhw"):
            feats.update({f"in_{axis}": d3["spatial"][i], f"filter_{axis}": d3["filter"][i],
                          f"stride_{axis}": d3["stride"][i], f"dilation_{axis}": d3["dilation"][i]})
        return feats

    def _backward(self, problem: ConvProblem, dy, given, *, want: int):
        """A callable returning output ``want`` (0: dx, 1: dw) of
        ``torch.ops.aten.convolution_backward``; ``given`` is the operand it reads (w for dx, x
        for dw). The wanted one is only a shape and memory format to the call: an empty
        placeholder, in dy's dtype (cuDNN wants every operand in one dtype)."""
        import torch

        placeholder = self.empty_like_role(problem, ("x", "w")[want], dy, dy.dtype)
        x, w = (placeholder, given) if want == 0 else (given, placeholder)
        kw = self._torch_conv_args(problem)
        mask = [want == 0, want == 1, False]

        def run():
            return torch.ops.aten.convolution_backward(dy, x, w, None, kw["stride"], kw["padding"], kw["dilation"],
                                                       False, [0] * problem.ndim, kw["groups"], mask)[want]

        return run

    def _torch_conv_args(self, problem: ConvProblem) -> dict:
        """Arguments of the PyTorch baseline. Enables ``torch.backends.cudnn.benchmark`` (cuDNN
        then times its algorithms on first use and keeps the fastest: its best case)."""
        import torch

        torch.backends.cudnn.benchmark = True
        return {"stride": list(problem.stride), "padding": list(problem.pad), "dilation": list(problem.dilation),
                "groups": problem.G}


def _matches(t, strides) -> bool:
    return all(size <= 1 or have == want for size, have, want in zip(t.shape, t.stride(), strides))


def _in_format(t, channels_last: bool):
    """``t`` (logical N, C, *spatial) stored channels-last or contiguous."""
    if not channels_last:
        return t.contiguous()
    perm = [0] + list(range(2, t.dim())) + [1]
    inverse = [perm.index(i) for i in range(t.dim())]
    return t.permute(perm).contiguous().permute(inverse)


class ConvFwdOperator(ConvOperator):
    """``y = conv(x, w)``: tensors ``x`` (N, C, *spatial), ``w`` (K, C/G, *filter) → ``y`` (N, K, *out)."""

    name = "grouped_conv_fwd"
    direction = "fwd"
    problem_cls = ConvFwdProblem
    inputs = ("x", "w")
    output = "y"
    roles = {"x": "x", "w": "w", "y": "y"}

    def reference(self, problem, arrays):
        return reference.conv_fwd(arrays["x"], arrays["w"], groups=problem.G, **_geometry(problem))

    def reduction_length(self, problem):
        return problem.Cg * problem.taps

    def torch_baseline(self, problem, tensors):
        """``torch.nn.functional.conv{1,2,3}d`` (cuDNN on the GPU)."""
        import torch.nn.functional as F

        conv = (F.conv1d, F.conv2d, F.conv3d)[problem.ndim - 1]
        x, w, kw = tensors["x"], tensors["w"], self._torch_conv_args(problem)
        return lambda: conv(x, w, **kw)


class ConvBwdDataOperator(ConvOperator):
    """``dx = conv_bwd_data(dy, w)``: tensors ``dy`` (N, K, *out), ``w`` (K, C/G, *filter) → ``dx`` (N, C, *spatial)."""

    name = "grouped_conv_bwd_data"
    direction = "bwd_data"
    problem_cls = ConvBwdDataProblem
    inputs = ("dy", "w")
    output = "dx"
    roles = {"x": "dx", "w": "w", "y": "dy"}

    def reference(self, problem, arrays):
        return reference.conv_bwd_data(arrays["dy"], arrays["w"], groups=problem.G, spatial=problem.spatial,
                                       **_geometry(problem))

    def reduction_length(self, problem):
        return problem.Kg * problem.taps

    def torch_baseline(self, problem, tensors):
        """``torch.ops.aten.convolution_backward`` for the input gradient only (cuDNN)."""
        return self._backward(problem, tensors["dy"], tensors["w"], want=0)


class ConvBwdWeightOperator(ConvOperator):
    """``dw = conv_bwd_weight(x, dy)``: tensors ``x`` (N, C, *spatial), ``dy`` (N, K, *out) → ``dw`` (K, C/G, *filter)."""

    name = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    problem_cls = ConvBwdWeightProblem
    inputs = ("x", "dy")
    output = "dw"
    roles = {"x": "x", "w": "dw", "y": "dy"}

    def reference(self, problem, arrays):
        return reference.conv_bwd_weight(arrays["x"], arrays["dy"], groups=problem.G, filter=problem.filter,
                                         **_geometry(problem))

    def reduction_length(self, problem):
        return problem.N * problem.out_pixels

    def torch_baseline(self, problem, tensors):
        """``torch.ops.aten.convolution_backward`` for the weight gradient only (cuDNN)."""
        return self._backward(problem, tensors["dy"], tensors["x"], want=1)


def _geometry(problem: ConvProblem) -> dict:
    return {"stride": problem.stride, "pad": problem.pad, "dilation": problem.dilation}


OPERATORS = (ConvFwdOperator, ConvBwdDataOperator, ConvBwdWeightOperator)
