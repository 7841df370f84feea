"""Compiled tree ensembles for the ``lightgbm`` heuristic.

LightGBM's ``Booster.predict`` walks every tree node by node: on the development CPU the shipped
gemm model (250 trees + a 100-tree ranker) took about 280 µs for the ~18 candidates of a
problem, more than half of a first selection (``benchmarks/select_overhead.py``). `lleaves
<https://github.com/siboehm/lleaves>`_ compiles a LightGBM text model to native code through
LLVM; its predictions equal LightGBM's to rounding (``tests/test_compiled_trees.py``).

Compiling takes seconds per model, so it happens when kernels are built (``Registry.build``,
``ckcore build``), not during selection. The object code lands in ckcore's content-addressed
cache under a fingerprint of the model text, the lleaves and llvmlite versions and the host
CPU (name and features: the code is compiled for this CPU and must not run on another that
shares the cache). Selection loads it when present and otherwise predicts with LightGBM.

lleaves is optional (``pip install ckcore[compiled-trees]``); without it, or where compiling
fails, selection uses LightGBM and says why in :func:`status`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CompiledTrees", "fingerprint", "load", "compile_into", "available"]

OBJECT = "trees.o"
TEXT = "model.txt"
# lleaves' defaults. On 1792 candidate rows of the gemm suite, the shipped gemm regressor (250
# trees) predicted 0.83 µs per row (LightGBM: 6.7 µs); compiled without inlining, 1.30 µs per row,
# but in 1.3 s instead of 4.7 s (development CPU).
OPTIONS = {"finline": True}


@functools.lru_cache(maxsize=1)
def available() -> str | None:
    """None when lleaves can compile here, else why not."""
    try:
        import lleaves  # noqa: F401
        import llvmlite.binding as llvm
    except Exception as exc:  # ImportError, or a broken llvmlite build
        return f"lleaves is not installed ({exc.__class__.__name__}: {exc}); pip install ckcore[compiled-trees]"
    if not hasattr(llvm, "PassManagerBuilder"):  # removed in llvmlite 0.45; lleaves 1.3 needs it
        return f"lleaves 1.3 needs llvmlite < 0.45, found {_versions()['llvmlite']}"
    return None


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {"lleaves": version("lleaves"), "llvmlite": version("llvmlite")}


@functools.lru_cache(maxsize=1)
def _host() -> dict[str, str]:
    import llvmlite.binding as llvm

    return {"triple": llvm.get_process_triple(), "cpu": llvm.get_host_cpu_name(),
            "features": llvm.get_host_cpu_features().flatten()}


def fingerprint(model_text: str) -> str:
    """sha256 of the model text, the lleaves and llvmlite versions and the host CPU."""
    ident = {"kind": "compiled_trees", "model": hashlib.sha256(model_text.encode()).hexdigest(), **_versions(),
             **_host(), **OPTIONS}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


class CompiledTrees:
    """A compiled model with LightGBM's ``predict(x, num_threads=)`` call shape (rows of
    float64 features in, one raw score per row out; one thread: selection predicts a few
    hundred rows at most)."""

    def __init__(self, model: Any):
        self._model = model

    def predict(self, x: np.ndarray, num_threads: int = 1) -> np.ndarray:
        return self._model.predict(np.ascontiguousarray(x, dtype=np.float64), n_jobs=1)


def _open(text_path: Path, object_path: Path) -> CompiledTrees:
    import lleaves

    model = lleaves.Model(model_file=str(text_path))
    model.compile(cache=str(object_path), **OPTIONS)  # an existing object file is loaded, not recompiled
    return CompiledTrees(model)


def load(cache, model_text: str) -> CompiledTrees | None:
    """The compiled form of ``model_text`` from ``cache`` (a :class:`ckcore.cache.Cache`), or
    None when it was never compiled here, lleaves is unavailable, or the entry is damaged or
    failed (a damaged entry is treated as missing by the cache)."""
    if available() is not None:
        return None
    entry = cache.lookup(fingerprint(model_text))
    if entry is None or not entry.ok:
        return None
    files = entry.files
    return _open(files[TEXT], files[OBJECT])


def compile_into(cache, model_text: str, label: str) -> CompiledTrees:
    """Compile ``model_text`` with lleaves and store it in ``cache`` (``label`` names it in
    ``ckcore cache list``); an intact entry is reused. :raises RuntimeError: lleaves is
    unavailable. Other compile errors propagate."""
    why = available()
    if why is not None:
        raise RuntimeError(why)
    found = load(cache, model_text)
    if found is not None:
        return found
    fp = fingerprint(model_text)
    with tempfile.TemporaryDirectory(prefix="ckcore-trees-") as tmp:
        text_path, object_path = Path(tmp) / TEXT, Path(tmp) / OBJECT
        text_path.write_text(model_text)
        _open(text_path, object_path)  # compiles and writes the object file
        entry = cache.put(fp, {TEXT: text_path.read_bytes(), OBJECT: object_path.read_bytes()},
                          {"status": "ok", "name": label, "arch": "cpu", "kind": "compiled_trees", **_versions(),
                           **_host()})
    files = entry.files
    return _open(files[TEXT], files[OBJECT])
