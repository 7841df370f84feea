"""Running rendered kernels in Triton's interpreter (CPU tensors; for correctness only)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .compiler import CompileJob

__all__ = ["interpreted_kernel"]

_SRC_DIR: Path | None = None


def interpreted_kernel(job: CompileJob):
    """The job's kernel wrapped in Triton's ``InterpretedFunction`` (``kernel[grid](*args)``)."""
    global _SRC_DIR
    from triton.runtime.interpreter import InterpretedFunction

    from .compiler.triton_driver import exec_source

    if _SRC_DIR is None:
        _SRC_DIR = Path(tempfile.mkdtemp(prefix="ckcore-interp-"))
    module = exec_source(job.name, job.source, _SRC_DIR)
    from .compiler.scratch import ScratchLaunch

    return ScratchLaunch(InterpretedFunction(getattr(module, job.name).fn), "cpu")
