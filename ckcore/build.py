"""Compiling instances into the cache: one job in-process, or many in spawn-based workers.

Workers receive fully rendered :class:`CompileJob` objects, so they import no plugin.
They never touch CUDA: the target architecture is explicit.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import tempfile
import time

import attrs

from .cache import Cache, Entry
from .compiler import CompileJob, get_compiler
from .errors import CompileError

__all__ = ["BuildReport", "compile_into_cache", "build_many"]


@attrs.define
class BuildReport:
    """Counts of a build: ``compiled`` (new entries), ``cached`` (already present),
    ``failed`` (compile errors, new or cached negative entries), ``seconds`` (wall time),
    ``failures`` (instance name -> error text), ``selection`` (op -> what its selection
    predicts with, from :meth:`Registry.prepare_selection`)."""

    compiled: int = 0
    cached: int = 0
    failed: int = 0
    seconds: float = 0.0
    failures: dict = attrs.Factory(dict)
    selection: dict = attrs.Factory(dict)

    def to_dict(self) -> dict:
        return attrs.asdict(self)


def compile_into_cache(job: CompileJob, fingerprint: str, cache_root: str, compiler: str, meta: dict) -> Entry:
    """Compile ``job`` and store the result (or a negative entry) under ``fingerprint``.

    Returns the stored entry; ``entry.ok`` is False for a compile failure.
    """
    cache = Cache(cache_root)
    driver = get_compiler(compiler)
    started = time.perf_counter()
    try:
        files = driver.compile(job)
        status, error = "ok", None
    except CompileError as exc:
        files, status, error = {}, "failed", exc.detail
    files = {"source.py": job.source.encode(), **files}
    meta = dict(meta, status=status, compile_seconds=time.perf_counter() - started)
    if error is not None:
        meta["error"] = error
    return cache.put(fingerprint, files, meta)


def _worker_init(triton_cache: str) -> None:
    # Each build gets a private Triton cache, so "compiled" means compiled.
    os.environ["TRITON_CACHE_DIR"] = triton_cache


def _worker(args):
    job, fingerprint, cache_root, compiler, meta = args
    entry = compile_into_cache(job, fingerprint, cache_root, compiler, meta)
    return job.name, entry.ok, entry.meta.get("error")


def build_many(work: list, cache_root: str, compiler: str, max_workers: int, progress: bool) -> BuildReport:
    """Compile ``work`` (``(job, fingerprint, meta)`` tuples) with ``max_workers`` spawn-based
    processes (in-process when ``max_workers == 1``), counting results into a report."""
    report = BuildReport()
    if not work:
        return report
    from tqdm import tqdm

    bar = tqdm(total=len(work), desc="ckcore build", unit="kernel", disable=not progress or None)
    args = [(job, fp, cache_root, compiler, meta) for job, fp, meta in work]
    try:
        if max_workers <= 1:
            results = (_worker(a) for a in args)
            for name, ok, err in results:
                _count(report, name, ok, err)
                bar.update()
        else:
            ctx = multiprocessing.get_context("spawn")
            with tempfile.TemporaryDirectory(prefix="ckcore-triton-") as tcache:
                with cf.ProcessPoolExecutor(max_workers, mp_context=ctx, initializer=_worker_init, initargs=(tcache,)) as pool:
                    for fut in cf.as_completed([pool.submit(_worker, a) for a in args]):
                        _count(report, *fut.result())
                        bar.update()
    finally:
        bar.close()
    return report


def _count(report: BuildReport, name: str, ok: bool, err: str | None) -> None:
    if ok:
        report.compiled += 1
    else:
        report.failed += 1
        report.failures[name] = err or "compile failed"
