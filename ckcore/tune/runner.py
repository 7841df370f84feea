"""The tune loop: problems × supporting instances, measured by one crash-isolated worker per
device, rows appended as they come, pairs already in the dataset (same provenance) skipped."""

from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from ..errors import InvalidKernelKey
from .dataset import SCHEMA, Dataset, provenance, provenance_id
from .worker import Worker, make_registry

__all__ = ["problem_pairs", "tune"]


def _floats(features: dict) -> dict[str, float]:
    return {str(k): float(v) for k, v in features.items()}


def problem_pairs(reg, op: str, problem) -> list[tuple[Any, Any, Any]]:
    """The pairs a tune measures for ``problem``: (declared instance, the variant that runs the
    problem (e.g. a GEMM's fused epilogue; rows name it), its family) for every instance of
    ``op`` that ``reg`` declares whose variant is valid and supported."""
    out = []
    for declared in reg.of_op(op):
        fam = reg.family(declared)
        try:
            inst = reg.specialized(declared, problem)
        except InvalidKernelKey:  # no valid variant for this problem (e.g. fp32 out on a 16-bit tile)
            continue
        if fam.supports(inst.key, problem) is None:
            out.append((declared, inst, fam))
    return out


def tune(op: str, problems: Sequence[dict], out: str | Path, *, kernel_set: str | None = None,
         kernel_set_file: str | Path | None = None, arch: str | None = None, devices: Sequence[int | None] | None = None, timeout_s: float = 60.0,
         warmup: int = 2, rep: int = 10, plugin_modules: Sequence[str] = (), progress: bool = True,
         max_seconds: float | None = None) -> dict[str, Any]:
    """Measure every instance of ``kernel_set`` (or of the JSON kernel set ``kernel_set_file``)
    that supports each of ``problems`` (field dicts) and append one row per pair to the dataset
    ``out``. Returns counts per status.

    ``devices``: GPU indices (one worker each); default the current GPU, or the interpreter
    without one. ``plugin_modules``: extra hook modules to register (test plugins).
    ``max_seconds``: stop taking new pairs after this long (rerun to resume).
    """
    started = time.monotonic()
    cfg = {"op": op, "kernel_set": kernel_set, "kernel_set_file": str(kernel_set_file) if kernel_set_file else None,
           "arch": arch, "plugin_modules": list(plugin_modules),
           "sys_path": [p for p in sys.path if p]}
    reg = make_registry(cfg)
    interpret = reg.interpret
    if devices is None:
        devices = [None] if interpret else [0]
    spec = reg.catalog.op(op)
    prov = provenance(interpret, devices[0])
    prov_id = provenance_id(prov)
    ds = Dataset(out)
    ds.repair()  # a previous run killed mid-write leaves half a row: drop it before appending
    done = ds.done(prov_id)
    # one task per problem: a worker measures all of a problem's pairs with the same inputs
    todo, skipped, counts, rescued = [], 0, {}, 0
    for fields in problems:
        problem = spec.problem(**fields)
        pairs = []
        for declared, inst, fam in problem_pairs(reg, op, problem):
            if (op, problem.name, inst.name) in done:
                skipped += 1
                continue
            pairs.append((declared, inst, fam))
        if pairs:
            todo.append((problem, pairs))
    total = sum(len(pairs) for _, pairs in todo)
    if not interpret:
        # What the pairs run (declared instances, and problem variants such as a GEMM's fused
        # epilogue) compiles here in parallel, not one by one in the workers: they load it from
        # the same cache.
        reg.build(progress=progress, instances=list({inst.name: inst for _, pairs in todo for _, inst, _ in pairs}.values()))
    lock = threading.Lock()
    tasks: queue.Queue = queue.Queue()
    for item in todo:
        tasks.put(item)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, desc=f"tune {op}", unit="pair")

    def row_of(problem, inst, fam, result) -> dict[str, Any]:
        ok = result["status"] == "ok"
        ms = result.get("time_ms")
        return {"schema": SCHEMA, "op": op, "problem": problem.to_dict(), "problem_name": problem.name,
                "problem_features": _floats(spec.features(problem)), "instance": inst.name, "family": inst.family,
                "kernel_features": _floats(fam.features(inst.key)), "key": inst.key.to_dict(), "status": result["status"], "error": result.get("error"),
                "time_ms": ms, "time_ms_p20": result.get("time_ms_p20"), "time_ms_p80": result.get("time_ms_p80"),
                "samples": result.get("samples"),
                "tflops": spec.flops(problem) / ms / 1e9 if ok else None,
                "gbps": spec.min_bytes(problem) / ms / 1e6 if ok else None,
                "max_abs_err": result.get("max_abs_err"), "provenance": prov, "provenance_id": prov_id}

    def out_of_time() -> bool:
        return max_seconds is not None and time.monotonic() - started > max_seconds

    def serve(device):
        worker = Worker({**cfg, "device": device})
        try:
            while not out_of_time():
                try:
                    problem, pairs = tasks.get_nowait()
                except queue.Empty:
                    return
                for declared, inst, fam in pairs:
                    if out_of_time():
                        return
                    measure(worker, problem, declared, inst, fam)
        finally:
            worker.stop()

    def measure(worker, problem, declared, inst, fam) -> None:
        nonlocal rescued
        failure = reg.compile_failure(inst.name)
        if failure:
            result = {"status": "compile_failed", "error": failure[:2000]}
        else:
            # The worker declares the same instances; dispatching the declared one runs the variant.
            task = {"op": op, "problem": problem.to_dict(), "instance": declared.name, "warmup": warmup, "rep": rep}
            try:
                result = worker.run(task, timeout_s)
            except RuntimeError as exc:  # the worker cannot start: record it, go on
                result = {"status": "launch_failed", "error": str(exc)}
        row = row_of(problem, inst, fam, result)
        with lock:
            ds.append(row)
            counts[row["status"]] = counts.get(row["status"], 0) + 1
            rescued += bool(result.get("rescued"))
            if bar is not None:
                bar.update(1)

    threads = [threading.Thread(target=serve, args=(d,), daemon=True) for d in devices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if bar is not None:
        bar.close()
    ds.compact()
    measured = sum(counts.values())
    return {"op": op, "dataset": str(out), "measured": measured, "remaining": total - measured,
            "skipped": skipped, "status": counts, "pruning_rescued": rescued,
            "provenance_id": prov_id}
