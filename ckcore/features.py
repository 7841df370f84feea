"""Feature helpers shared by kernel families for learned selection (``KernelFamily.pair_features``)."""

from __future__ import annotations

import math

__all__ = ["wave_features"]


def wave_features(programs: int, sm_count: int) -> dict[str, float]:
    """How a grid of ``programs`` fills the GPU's ``sm_count`` SMs: ``programs``, ``waves``
    (programs / SMs, assuming one program per SM at a time) and ``last_wave_fill`` (the busy
    fraction of the last wave; 1.0 when the waves are whole)."""
    waves = programs / sm_count
    return {"programs": float(programs), "waves": waves,
            "last_wave_fill": waves - math.floor(waves) if waves % 1 else 1.0}
