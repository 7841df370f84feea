"""``ckcore bench``: ckcore against the PyTorch path (cuBLAS / cuDNN) on a shape suite, in one run.

For every problem of the suite: random inputs, the selected instance and the torch baseline
each timed with :func:`ckcore.measure.time_ms`; both outputs checked against a float64
recomputation (the torch path on float64 copies of the inputs) within the op's
tolerance (``check``: ckcore's, decides pass/fail; ``torch_check``: the baseline's, recorded:
with long reductions a vendor kernel's own rounding can exceed it); TFLOP/s and GB/s from the
op's FLOP and minimum-byte counts. ``speedup`` = torch_ms / ckcore_ms (> 1: ckcore is faster).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator

import numpy as np

from .dispatch import launch
from .measure import compare_tensors, device_of, environment, magnitude_allowance, poison, poisoned_output, time_ms
from .registry import Registry

__all__ = ["read_suite", "problem_fields", "bench_problem", "summarize", "geomean"]


def read_suite(path: str | Path, op: str, aliases: tuple[str, ...] = ()) -> list[dict]:
    """The rows of a JSON-lines suite whose ``op`` is ``op`` or one of ``aliases`` (rows
    without ``op`` count as ``op``)."""
    accepted = {op, *aliases}
    rows = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("op", op) in accepted:
                rows.append(row)
    return rows


def problem_fields(row: dict) -> dict:
    """A problem's fields from a suite line (its ``op`` and ``name`` dropped)."""
    return {k: v for k, v in row.items() if k not in ("op", "name")}


def bench_problem(registry: Registry, op: str, fields: dict, *, interpret: bool, seed: int = 0,
                  warmup: int = 25, rep: int = 100, rounds: int | None = None) -> dict:
    """One suite row measured: times (ms), TFLOP/s, GB/s, speedup, check against torch.

    ckcore and torch are timed alternately ``rounds`` times (default 3 on the GPU, 1 in the
    interpreter); each side reports the median of its rounds, and every round's time is kept
    (``ckcore_ms_rounds``, ``torch_ms_rounds``). On an H200 single long bench runs read some
    short kernels 1.6-3x slow that re-measured at their usual time (``docs/performance.md``,
    session 7): alternating rounds keeps drifts of the machine's state off one side."""
    spec = registry.catalog.op(op)
    problem = spec.problem(**fields)
    tensors = spec.random_tensors(problem, seed, device_of(interpret))
    ours = dict(tensors)
    ours[spec.output] = poisoned_output(registry, op, problem, tensors)
    # Dispatch once as users do: a selected instance that fails to compile gives way to the next.
    launch(registry, op, problem, ours, interpret=interpret)
    poison(ours[spec.output])
    sel = registry.select(problem)
    theirs = dict(tensors)
    theirs[spec.output] = spec.empty_output(problem, tensors[spec.inputs[0]])
    poison(theirs[spec.output])
    base = spec.torch_baseline(problem, theirs)
    ck_rounds, torch_rounds = [], []
    for _ in range(rounds or (1 if interpret else 3)):
        ck_rounds.append(time_ms(lambda: launch(registry, op, problem, ours, instance=sel.instance.name,
                                                interpret=interpret), interpret=interpret, warmup=warmup, rep=rep))
        torch_rounds.append(time_ms(base, interpret=interpret, warmup=warmup, rep=rep))
    ck_ms, torch_ms = float(np.median(ck_rounds)), float(np.median(torch_rounds))
    tol = spec.tolerance(problem)
    ref = float64_recompute(spec, problem, tensors)
    extra = recompute_allowance(spec, problem, tol, tensors)
    check = compare_tensors(ours[spec.output], ref, tol.atol, tol.rtol, extra)
    torch_check = compare_tensors(base(), ref, tol.atol, tol.rtol, extra)
    flops, nbytes = spec.flops(problem), spec.min_bytes(problem)
    return {
        "kind": "result", "op": op, "problem": problem.to_dict(), "problem_name": problem.name,
        "instance": sel.instance.name, "staged": sel.staging.reason if sel.staging is not None else None,
        "ckcore_ms": ck_ms, "torch_ms": torch_ms,
        "ckcore_tflops": flops / ck_ms / 1e9, "torch_tflops": flops / torch_ms / 1e9,
        "ckcore_gbps": nbytes / ck_ms / 1e6, "torch_gbps": nbytes / torch_ms / 1e6,
        "speedup": torch_ms / ck_ms, "ckcore_ms_rounds": ck_rounds, "torch_ms_rounds": torch_rounds,
        "check": check.to_dict(), "torch_check": torch_check.to_dict(),
    }


def recompute_allowance(spec, problem, tol, tensors):
    """:func:`ckcore.measure.magnitude_allowance` with :func:`float64_recompute` on ``tensors``'
    inputs squared (in float64; the output left as is)."""
    squared = {n: (t.double() ** 2 if n != spec.output and t is not None else t) for n, t in tensors.items()}
    return magnitude_allowance(spec, problem, tol, lambda: float64_recompute(spec, problem, squared))


def float64_recompute(spec, problem, tensors):
    """The op computed by its torch path (cuBLAS/cuDNN) on float64 copies of ``tensors``, cuDNN's
    algorithm search off: the reference for GPU-sized problems, where the NumPy one is too slow.
    Float64 rather than float32: cuDNN's float32 backward-weight (TF32 off) was measured here
    off by up to 2-3% on some problems where every ckcore instance agreed with each other
    (``benchmarks/datasets/grouped_conv_bwd_weight_h200.jsonl.gz``, rows ``wrong_result``)."""
    import torch

    fp32 = spec.float64_problem(problem)
    inputs = {n: t.double() for n, t in tensors.items() if n != spec.output and t is not None}
    inputs[spec.output] = spec.empty_output(fp32, tensors[spec.inputs[0]]).double()
    benchmark = torch.backends.cudnn.benchmark
    try:
        run = spec.torch_baseline(fp32, inputs)
        torch.backends.cudnn.benchmark = False
        return run()
    finally:
        torch.backends.cudnn.benchmark = benchmark


def geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summarize(results: list[dict], groups: dict[str, callable]) -> dict:
    """Geomean speedup overall and per named group (``{name: predicate(problem_dict)}``)."""
    out = {"kind": "summary", "count": len(results), "geomean_speedup": geomean(r["speedup"] for r in results),
           "all_checks_passed": all(r["check"]["passed"] for r in results),
           "torch_checks_failed": sum(not r["torch_check"]["passed"] for r in results)}
    for name, pred in groups.items():
        sel = [r for r in results if pred(r["problem"])]
        out[f"geomean_speedup_{name}"] = geomean(r["speedup"] for r in sel)
        out[f"count_{name}"] = len(sel)
    return out


def run_suite(registry: Registry, op: str, rows: list[dict], *, interpret: bool, **kw) -> Iterator[dict]:
    """Yield the environment record, then one result per row."""
    yield {"kind": "env", **environment(interpret), "arch": registry.arch.arch, "heuristic": registry.settings.heuristic}
    if not interpret:
        # Compile the selected instances (problem variants included) in parallel first; the
        # rows then load them from the cache.
        spec = registry.catalog.op(op)
        picks = {}
        for row in rows:
            inst = registry.select(spec.problem(**problem_fields(row))).instance
            picks[inst.name] = inst
        registry.build(progress=False, instances=list(picks.values()))
    for row in rows:
        fields = problem_fields(row)
        result = bench_problem(registry, op, fields, interpret=interpret, **kw)
        result["name"] = row.get("name")
        yield result
