"""Test helpers for ckcore and its plugins (import the fixtures into a ``conftest.py``).

Fixtures: ``ck_cache_dir`` (an empty private cache), ``ck_registry`` (a registry for sm_90 on it).
Functions: :func:`assert_matches_reference` (run an instance in the interpreter or on the GPU and
compare with the op's float64 NumPy reference) and :func:`instances_of`.
"""

from __future__ import annotations

import pytest

from .measure import Validation, validate
from .registry import Registry
from .settings import Settings

__all__ = ["ck_cache_dir", "ck_registry", "assert_matches_reference", "instances_of"]


@pytest.fixture
def ck_cache_dir(tmp_path, monkeypatch):
    """An empty cache root private to the test, also exported as ``CKCORE_CACHE_DIR``."""
    d = tmp_path / "ckcache"
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(d))
    return d


@pytest.fixture
def ck_registry(ck_cache_dir):
    """A :class:`Registry` for sm_90 over ``ck_cache_dir`` with no instances declared."""
    return Registry("sm_90", settings=Settings(cache_dir=ck_cache_dir))


def assert_matches_reference(registry: Registry, op: str, problem, *, instance: str | None = None, seed: int = 0,
                             interpret: bool | None = None) -> Validation:
    """Run ``problem`` (with ``instance`` or the selected one) on random inputs and assert
    every element is within the op's tolerance of the NumPy float64 reference."""
    v = validate(registry, op, problem, instance=instance, seed=seed, interpret=interpret)
    name = instance or registry.select(problem).instance.name
    assert v.passed, f"{name} on {problem.name}: {v}"
    return v


def instances_of(registry: Registry, op: str, family: str | None = None):
    """Declared instances of ``op`` (and ``family``), by name."""
    return sorted((i for i in registry.of_op(op) if family is None or i.family == family), key=lambda i: i.name)
