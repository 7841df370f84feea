"""Interpreted kernels may call Triton's @jit library functions (tl.sum, tl.max, tl.cdiv)."""

import torch
import triton
import triton.language as tl

from ckcore.interpret import InterpretedLaunch


@triton.jit
def _reduce(x_ptr, y_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(y_ptr, tl.sum(x, axis=0) + tl.max(x, axis=0) + tl.cdiv(N, 3))


def test_library_jit_functions_run_interpreted():
    x = torch.arange(8, dtype=torch.float32)
    y = torch.zeros(1)
    InterpretedLaunch(_reduce.fn)[(1,)](x, y, 8)
    assert y.item() == 28 + 7 + 3
    from triton.runtime.jit import JITFunction

    assert JITFunction.__call__.__qualname__ == "JITFunction.__call__"  # restored afterwards


def test_device_calls_leave_triton_language_unpatched():
    """A device call (tl.sum lives in triton.language.standard, whose globals hold tl.core) used
    to leave tl.core's builtins patched by the interpreter, and the next in-process compile
    failed ('ir.value' object has no attribute 'dtype')."""
    import triton.language.core as core
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    before = {n: getattr(core, n) for n in dir(core) if not n.startswith("_")}
    x = torch.arange(8, dtype=torch.float32)
    InterpretedLaunch(_reduce.fn)[(1,)](x, torch.zeros(1), 8)
    assert [n for n, v in before.items() if getattr(core, n) is not v] == []
    # and a compile for sm_90 still works in this process (to the TTIR stage: no GPU needed)
    src = ASTSource(fn=_reduce, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "constexpr"},
                    constexprs={"N": 8})
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
