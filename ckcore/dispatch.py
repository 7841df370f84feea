"""``dispatch(op, problem, **tensors)``: validate, select (memoised), load, launch.

A lazily created process-wide :class:`Registry` serves the module-level functions; it declares
``CKCORE_KERNEL_SET`` for the GPU found at first dispatch. Importing ckcore never touches CUDA.
"""

from __future__ import annotations

import functools
import threading
import warnings
from typing import Any

from .errors import CkError, DeviceError, UnsupportedProblem
from .packing import Prepacked, unwrap
from .registry import Registry, Selection, use_interpreter
from .settings import Settings

__all__ = ["default_registry", "dispatch", "select", "problem", "ops", "launch", "prepack", "use_interpreter"]

_lock = threading.Lock()
_default: Registry | None = None
_warned = False


def default_registry() -> Registry:
    """The process-wide registry: the current GPU's arch (or ``CKCORE_ARCH`` / ``sm_90`` in
    the interpreter), with ``CKCORE_KERNEL_SET`` declared for every op."""
    global _default
    with _lock:
        if _default is None:
            settings = Settings.from_env()
            arch, device_name = settings.arch, None
            if not use_interpreter(settings):
                from .arch import detect

                found = detect()
                if found is not None:
                    arch = arch or found[0].arch
                    device_name = found[1]
            reg = Registry(arch, settings=settings, device_name=device_name)
            reg.declare()
            _default = reg
        return _default


def _warn_interpreter() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "ckcore: no CUDA device (or CKCORE_INTERPRET=1): kernels run in Triton's interpreter on the CPU; "
            "this is for correctness checks only and is very slow",
            RuntimeWarning,
            stacklevel=3,
        )


def launch(registry: Registry, op: str, problem, tensors: dict[str, Any], *, instance: str | None = None,
           interpret: bool | None = None) -> Any:
    """Run ``op`` on ``tensors`` with the selected (or the named) instance; returns the output.
    Where the selection staged the problem (:mod:`ckcore.staging`), or a named instance runs
    only the op's staged twin, the tensors are copied into ckcore buffers for the launch and
    the output copied back.

    :raises UnsupportedProblem: tensors do not match the problem, or sit on the wrong device.
    :raises NoKernelFound: no instance supports the problem.
    """
    spec = registry.catalog.op(op)
    problem = registry.coerce_problem(op, problem)
    if not _names(spec).issuperset(tensors):
        name = sorted(set(tensors) - _names(spec))[0]
        known = spec.inputs + spec.optional_inputs + (spec.output,)
        raise UnsupportedProblem(name, "<tensor>", f"tensors named {', '.join(known)}", op=op)
    for name in spec.required_inputs(problem):
        if tensors.get(name) is None:
            raise UnsupportedProblem(name, None, "a torch tensor", op=op)
    packed = None
    if any(type(t) is Prepacked for t in tensors.values()):
        tensors, packed = unwrap(problem, tensors, op)
    spec.check_tensors(problem, tensors)
    interpret = registry.interpret if interpret is None else interpret
    first = tensors[spec.inputs[0]] if spec.inputs[0] in tensors else packed[spec.inputs[0]].tensor
    want = "cpu" if interpret else "cuda"
    device = first.device
    for name, t in (tensors.items() if packed is None else [*tensors.items(), *packed.items()]):
        if t is None:
            continue
        where = t.device
        if where.type != want:
            raise UnsupportedProblem(f"{name}.device", str(where),
                                     f"a {want} tensor ({'interpreter' if interpret else 'GPU'} mode)", op=op)
        if where != device:
            raise UnsupportedProblem(f"{name}.device", str(where), f"the device of {spec.inputs[0]} ({device})", op=op)
    out = tensors.get(spec.output)
    if out is None:
        out = spec.empty_output(problem, first)
    if packed:  # prepacked inputs are in the staged twin's layout: run the twin
        staging = registry.staging(problem, explicit=True)
        for name in packed:
            if staging is None or not staging.copies(name):
                raise UnsupportedProblem(name, "<prepacked>", f"a plain tensor ({problem.name} stages no {name})", op=op)
    if instance is None:
        if packed:
            sel, kernel = registry.selected_kernel(staging.problem, interpret=interpret)
            inst = sel.instance
        else:
            sel, kernel = registry.selected_kernel(problem, interpret=interpret)
            inst, staging = sel.instance, sel.staging
    else:
        inst = registry.named(instance)
        if inst is None or inst.op != op:
            raise UnsupportedProblem("instance", instance, f"a declared instance of op {op!r}", op=op)
        if not packed:
            staging = registry.staging_for(inst, problem)
        inst = registry.specialized(inst, problem if staging is None else staging.problem)
    run_problem = problem if staging is None else staging.problem
    plan = registry.plan(inst, run_problem)
    if plan.reason:
        raise UnsupportedProblem("instance", inst.name, f"an instance supporting {problem.name} ({plan.reason})", op=op)
    if instance is not None:
        kernel = registry.load(inst, interpret=interpret)
    launch_tensors = {**tensors, spec.output: out}
    grid = plan.grid
    copy = functools.partial(registry.copy, interpret=interpret) if staging is not None else None

    def run():  # under the tensors' device: staging copies and workspaces on its current stream
        lt = launch_tensors
        if staging is not None:
            lt = staging.stage(registry.workspaces, device, lt, op, packed and {n: p.tensor for n, p in packed.items()},
                               copy)
        for name, nbytes in plan.workspaces.items():
            lt[f"workspace_{name}"] = registry.workspaces.get(device, nbytes, f"{inst.family}/{name}")
        kernel[grid](*plan.family.launch_args(inst.key, run_problem, lt, interpret=interpret))
        if staging is not None:  # the staged output back into the caller's tensor
            staging.finish(lt, {spec.output: out}, copy)

    if interpret:
        _warn_interpreter()
        run()
    else:
        import torch

        try:
            if device.index == torch.cuda.current_device():  # the common case: no device switch
                run()
            else:
                with torch.cuda.device(device):
                    run()
        except CkError:
            raise
        except Exception as exc:  # launcher / driver failure: report it as a ckcore error
            raise DeviceError(f"launching {inst.name} on {device} failed: {exc}") from exc
    return out


