"""Crash-isolated measurement: a reused worker process (spawn) per device runs one
(problem, instance) at a time; a hang or a fault (the process dies, or CUDA reports an illegal
access) is reported as a failed row and the worker is restarted."""

from __future__ import annotations

import importlib
import multiprocessing
import signal
import sys
from typing import Any

__all__ = ["Worker", "make_registry", "measure_one"]

READY_TIMEOUT_S = 300.0
PRUNE_RATIO = 10.0


def make_registry(cfg: dict[str, Any]):
    """The registry a tune run uses (parent and workers alike): installed plugins plus
    ``cfg["plugin_modules"]`` (importable hook modules, e.g. test plugins), ``cfg["op"]``
    declared with ``cfg["kernel_set"]``, or the instances of ``cfg["kernel_set_file"]`` (a JSON
    kernel set) of that op."""
    from ..plugins import Catalog, get_plugin_manager
    from ..registry import Registry
    from ..settings import Settings

    settings = Settings.from_env()
    pm = get_plugin_manager(settings)
    for name in cfg.get("plugin_modules", ()):
        pm.register(importlib.import_module(name), name=name)
    reg = Registry(cfg.get("arch"), settings=settings, catalog=Catalog(pm), device_name=cfg.get("device_name"))
    if cfg.get("kernel_set_file"):
        reg.load_json(cfg["kernel_set_file"], op=cfg["op"])
    else:
        reg.declare(cfg["op"], cfg.get("kernel_set"))
    return reg


def _inputs(reg, spec, problem, interpret: bool):
    """(tensors, reference, magnitude allowance) for ``problem``: NumPy float64 reference in the
    interpreter, a float64 recomputation by the torch path on the GPU; the allowance of the op's
    tolerance (:func:`ckcore.measure.magnitude_allowance`; None where it sets none)."""
    tol = spec.tolerance(problem)
    if interpret:
        from ..measure import inputs_for, reference_allowance

        arrays, tensors = inputs_for(reg, spec.name, problem, 0, interpret=True)
        return tensors, spec.reference(problem, arrays), reference_allowance(spec, problem, tol, arrays)
    from ..bench import float64_recompute, recompute_allowance

    tensors = spec.random_tensors(problem, 0, "cuda")
    return tensors, float64_recompute(spec, problem, tensors), recompute_allowance(spec, problem, tol, tensors)


