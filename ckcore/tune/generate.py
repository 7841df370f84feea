"""Seeded random problems for tune datasets, drawn by each op's ``Operator.generate(rng)``
(realistic distributions chosen by the plugin), separate from the public suites."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedProblem

__all__ = ["generate_problems"]


def generate_problems(spec, n: int, seed: int = 0, *, max_tries: int = 100) -> list[dict]:
    """Up to ``n`` distinct valid problems (field dicts) of op ``spec``, reproducible for
    ``seed`` (fewer only if ``n · max_tries`` draws do not yield ``n`` distinct ones).

    :raises NotImplementedError: the op has no generator.
    """
    rng = np.random.default_rng(seed)
    out, names = [], set()
    tries = 0
    while len(out) < n and tries < n * max_tries:
        tries += 1
        fields = spec.generate(rng)
        try:
            problem = spec.problem(**fields)
        except UnsupportedProblem:
            continue
        if problem.name not in names:
            names.add(problem.name)
            out.append(problem.to_dict())
    return out
