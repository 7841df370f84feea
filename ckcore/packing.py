"""Pre-packing (``ckcore.prepack``; CK's "preshuffle"): an input that a problem's staged twin (:mod:`ckcore.staging`)
would copy on every dispatch, copied once, ahead of time. Weights are the use: a GEMM's B that
is the same on every call. Only problems that selection runs staged are packed.

``ckcore.prepack(op, problem, b=w)`` returns a :class:`Prepacked` holding the twin's layout of
``w``; ``ckcore.dispatch(op, problem, a=x, b=packed)`` accepts it in place of ``w`` and runs the
twin without copying B again. Where the problem runs unstaged (the op offers no twin, its
staging does not copy that tensor, or selection predicts the problem faster as it is),
``prepack`` returns the tensor unchanged, so callers can prepack every weight unconditionally.
Which layouts are packed, and what it measured, is the op's documentation (gemm:
``docs/gemm.md``, section Pre-packing).
"""

from __future__ import annotations

import contextlib
from typing import Any

import attrs

from .errors import UnsupportedProblem

__all__ = ["Prepacked", "pack", "unwrap"]


@attrs.frozen(eq=False)
class Prepacked:
    """One input packed for one problem.

    :ivar name: the op's tensor name (``b``).
    :ivar problem: the problem it was packed for; dispatch refuses it for any other.
    :ivar tensor: the packed torch tensor (the twin problem's shape and strides for ``name``).
    """

    name: str
    problem: Any
    tensor: Any

    @property
    def device(self):
        return self.tensor.device


def pack(registry, op: str, problem, tensors: dict[str, Any]) -> dict[str, Any]:
    """``{name: Prepacked or the tensor itself}`` for each of ``tensors`` (see the module).

    :raises UnsupportedProblem: a name that is not an input of ``op``, or a tensor that does not
        match ``problem`` (shape, strides, dtype, device).
    """
    import torch

    from .errors import NoKernelFound

    spec = registry.catalog.op(op)
    problem = registry.coerce_problem(op, problem)
    for name, t in tensors.items():
        if name not in spec.inputs + spec.optional_inputs:
            raise UnsupportedProblem(name, "<tensor>", f"an input of op {op} ({', '.join(spec.inputs)}...)", op=op)
        if not hasattr(t, "data_ptr"):
            raise UnsupportedProblem(name, type(t).__name__, "a torch tensor", op=op)
    spec.check_tensors(problem, tensors)
    staging = registry.staging(problem, explicit=True)
    if staging is not None:
        try:  # pack only for a problem that runs staged: a direct selection reads the tensors as they are
            staged = registry.select(problem).staging is not None
        except NoKernelFound:  # nothing runs it directly (CKCORE_STAGING=0 with a quantized rrr B)
            staged = True
        staging = staging if staged else None
    staged = {t.name: t for t in staging.tensors} if staging is not None else {}
    out: dict[str, Any] = {}
    for name, t in tensors.items():
        st = staged.get(name)
        if st is None or st.output:
            out[name] = t
            continue
        storage = torch.empty(max(st.span, 1), dtype=st.dtype.torch, device=t.device)
        packed = storage.as_strided(st.shape, st.strides)
        with torch.no_grad(), (torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()):
            registry.copy(packed, t, interpret=t.device.type == "cpu")
        out[name] = Prepacked(name, problem, packed)
    return out


def unwrap(problem, tensors: dict[str, Any], op: str) -> tuple[dict[str, Any], dict[str, Prepacked]]:
    """(``tensors`` without their :class:`Prepacked` ones, ``{name: Prepacked}``).

    :raises UnsupportedProblem: a tensor packed for another problem or under another name."""
    packed = {n: t for n, t in tensors.items() if isinstance(t, Prepacked)}
    for name, p in packed.items():
        if p.name != name:
            raise UnsupportedProblem(name, f"<prepacked {p.name}>", f"the tensor prepacked as {name!r}", op=op)
        if p.problem != problem:
            raise UnsupportedProblem(name, f"<prepacked for {p.problem.name}>",
                                     f"a tensor prepacked for {problem.name} (ckcore.prepack with this problem)", op=op)
    return {n: t for n, t in tensors.items() if n not in packed}, packed
