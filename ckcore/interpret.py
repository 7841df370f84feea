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
    """Route @jit device-function calls through ``InterpretedFunction`` while an interpreted
    kernel runs. Triton 3.6's ``InterpretedFunction.__call__`` patches the language modules of
    the callee (``tl.core`` for the standard library's ``tl.sum``) and never restores them, so a
    later compile in the same process met interpreter builtins (``'ir.value' object has no
    attribute 'dtype'``); here every such patch is undone when its device call returns."""
    from triton.runtime import interpreter
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    cache: dict = {}
    scopes: list = []
    patch_lang = interpreter._patch_lang

    def patch_and_keep(fn):
        scope = patch_lang(fn)
        scopes.append(scope)
        return scope

    def call(self, *args, **kwargs):
        fn = cache.get(self.fn)
        if fn is None:
            fn = cache[self.fn] = InterpretedFunction(self.fn)
        mark = len(scopes)
        try:
            return fn(*args, **kwargs)
        finally:  # undo the callee's patches, newest first, back to the caller's state
            while len(scopes) > mark:
                scopes.pop().restore()

    with _lock:
        original = JITFunction.__call__
        JITFunction.__call__ = call
        interpreter._patch_lang = patch_and_keep
        try:
            yield
        finally:
            interpreter._patch_lang = patch_lang
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
