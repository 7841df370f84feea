"""Selection heuristics (stevedore namespace ``ckcore.heuristics``).

A heuristic ranks the instances that support a problem; the registry takes the first.
Drivers: ``rules`` (each family's ``estimate_ms`` cost model) and ``lightgbm`` (a regressor per
(op, arch) shipped in the op's plugin, falling back to ``rules`` without one).
"""

from __future__ import annotations

import functools
from typing import Protocol, Sequence

import attrs

from ..arch import ArchSpec, DeviceSpec
from ..errors import PluginError
from ..keys import ProblemBase
from ..spec import Instance, KernelFamily, Operator

__all__ = ["Candidate", "Ranked", "Heuristic", "get_heuristic"]

NAMESPACE = "ckcore.heuristics"


@attrs.frozen
class Candidate:
    """An instance that supports the problem, with its family."""

    instance: Instance
    family: KernelFamily = attrs.field(eq=False)
    operator: Operator | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Ranked:
    """A candidate's rank score (lower is better; for ``rules``: estimated ms) and a note."""

    instance: Instance
    score: float
    note: str


class Heuristic(Protocol):
    """The heuristic-driver contract."""

    name: str

    def rank(self, problem: ProblemBase, candidates: Sequence[Candidate], arch: ArchSpec, device: DeviceSpec) -> list[Ranked]:
        """``candidates`` best first. Must return every candidate."""


def _raise(manager, entrypoint, exc):
    raise PluginError(f"heuristic driver {entrypoint.name!r} failed to load: {exc!r}") from exc


@functools.cache
def get_heuristic(name: str = "rules") -> Heuristic:
    """The heuristic driver ``name``. :raises PluginError: unknown or broken driver."""
    from stevedore import driver
    from stevedore.exception import NoMatches

    try:
        mgr = driver.DriverManager(NAMESPACE, name, invoke_on_load=True, on_load_failure_callback=_raise)
    except NoMatches:
        raise PluginError(f"no heuristic driver {name!r} in entry-point group {NAMESPACE}") from None
    return mgr.driver
