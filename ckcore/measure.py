"""Validation against the reference and timing against the PyTorch path.

Timing (:func:`gpu_times`) follows ``triton.testing.do_bench``: CUDA events around each run, L2
flushed before every repetition, the median reported, after a warm-up launch that keeps
compilation and cache loads out of the numbers; each batch of runs waits behind a GPU sleep so
that host time never falls inside the events.
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

__all__ = ["Validation", "validate", "magnitude_allowance", "reference_allowance", "time_ms", "gpu_times", "inputs_for", "environment"]


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


def compare(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float, extra=None) -> Validation:
    """``out`` against ``ref`` (NumPy): every element within atol + rtol·|ref| (+ ``extra``, an
    allowance per element: :func:`magnitude_allowance`) and finite."""
    out = np.asarray(out, np.float64)
    err = np.abs(out - ref)
    finite = bool(np.isfinite(out).all())
    max_abs = float(err.max()) if err.size else 0.0
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    allowed = atol + rtol * np.abs(ref) + (0.0 if extra is None else extra)
    passed = finite and bool((err <= allowed).all())
    return Validation(max_abs if finite else math.inf, (max_abs / scale if scale else max_abs) if finite else math.inf, passed)


def compare_tensors(out, ref, atol: float, rtol: float, extra=None) -> Validation:
    """:func:`compare` for two torch tensors, computed on their device in float32."""
    import torch

    out, ref = out.float(), ref.float()
    finite = bool(torch.isfinite(out).all())
    err = (out - ref).abs()
    max_abs = float(err.max()) if err.numel() else 0.0
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    allowed = atol + rtol * ref.abs() + (0.0 if extra is None else extra.float())
    passed = finite and bool((err <= allowed).all())
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


def validate(registry: Registry, op: str, problem, *, instance: str | None = None, seed: int = 0,
             interpret: bool | None = None, prepack: tuple[str, ...] = ()) -> Validation:
    """Run ``problem`` once on random inputs and compare with the NumPy float64 reference;
    the inputs named in ``prepack`` go through :meth:`Registry.prepack` first."""
    spec = registry.catalog.op(op)
    arrays, tensors = inputs_for(registry, op, problem, seed, interpret)
    tensors[spec.output] = poisoned_output(registry, op, problem, tensors)
    if prepack:
        tensors.update(registry.prepack(op, problem, **{n: tensors[n] for n in prepack}))
    out = launch(registry, op, problem, tensors, instance=instance, interpret=interpret)
    tol = spec.tolerance(problem)
    return compare(out.double().cpu().numpy(), spec.reference(problem, arrays), tol.atol, tol.rtol,
                   reference_allowance(spec, problem, tol, arrays))


def magnitude_allowance(spec, problem, tol, squared_reference):
    """The per-element allowance ``tol.magnitude_rtol`` · sqrt(``squared_reference()``: the op's
    reference on its inputs squared, NumPy or torch; :class:`ckcore.spec.Tolerance`), or None
    where the op sets no magnitude term (``squared_reference`` is then not called)."""
    if not tol.magnitude_rtol:
        return None
    return tol.magnitude_rtol * squared_reference() ** 0.5


def reference_allowance(spec, problem, tol, arrays):
    """:func:`magnitude_allowance` with the op's NumPy reference on ``arrays`` (its inputs)."""
    return magnitude_allowance(spec, problem, tol,
                               lambda: spec.reference(problem, {n: a * a for n, a in arrays.items() if a is not None}))


def time_ms(fn, *, interpret: bool, warmup: int = 25, rep: int = 100) -> float:
    """Median milliseconds of ``fn()``: :func:`gpu_times` with ``warmup`` and ``rep`` ms on the
    GPU; one timed run in the interpreter."""
    fn()  # warm-up: compile / load / launcher build stay out of the timing
    if interpret:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    return float(np.median(gpu_times(fn, warmup, rep)))


