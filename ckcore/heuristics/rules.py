"""The ``rules`` heuristic: rank candidates by their family's ``estimate_ms`` cost model."""

from __future__ import annotations

from typing import Sequence

from ..arch import ArchSpec, DeviceSpec
from ..keys import ProblemBase
from . import Candidate, Ranked

__all__ = ["RulesHeuristic"]


class RulesHeuristic:
    """Ranks by each family's estimated run time (ms); ties break by instance name."""

    name = "rules"

    def rank(self, problem: ProblemBase, candidates: Sequence[Candidate], arch: ArchSpec, device: DeviceSpec) -> list[Ranked]:
        scored = [
            Ranked(c.instance, float(c.family.estimate_ms(c.instance.key, problem, arch, device)), "estimated ms")
            for c in candidates
        ]
        return sorted(scored, key=lambda r: (r.score, r.instance.name))
