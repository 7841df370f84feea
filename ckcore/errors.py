"""The ckcore exception hierarchy.

Every error ckcore raises on purpose derives from :class:`CkError`. Messages name the field,
the value and what was expected, and end with a remedy where one exists. Errors that may cross
process boundaries (build workers) define ``__reduce__`` so they pickle with their fields.
"""

from __future__ import annotations

__all__ = [
    "CkError",
    "UnsupportedProblem",
    "NoKernelFound",
    "InvalidKernelKey",
    "CompileError",
    "CacheError",
    "PluginError",
    "DuplicateOperatorError",
    "UnknownOperatorError",
    "DeviceError",
]


class CkError(Exception):
    """Base class of every error ckcore raises on purpose."""


class UnsupportedProblem(CkError, ValueError):
    """A problem, or tensors passed for it, that the op does not accept.

    :param field: the offending field (``"M"``, ``"a.dtype"``, ``"b.stride"``...).
    :param value: the value received.
    :param expected: what would have been accepted, in words.
    """

    def __init__(self, field: str, value: object, expected: str, op: str | None = None):
        self.field, self.value, self.expected, self.op = field, value, expected, op
        where = f"{op}: " if op else ""
        super().__init__(f"{where}{field}={value!r} is not supported; expected {expected}")

    def __reduce__(self):
        return (type(self), (self.field, self.value, self.expected, self.op))


class NoKernelFound(CkError, LookupError):
    """No declared instance supports the problem.

    :param op: op name.  :param problem: the problem's name.
    :param rejected: ``{instance name: reason}`` for every candidate that was rejected.
    """

    def __init__(self, op: str, problem: str, rejected: dict[str, str]):
        self.op, self.problem, self.rejected = op, problem, dict(rejected)
        lines = "\n".join(f"  - {k}: {v}" for k, v in sorted(self.rejected.items())[:20])
        more = "" if len(self.rejected) <= 20 else f"\n  ... and {len(self.rejected) - 20} more"
        super().__init__(
            f"no kernel instance of op {op!r} supports {problem}; rejections:\n{lines or '  (no instances declared)'}{more}\n"
            "Declare a kernel set that covers it, or include the op's fallback family."
        )

    def __reduce__(self):
        return (type(self), (self.op, self.problem, self.rejected))


class InvalidKernelKey(CkError, ValueError):
    """A kernel key that is invalid, on its own or on an architecture.

    :param key: the key's name or repr.  :param reasons: every violated rule.
    """

    def __init__(self, key: str, reasons: list[str] | tuple[str, ...]):
        self.key, self.reasons = key, tuple(reasons)
        items = "\n".join(f"  - {r}" for r in self.reasons)
        super().__init__(f"invalid kernel key {key}:\n{items}")

    def __reduce__(self):
        return (type(self), (self.key, self.reasons))


class CompileError(CkError, RuntimeError):
    """The compiler driver failed on an instance.

    :param instance: the instance name.  :param arch: target arch (``sm_90``).
    :param detail: the compiler's message.
    """

    def __init__(self, instance: str, arch: str, detail: str):
        self.instance, self.arch, self.detail = instance, arch, detail
        super().__init__(
            f"compiling {instance} for {arch} failed:\n{detail}\n"
            "The failure is cached as a negative entry; `ckcore cache clear` forgets it."
        )

    def __reduce__(self):
        return (type(self), (self.instance, self.arch, self.detail))


class CacheError(CkError, OSError):
    """The cache cannot be used safely (ownership, permissions, unreadable root)."""


class PluginError(CkError, RuntimeError):
    """A plugin failed to load or registered something invalid."""


class DuplicateOperatorError(PluginError):
    """Two plugins registered the same op or kernel-family name."""

    def __init__(self, kind: str, name: str, first: str, second: str):
        self.kind, self.name, self.first, self.second = kind, name, first, second
        super().__init__(
            f"{kind} {name!r} is registered twice: by {first} and by {second}; "
            "uninstall one or block it with CKCORE_DISABLE_PLUGINS"
        )


class UnknownOperatorError(CkError, KeyError):
    """An op name that no loaded plugin defines."""

    def __init__(self, op: str, known: list[str]):
        self.op, self.known = op, list(known)
        super().__init__(f"unknown op {op!r}; known ops: {', '.join(sorted(known)) or '(none: is a plugin installed?)'}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class DeviceError(CkError, RuntimeError):
    """The GPU, or the interpreter standing in for it, cannot run the request."""
