"""The ``autotune`` heuristic: on the first selection of a problem, measure the ``lightgbm``
ranking's top-k candidates (``CKCORE_AUTOTUNE_TOP_K``, default 5) on random inputs, each
validated against the reference once, and take the fastest; the measurements are persisted in
the cache, so later processes reuse them.

Store: ``<cache root>/autotune/<op>_<arch>_<device>.json``, one entry per (problem, candidate
set): the measured median ms per instance and why any failed. It is written under a file lock
after each measurement (atomic replace), so an interrupted autotune resumes where it stopped.
Measurements run in the calling process (no crash isolation: use ``ckcore tune`` for that) on
the current device, in the interpreter when ckcore runs there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Sequence

from filelock import FileLock

from ..arch import ArchSpec, DeviceSpec
from ..keys import ProblemBase
from . import Candidate, Ranked
from .learned import LightGBMHeuristic

__all__ = ["AutotuneHeuristic", "AutotuneStore"]

#: Failures persisted in the store; others (a launch that raised: out of memory, a broken CUDA
#: context) are kept for this process's ranking only and measured again by the next process.
PERSISTENT_FAILURES = ("wrong_result", "compile_failed")


class AutotuneStore:
    """The persisted autotune measurements of one (op, arch, device): a JSON object
    ``{entry key: {"times": {instance: ms}, "errors": {instance: why}}}``."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _lock(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return FileLock(str(self.path) + ".lock")

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):  # absent, or damaged: start afresh rather than fail
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> dict[str, Any]:
        entry = self._read().get(key)
        if not isinstance(entry, dict):
            return {"times": {}, "errors": {}}
        return {"times": dict(entry.get("times", {})), "errors": dict(entry.get("errors", {}))}

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Merge ``entry`` into the store (other processes' entries are kept)."""
        with self._lock():
            data = self._read()
            data[key] = entry
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=0, sort_keys=True))
            os.replace(tmp, self.path)


def entry_key(problem: ProblemBase, candidates: Sequence[Candidate]) -> str:
    """The problem's name and a hash of the candidate names (a changed kernel set re-tunes)."""
    names = "\n".join(sorted(c.instance.name for c in candidates))
    return f"{problem.name}#{hashlib.sha256(names.encode()).hexdigest()[:12]}"


class AutotuneHeuristic:
    """Measured best of the model's top-k; the model's order for the rest."""

    name = "autotune"
    uses_registry = True

    def __init__(self):
        self._model = LightGBMHeuristic()
        self._lock = threading.Lock()

    def store_for(self, registry, op: str) -> AutotuneStore:
        device = re.sub(r"[^A-Za-z0-9]+", "_", registry.device.name if registry.device else "unknown").strip("_")
        where = "interpreter" if registry.interpret else device
        return AutotuneStore(Path(registry.cache.root) / "autotune" / f"{op}_{registry.arch.arch}_{where}.json")

    def prepare(self, registry, op: str) -> str:
        """The ``lightgbm`` model's preparation (its ranking picks what is measured)."""
        return self._model.prepare(registry, op)

    def rank(self, problem: ProblemBase, candidates: Sequence[Candidate], arch: ArchSpec, device: DeviceSpec,
             registry=None) -> list[Ranked]:
        ranked = self._model.rank(problem, candidates, arch, device, registry)
        if registry is None:
            return [Ranked(r.instance, r.score, f"{r.note}; autotune skipped: no registry to measure with")
                    for r in ranked]
        top = ranked[: max(1, registry.settings.autotune_top_k)]
        store = self.store_for(registry, problem.op)
        key = entry_key(problem, candidates)
        with self._lock:
            entry = store.get(key)
            transient: dict[str, str] = {}
            cache: dict[str, Any] = {}
            for r in top:
                name = r.instance.name
                if name in entry["times"] or name in entry["errors"]:
                    continue  # measured before (this process or an earlier one)
                result = _measure(registry, problem, name, cache)
                why = f"{result['status']}: {result.get('error') or ''}"[:500]
                if result["status"] == "ok":
                    entry["times"][name] = result["time_ms"]
                elif result["status"] in PERSISTENT_FAILURES:
                    entry["errors"][name] = why
                else:  # maybe transient (out of memory, a broken context): this process only
                    transient[name] = why
                    continue
                store.put(key, entry)
        times, errors = entry["times"], {**entry["errors"], **transient}
        measured = sorted((Ranked(r.instance, float(times[r.instance.name]),
                                  f"measured ms (autotune: top {len(top)} of {r.note.split(';')[0]})")
                           for r in ranked if r.instance.name in times), key=lambda r: (r.score, r.instance.name))
        rest = [r for r in ranked if r.instance.name not in times and r.instance.name not in errors]
        failed = [Ranked(r.instance, float("inf"), f"autotune: {errors[r.instance.name]}")
                  for r in ranked if r.instance.name in errors]
        return measured + rest + failed


def _measure(registry, problem: ProblemBase, name: str, cache: dict[str, Any]) -> dict[str, Any]:
    """Validate ``name`` on ``problem`` once, then time it (the tune worker's measurement)."""
    from ..tune.worker import measure_one

    task = {"op": problem.op, "problem": problem.to_dict(), "instance": name, "warmup": 5, "rep": 25}
    try:
        return measure_one(registry, task, cache)
    except Exception as exc:  # e.g. inputs that do not fit on the device: say so, keep ranking
        return {"status": "launch_failed", "error": f"{type(exc).__name__}: {exc}"}
