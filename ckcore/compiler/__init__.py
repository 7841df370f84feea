"""Compiler drivers (stevedore namespace ``ckcore.compilers``; default ``triton``).

A driver turns a :class:`CompileJob` (rendered source plus everything else that changes the
binary) into artifact files for one target architecture, without needing a GPU, and loads
those artifacts back into something launchable.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Protocol

import attrs

from ..errors import PluginError

__all__ = ["CompileJob", "Compiler", "get_compiler"]

NAMESPACE = "ckcore.compilers"


@attrs.frozen(kw_only=True)
class CompileJob:
    """Everything that determines one compiled kernel.

    :ivar name: instance name, also the kernel function's name in ``source``.
    :ivar source: rendered Python source.
    :ivar signature: argument -> Triton type, in order.
    :ivar constexprs: values of ``constexpr`` arguments.
    :ivar divisible_by_16: arguments assumed divisible by 16.
    :ivar options: compiler options (``num_warps``, ``num_stages``).
    :ivar arch: target (``sm_90``); ``cc`` its compute capability as an int (90).
    """

    name: str
    source: str
    signature: dict = attrs.field(converter=dict)
    constexprs: dict = attrs.field(converter=dict)
    divisible_by_16: tuple = attrs.field(converter=tuple)
    options: dict = attrs.field(converter=dict)
    arch: str
    cc: int

    def identity(self) -> dict[str, Any]:
        """The job as canonical data, for fingerprints."""
        return {
            "name": self.name,
            "source": self.source,
            "signature": list(self.signature.items()),
            "constexprs": sorted((k, repr(v)) for k, v in self.constexprs.items()),
            "divisible_by_16": sorted(self.divisible_by_16),
            "options": sorted((k, repr(v)) for k, v in self.options.items()),
            "arch": self.arch,
        }


class Compiler(Protocol):
    """The compiler-driver contract."""

    name: str

    def version(self) -> str:
        """Every version that changes the binary (compiler, assembler), as one string."""

    def compile(self, job: CompileJob) -> dict[str, bytes]:
        """Artifacts ``{file name: bytes}`` for ``job``. :raises CompileError:"""

    def load(self, job: CompileJob, files: dict[str, Path], fingerprint: str) -> Any:
        """A launchable kernel (``kernel[grid](*args)``) from artifacts on disk; needs a GPU."""


def _raise(manager, entrypoint, exc):
    raise PluginError(f"compiler driver {entrypoint.name!r} failed to load: {exc!r}") from exc


@functools.cache
def get_compiler(name: str = "triton") -> Compiler:
    """The compiler driver registered as ``name`` in ``ckcore.compilers``.

    :raises PluginError: no such driver, or it fails to import.
    """
    from stevedore import driver
    from stevedore.exception import NoMatches

    try:
        mgr = driver.DriverManager(NAMESPACE, name, invoke_on_load=True, on_load_failure_callback=_raise)
    except NoMatches:
        raise PluginError(f"no compiler driver {name!r} in entry-point group {NAMESPACE}; is ckcore installed?") from None
    return mgr.driver
