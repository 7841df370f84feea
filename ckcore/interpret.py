"""Running rendered kernels in Triton's interpreter (CPU tensors; for correctness only).

Triton builds its interpreter functions at decoration time when ``TRITON_INTERPRET=1`` is set
before ``import triton``. ckcore decides at dispatch time instead, so a kernel that calls
``@triton.jit`` library functions (``tl.sum``, ``tl.max``, ``tl.cdiv``, a template's own
helpers) would meet compiled-mode ``JITFunction`` objects. While an interpreted kernel runs,
:class:`InterpretedLaunch` routes such device-function calls through Triton's
``InterpretedFunction``, as the interpreter does for functions it decorated itself.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from pathlib import Path

from .compiler import CompileJob

__all__ = ["interpreted_kernel", "InterpretedLaunch"]

_SRC_DIR: Path | None = None
_lock = threading.RLock()


@contextlib.contextmanager
def _device_calls_interpreted():
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    cache: dict = {}

    def call(self, *args, **kwargs):
        fn = cache.get(self.fn)
        if fn is None:
            fn = cache[self.fn] = InterpretedFunction(self.fn)
        return fn(*args, **kwargs)

    with _lock:
        original = JITFunction.__call__
        JITFunction.__call__ = call
        try:
            yield
        finally:
            JITFunction.__call__ = original


class InterpretedLaunch:
    """``kernel[grid](*args)`` for an interpreted kernel, with device-function calls
    interpreted and a CPU scratch allocator in scope."""

    def __init__(self, fn):
        from triton.runtime.interpreter import InterpretedFunction

        from .compiler.scratch import ScratchLaunch

        self.kernel = ScratchLaunch(InterpretedFunction(fn), "cpu")

    def __getitem__(self, grid):
        launch = self.kernel[grid]

        def run(*args, **kwargs):
            with _device_calls_interpreted():
                return launch(*args, **kwargs)

        return run


def interpreted_kernel(job: CompileJob) -> InterpretedLaunch:
    """The job's kernel, ready to run in Triton's interpreter."""
    global _SRC_DIR
    from .compiler.triton_driver import exec_source

    if _SRC_DIR is None:
        _SRC_DIR = Path(tempfile.mkdtemp(prefix="ckcore-interp-"))
    module = exec_source(job.name, job.source, _SRC_DIR)
    return InterpretedLaunch(getattr(module, job.name).fn)
