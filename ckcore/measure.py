"""Validation against the reference and timing against the PyTorch path.

Timing uses ``triton.testing.do_bench(..., return_mode="median")`` (it flushes L2 before every
repetition) after a warm-up launch that keeps compilation and cache loads out of the numbers.
In the interpreter a single wall-clock run is reported (for correctness, not speed).
"""

from __future__ import annotations

import math
import time
from typing import Any

import attrs
import numpy as np

from .dispatch import launch
from .registry import Registry

__all__ = ["Validation", "validate", "time_ms", "inputs_for", "environment"]


@attrs.frozen
class Validation:
    """Errors against the float64 reference: ``max_abs_err``; ``max_rel_err`` =
    max|out - ref| / max|ref|; ``passed`` when every element is within the op's tolerance
    and finite."""

    max_abs_err: float
    max_rel_err: float
    passed: bool

    def to_dict(self) -> dict:
        return attrs.asdict(self)


def compare(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> Validation:
    out = np.asarray(out, np.float64)
    err = np.abs(out - ref)
    finite = bool(np.isfinite(out).all())
    max_abs = float(err.max()) if err.size else 0.0
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    passed = finite and bool((err <= atol + rtol * np.abs(ref)).all())
    return Validation(max_abs if finite else math.inf, (max_abs / scale if scale else max_abs) if finite else math.inf, passed)


def compare_tensors(out, ref, atol: float, rtol: float) -> Validation:
    """:func:`compare` for two torch tensors, computed on their device in float32."""
    import torch

    out, ref = out.float(), ref.float()
    finite = bool(torch.isfinite(out).all())
    err = (out - ref).abs()
    max_abs = float(err.max()) if err.numel() else 0.0
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    passed = finite and bool((err <= atol + rtol * ref.abs()).all())
    if not finite:
        return Validation(math.inf, math.inf, False)
    return Validation(max_abs, max_abs / scale if scale else max_abs, passed)


def device_of(interpret: bool) -> str:
    return "cpu" if interpret else "cuda"


def inputs_for(registry: Registry, op: str, problem, seed: int = 0, interpret: bool | None = None):
    """Random inputs as (NumPy arrays, torch tensors on the run device)."""
    interpret = registry.interpret if interpret is None else interpret
    spec = registry.catalog.op(op)
    arrays = spec.random_inputs(problem, np.random.default_rng(seed))
    return arrays, spec.to_torch(problem, arrays, device_of(interpret))


def poisoned_output(registry: Registry, op: str, problem, tensors: dict[str, Any]):
    """A new output tensor filled with NaN, so unwritten elements fail validation."""
    spec = registry.catalog.op(op)
    return poison(spec.empty_output(problem, tensors[spec.inputs[0]]))


def poison(t):
    """``t`` filled with NaN (integer tensors: their smallest value), so unwritten elements fail
    validation; returns ``t``."""
    import torch

    return t.fill_(float("nan") if t.is_floating_point() else torch.iinfo(t.dtype).min)
    return out


def validate(registry: Registry, op: str, problem, *, instance: str | None = None, seed: int = 0,
             interpret: bool | None = None) -> Validation:
    """Run ``problem`` once on random inputs and compare with the NumPy float64 reference."""
    spec = registry.catalog.op(op)
    arrays, tensors = inputs_for(registry, op, problem, seed, interpret)
    tensors[spec.output] = poisoned_output(registry, op, problem, tensors)
    out = launch(registry, op, problem, tensors, instance=instance, interpret=interpret)
    tol = spec.tolerance(problem)
    return compare(out.double().cpu().numpy(), spec.reference(problem, arrays), tol.atol, tol.rtol)


def time_ms(fn, *, interpret: bool, warmup: int = 25, rep: int = 100) -> float:
    """Median milliseconds of ``fn()`` (do_bench on the GPU; one timed run in the interpreter)."""
    fn()  # warm-up: compile / load / launcher build stay out of the timing
    if interpret:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def environment(interpret: bool) -> dict[str, Any]:
    """GPU name and library versions for result provenance."""
    import torch
    import triton

    env = {"torch": torch.__version__, "triton": triton.__version__, "interpreter": interpret}
    if not interpret:
        env["gpu"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        env["cudnn"] = torch.backends.cudnn.version()
    else:
        env["gpu"] = None
    return env