def measure_one(reg, task: dict[str, Any], cache: dict[str, Any]) -> dict[str, Any]:
    """Validate ``task["instance"]`` on ``task["problem"]`` once, then time it. Returns the
    measurement fields of a dataset row (status, error, times, max_abs_err)."""
    from ..dispatch import launch
    from ..errors import CompileError
    from ..measure import compare, compare_tensors, poisoned_output

    interpret = reg.interpret
    spec = reg.catalog.op(task["op"])
    problem = spec.problem(**task["problem"])
    if cache.get("name") != problem.name:
        cache.clear()
        if not interpret:
            import torch

            torch.cuda.empty_cache()  # the previous problem's tensors: give the memory back
        cache["name"] = problem.name
        cache["tensors"], cache["ref"], cache["extra"] = _inputs(reg, spec, problem, interpret)
    tensors, ref = dict(cache["tensors"]), cache["ref"]
    tensors[spec.output] = poisoned_output(reg, task["op"], problem, tensors)
    # A declared instance, or a variant the registry derived for a problem (an epilogue, batch
    # or output type: what selection ranks, and so what autotune measures).
    inst = reg.named(task["instance"])
    result: dict[str, Any] = {"status": "ok", "error": None, "time_ms": None, "time_ms_p20": None,
                              "time_ms_p80": None, "max_abs_err": None}
    if inst is None:
        return {**result, "status": "launch_failed", "error": f"no declared or derived instance {task['instance']!r}"}
    try:
        reg.load(inst, interpret=interpret)
    except CompileError as exc:
        return {**result, "status": "compile_failed", "error": str(exc)[:2000]}

    def run():
        return launch(reg, task["op"], problem, tensors, instance=inst.name, interpret=interpret)

    try:
        got = run()
        if not interpret:
            import torch

            torch.cuda.synchronize()
    except Exception as exc:  # a kernel that raises or faults
        return {**result, "status": "launch_failed", "error": f"{type(exc).__name__}: {exc}"[:2000], "restart": True}
    tol = spec.tolerance(problem)
    if interpret:
        check = compare(got.double().numpy(), ref, tol.atol, tol.rtol, cache["extra"])
    else:
        check = compare_tensors(got, ref, tol.atol, tol.rtol, cache["extra"])
    result["max_abs_err"] = check.max_abs_err
    if not check.passed:  # restart: a wrong kernel may have left a shared workspace dirty
        return {**result, "status": "wrong_result", "error": f"max abs error {check.max_abs_err:.4g} beyond tolerance",
                "restart": True}
    notes: dict[str, Any] = {}
    times = sorted(_times(run, interpret, task.get("warmup", 10), task.get("rep", 50), cache.get("best"), notes))
    cache["best"] = min(times[len(times) // 2], cache.get("best", float("inf")))
    q = lambda f: times[min(len(times) - 1, int(f * len(times)))]  # noqa: E731
    return {**result, "time_ms": q(0.5), "time_ms_p20": q(0.2), "time_ms_p80": q(0.8), "samples": len(times),
            "rescued": bool(notes.get("rescued"))}


def _times(run, interpret: bool, warmup: float, rep: float, best: float | None = None,
           notes: dict | None = None) -> list[float]:
    """Per-run times in ms: :func:`ckcore.measure.gpu_times` on the GPU (at most 20 warm-up
    and 200 timed runs; an instance whose three first runs are all over ``PRUNE_RATIO`` times
    ``best``, the fastest median so far on this problem, twice in a row
    (:func:`ckcore.measure.first_runs`), keeps those six samples: it cannot be the oracle, and
    on large problems such instances took most of the tune time); in the
    interpreter, three timed runs."""
    if interpret:
        import time

        out = []
        for _ in range(3):
            t0 = time.perf_counter()
            run()
            out.append((time.perf_counter() - t0) * 1e3)
        return out
    from ..measure import gpu_times

    return gpu_times(run, warmup, rep, max_warmup=20, max_runs=200,
                     prune_over=None if best is None else PRUNE_RATIO * best, notes=notes)


def _serve(conn, cfg: dict[str, Any]) -> None:
    """Worker main loop: build the registry once, then answer tasks until ``None``."""
    sys.path[:0] = cfg.get("sys_path", [])
    if cfg.get("device") is not None:
        import torch

        torch.cuda.set_device(cfg["device"])
    reg = make_registry(cfg)
    conn.send("ready")
    cache: dict[str, Any] = {}
    while True:
        task = conn.recv()
        if task is None:
            return
        try:
            conn.send(measure_one(reg, task, cache))
        except Exception as exc:  # anything else: report it, keep serving
            conn.send({"status": "launch_failed", "error": f"{type(exc).__name__}: {exc}"[:2000], "restart": True})


class Worker:
    """One spawned worker process for one device (``None``: the interpreter), restarted after
    a failure that may have left it (or its CUDA context) broken."""

    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self.proc = None
        self.conn = None
        self.restarts = 0

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, self.cfg), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        try:
            ready = parent.poll(READY_TIMEOUT_S) and parent.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            code = self.proc.exitcode
            self.stop()
            raise RuntimeError(f"tune worker for device {self.cfg.get('device')} did not start (exit code {code})")

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        self.proc = self.conn = None

    def run(self, task: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """The measurement of ``task``; ``timed_out`` / ``launch_failed`` when the worker hangs
        past ``timeout_s`` or dies (it is then restarted for the next task)."""
        if self.proc is None or not self.proc.is_alive():
            if self.proc is not None:
                self.restarts += 1
            self._start()
        try:
            self.conn.send(task)
        except (BrokenPipeError, OSError):
            self.stop()
            self.restarts += 1
            return {"status": "launch_failed", "error": "worker gone before the task was sent; restarted"}
        if not self.conn.poll(timeout_s):  # a hang: kill it, start afresh for the next task
            self.stop()
            self.restarts += 1
            return {"status": "timed_out", "error": f"no result within {timeout_s:g} s; worker restarted"}
        try:
            result = self.conn.recv()
        except (EOFError, ConnectionError, OSError):  # the worker died (a fault)
            self.proc.join(10)
            code = self.proc.exitcode
            self.stop()
            self.restarts += 1
            how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
            return {"status": "launch_failed", "error": f"worker died ({how}); restarted"}
        if result.pop("restart", False):  # a raised launch may have left CUDA broken
            self.stop()
            self.restarts += 1
        return result