def _names(spec) -> frozenset:
    """The tensor names ``spec``'s op takes (inputs, optional inputs, output), memoised on it."""
    names = spec.__dict__.get("_ckcore_tensor_names")
    if names is None:
        names = spec._ckcore_tensor_names = frozenset(spec.inputs + spec.optional_inputs + (spec.output,))
    return names


def dispatch(op: str, problem, **tensors) -> Any:
    """Compute ``op`` for ``problem`` on torch ``tensors`` with the selected kernel; returns the
    output tensor (the ``out`` tensor passed in, or a new one), launched on the current stream.

    :param problem: the op's problem object, or a dict of its fields.
    :raises UnsupportedProblem: bad problem, or tensors that do not match it.
    :raises NoKernelFound, CompileError, DeviceError:
    """
    return launch(default_registry(), op, problem, tensors)


def prepack(op: str, problem, **tensors) -> dict:
    """Inputs packed once for ``problem`` (e.g. a weight ``b``), to pass to :func:`dispatch` in
    their place: ``{name: ckcore.packing.Prepacked}``, or the tensor itself where the problem's
    kernels read its layout as it is (:mod:`ckcore.packing`).

    :raises UnsupportedProblem: a tensor that is not an input of ``op`` or does not match ``problem``.
    """
    return default_registry().prepack(op, problem, **tensors)


def select(op: str, problem) -> Selection:
    """The instance :func:`dispatch` would run for ``problem``, and the reason."""
    reg = default_registry()
    return reg.select(reg.coerce_problem(op, problem))


def problem(op: str, /, **fields):
    """A validated problem of ``op``. :raises UnsupportedProblem, UnknownOperatorError:"""
    return default_registry().problem(op, **fields)


def ops() -> list[str]:
    """Names of the ops the installed plugins define."""
    return sorted(default_registry().catalog.ops)