def gpu_times(run, warmup: float, rep: float, *, max_warmup: int = 1000, max_runs: int = 1000,
              prune_over: float | None = None, lead: bool = True, notes: dict | None = None) -> list[float]:
    """GPU milliseconds of each timed ``run()``: CUDA events around each run, L2 flushed before
    each (as ``triton.testing.do_bench`` does: 256 MB written); three runs estimate the time,
    runs worth about ``warmup`` ms warm up and runs worth about ``rep`` ms are timed (at least 3,
    at most ``max_runs``). When all three first runs exceed ``prune_over`` ms, and all of three
    more do too (:func:`first_runs`), those six are returned; ``notes["rescued"]`` is set when
    the second three saved an instance the first three would have pruned.

    With ``lead``, each batch of at most :data:`LEAD_BATCH` timed runs is queued behind a GPU sleep long enough
    for the host to enqueue the whole batch (twice the host time it last took per run), so no
    host time falls between a start event and its kernel. Without it, where the host took
    longer to enqueue a run than the GPU to execute one, the events timed the host: on an H100
    machine whose host took 100-130 µs per run (2026-11-25, ``benchmarks/timing_lead_probe.py``),
    17 and 27 µs kernels measured 23-40 µs with p80/p20 spreads of 1.4-3.0, and with the lead
    17.3 and 26.9 µs, spreads 1.04-1.08; kernels longer than the host time measured the same
    both ways."""
    import torch

    flush = _l2_flush_buffer()

    def timed(n: int) -> list[float]:
        out = []
        for first in range(0, n, LEAD_BATCH):
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(min(LEAD_BATCH, n - first))]
            if lead:
                torch.cuda._sleep(int(min(2.0 * len(events) * _HOST_S_PER_RUN[0], LEAD_MAX_S) * LEAD_CLOCK_HZ))
            t0 = time.perf_counter()
            for start, end in events:
                flush.zero_()
                start.record()
                run()
                end.record()
            _HOST_S_PER_RUN[0] = (time.perf_counter() - t0) / len(events)
            torch.cuda.synchronize()
            out += [start.elapsed_time(end) for start, end in events]
        return out

    first, pruned, rescued = first_runs(timed, prune_over)
    if notes is not None and rescued:
        notes["rescued"] = True
    if pruned:
        return first
    estimate = max(min(first), 1e-3)
    for _ in range(min(max_warmup, int(warmup / estimate))):
        run()
    return timed(max(3, min(max_runs, int(rep / estimate))))


def first_runs(timed, prune_over: float | None) -> tuple[list[float], bool, bool]:
    """The first timed runs of :func:`gpu_times` (``timed(n)``: n run times in ms) and whether to
    prune the instance: all of three runs over ``prune_over`` ms, twice in a row. Once was not
    enough: in two of the twenty-second session's tunes on four H100s of one host, 23 of 5268
    pairs that another call also measured were pruned on three first runs of 0.2-3 ms, where that
    call had measured them at 13-220 µs over 45-200 runs (`docs/tune.md`); a second three rules
    out a stall that lasts only a few runs. Returns the runs kept (six when pruned), the decision,
    and whether the second three rescued an instance the first three would have pruned."""
    first = timed(3)
    if prune_over is None or min(first) <= prune_over:
        return first, False, False
    again = timed(3)
    if min(again) > prune_over:
        return first + again, True, False
    return again, False, True


# Timed runs per GPU sleep; host seconds to enqueue one timed run (flush, two events, the
# launch) as last measured (the first batch assumes 200 µs); the GPU clock assumed to turn that
# into sleep cycles (an H100's or H200's 1.98 GHz boost clock, rounded up: a longer sleep only
# costs time); the longest sleep.
LEAD_BATCH = 100
_HOST_S_PER_RUN = [200e-6]
LEAD_CLOCK_HZ = 2.0e9
LEAD_MAX_S = 0.05

_FLUSH: list = []


def _l2_flush_buffer():
    """256 MB written before each timed run, so no run finds its inputs in L2 (H200 L2: 50 MB)."""
    import torch

    if not _FLUSH:
        _FLUSH.append(torch.empty(256 << 20, dtype=torch.int8, device="cuda"))
    return _FLUSH[0]


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
