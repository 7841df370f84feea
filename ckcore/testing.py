"""pytest plugin for ckcore and its plugin authors.

Enable it in your project's top-level ``conftest.py`` with ``pytest_plugins = ["ckcore.testing"]``
(or import the fixtures you need into a ``conftest.py``).

Fixtures:
- ``ck_cache_dir``: an empty cache root private to the test (also ``CKCORE_CACHE_DIR``);
- ``ck_plugin_manager``: a plugin manager of its own with the installed plugins (entry points);
  register extra test plugins on it freely;
- ``ck_catalog``: the ops and kernel families of ``ck_plugin_manager``;
- ``ck_registry``: a :class:`Registry` for sm_90 over both, with nothing declared.

Functions: :func:`sample_valid_keys`, :func:`assert_matches_reference` (an instance against the
op's float64 NumPy reference, in the interpreter by default, with the op's per-dtype tolerance),
:func:`instances_of`.
"""

from __future__ import annotations

import random

import pytest

from .arch import load as load_arch
from .measure import Validation, validate
from .plugins import Catalog, get_plugin_manager
from .registry import Registry
from .settings import Settings

__all__ = ["ck_cache_dir", "ck_plugin_manager", "ck_catalog", "ck_registry", "sample_valid_keys", "kernel_parameters",
           "assert_matches_reference", "instances_of"]


@pytest.fixture
def ck_cache_dir(tmp_path, monkeypatch):
    """An empty cache root private to the test, also exported as ``CKCORE_CACHE_DIR``."""
    d = tmp_path / "ckcache"
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(d))
    return d


@pytest.fixture
def ck_plugin_manager(ck_cache_dir):
    """A fresh plugin manager with the installed plugins; extra plugins may be registered."""
    return get_plugin_manager(Settings(cache_dir=ck_cache_dir))


@pytest.fixture
def ck_catalog(ck_plugin_manager):
    """The ops and kernel families of ``ck_plugin_manager`` (collected when first used)."""
    return Catalog(ck_plugin_manager)


@pytest.fixture
def ck_registry(ck_cache_dir, ck_plugin_manager):
    """A :class:`Registry` for sm_90 over ``ck_cache_dir``, nothing declared. Register test
    plugins on ``ck_plugin_manager`` before first using this fixture."""
    return Registry("sm_90", settings=Settings(cache_dir=ck_cache_dir), catalog=Catalog(ck_plugin_manager))


def sample_valid_keys(catalog: Catalog, family: str, n: int, *, arch: str = "sm_90", seed: int = 0) -> list:
    """Up to ``n`` distinct keys of ``family`` valid on ``arch``, sampled (seeded) from the union
    of the family's kernel sets."""
    fam, spec = catalog.families[family], load_arch(arch)
    keys = list(dict.fromkeys(k for make in fam.kernel_sets().values() for k in make(spec)))
    keys = [k for k in keys if not fam.check(k, spec)]
    return random.Random(seed).sample(keys, min(n, len(keys)))


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


def kernel_parameters(source: str, name: str) -> list[str]:
    """The parameter names of the kernel function ``name`` in a rendered module ``source``, in
    order (to compare with a family's ``signature``)."""
    import ast

    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return [a.arg for a in fn.args.args]
