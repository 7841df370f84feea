"""Tune datasets: gzip-compressed JSON lines, one gzip member per row, so a run killed while
writing loses at most the row in flight (a truncated last member is dropped when reading, and
cut by :meth:`Dataset.repair` before the next run appends). Writers take a file lock; a finished
run compacts the rows into one member.

Schema ``ckcore-tune/1`` (one JSON object per row, see :data:`COLUMNS`).
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import importlib.metadata
import json
import os
import zlib
from pathlib import Path
from typing import Any, Iterable, Iterator

from filelock import FileLock

__all__ = ["SCHEMA", "COLUMNS", "STATUSES", "Dataset", "provenance", "provenance_id", "describe"]

SCHEMA = "ckcore-tune/1"
STATUSES = ("ok", "compile_failed", "launch_failed", "wrong_result", "timed_out")
COLUMNS: dict[str, str] = {
    "schema": f"always {SCHEMA!r}",
    "op": "op name",
    "problem": "the problem's fields (dict)",
    "problem_name": "the problem's readable name",
    "problem_features": "numeric problem features from the op plugin (dict of float)",
    "instance": "kernel instance name",
    "family": "kernel family name",
    "kernel_features": "numeric kernel features from the family plugin (dict of float)",
    "key": "the kernel key's fields (dict): rebuilds the instance for training",
    "status": f"one of {', '.join(STATUSES)}",
    "error": "the failure message, or null",
    "time_ms": "median run time in ms (null unless ok)",
    "time_ms_p20": "20th percentile of run time in ms (null unless ok)",
    "time_ms_p80": "80th percentile of run time in ms (null unless ok)",
    "samples": "timed runs behind the median (null unless ok; absent from rows written before it was added, "
               "where p20 == p80 == median marks a single sample)",
    "tflops": "op FLOPs / median time, TFLOP/s (null unless ok)",
    "gbps": "op minimum bytes / median time, GB/s (null unless ok)",
    "max_abs_err": "largest error against the reference in the one validation run (null if not run)",
    "provenance": "GPU name, SM count, driver, CUDA, Triton, torch, ckcore and plugin versions, date",
    "provenance_id": "hash of the provenance without the date: reruns skip rows with the same id",
}


def _versions() -> dict[str, str]:
    out = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name == "ckcore" or name.startswith("ck-plugin-") or name in ("triton", "torch"):
            out[name] = dist.version
    return dict(sorted(out.items()))


def provenance(interpret: bool, device: int | None = None) -> dict[str, Any]:
    """Where and with what a row was measured (the GPU of ``device``, or the interpreter)."""
    import torch

    prov: dict[str, Any] = {"interpreter": interpret, "versions": _versions(),
                            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if not interpret:
        props = torch.cuda.get_device_properties(device or 0)
        prov.update(gpu=props.name, sm_count=props.multi_processor_count, cuda=torch.version.cuda,
                    driver=_driver_version())
    else:
        prov.update(gpu=None, sm_count=None, cuda=None, driver=None)
    return prov


def _driver_version() -> str | None:
    try:
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        lib.cuDriverGetVersion(ctypes.byref(v))
        return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except OSError:
        return None


def provenance_id(prov: dict[str, Any]) -> str:
    """sha256 (16 hex digits) of the provenance without its date."""
    data = {k: v for k, v in prov.items() if k != "date"}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


class Dataset:
    """An append-only tune dataset at ``path`` (``.jsonl.gz``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | Path, rows: Iterable[dict[str, Any]]) -> "Dataset":
        """A new dataset at ``path`` holding ``rows``, written once as one gzip member (a
        derived dataset: some rows of another left out or replaced).
        :raises FileExistsError: ``path`` exists (appending to it would keep its rows)."""
        ds = cls(path)
        if ds.path.exists():
            raise FileExistsError(f"{ds.path} exists: write the dataset to a new file, then move it")
        with ds._lock():
            ds._write_all(rows)
        return ds

    def _write_all(self, rows: Iterable[dict[str, Any]]) -> None:
        """Replace the file with ``rows`` as one gzip member, atomically (the caller holds the lock)."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as f:
            for r in rows:
                f.write((json.dumps(r, sort_keys=True) + "\n").encode())
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def _lock(self) -> FileLock:
        """Serialises writers of this dataset (appends, repair, compact) across processes."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path) + ".lock")

    def append(self, row: dict[str, Any]) -> None:
        """Append one row as its own gzip member, flushed and fsynced."""
        data = gzip.compress((json.dumps(row, sort_keys=True) + "\n").encode())
        with self._lock(), open(self.path, "ab") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every complete row; a truncated or damaged tail (a killed write) is skipped."""
        rows, _ = self._scan()
        yield from rows

    def _scan(self) -> tuple[list[dict[str, Any]], int]:
        """(complete rows, byte offset where the complete gzip members end). Each member is
        fed to zlib in growing chunks, so scanning is linear in the file size."""
        if not self.path.exists():
            return [], 0
        raw = memoryview(self.path.read_bytes())
        rows, pos, end = [], 0, 0
        while pos < len(raw):
            d = zlib.decompressobj(wbits=31)
            parts, step = [], 1024
            try:
                while not d.eof and pos < len(raw):
                    chunk = raw[pos:pos + step]
                    parts.append(d.decompress(chunk))
                    pos += len(chunk)
                    step = min(step * 2, 1 << 22)
            except zlib.error:
                break  # damaged bytes: keep what came before
            if not d.eof:
                break  # the last member was cut short
            pos -= len(d.unused_data)
            end = pos
            rows += [json.loads(line) for line in b"".join(parts).decode().splitlines() if line.strip()]
        return rows, end

    def repair(self) -> int:
        """Cut a damaged tail (a write killed half-way) so appends start after the last complete
        row; returns the bytes removed."""
        if not self.path.exists():
            return 0
        with self._lock():
            _, end = self._scan()
            extra = self.path.stat().st_size - end
            if extra:
                with open(self.path, "r+b") as f:
                    f.truncate(end)
                    os.fsync(f.fileno())
        return extra

    def compact(self) -> None:
        """Rewrite the complete rows as one gzip member (much smaller than one member per row),
        atomically; later appends add members after it."""
        if not self.path.exists():
            return
        with self._lock():
            rows, end = self._scan()
            if end != self.path.stat().st_size:
                return  # a damaged tail: leave the file to repair(), never drop bytes here
            self._write_all(rows)

    def done(self, prov_id: str) -> set[tuple[str, str, str]]:
        """(op, problem name, instance) pairs already measured with provenance ``prov_id``."""
        return {(r["op"], r["problem_name"], r["instance"]) for r in self.rows() if r["provenance_id"] == prov_id}


def describe(path: str | Path) -> dict[str, Any]:
    """What a dataset holds: schema, rows per op and status, problems, instances, provenance."""
    rows = list(Dataset(path).rows())
    out: dict[str, Any] = {"path": str(path), "schema": sorted({r["schema"] for r in rows}), "rows": len(rows),
                           "columns": COLUMNS, "ops": {}}
    for r in rows:
        op = out["ops"].setdefault(r["op"], {"rows": 0, "status": {}, "problems": set(), "instances": set(),
                                             "provenance": {}})
        op["rows"] += 1
        op["status"][r["status"]] = op["status"].get(r["status"], 0) + 1
        op["problems"].add(r["problem_name"])
        op["instances"].add(r["instance"])
        prov = {k: v for k, v in r["provenance"].items() if k != "date"}
        op["provenance"][r["provenance_id"]] = prov
    for op in out["ops"].values():
        op["problems"], op["instances"] = len(op["problems"]), len(op["instances"])
    return out
