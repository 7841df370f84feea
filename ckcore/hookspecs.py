"""ckcore's hook specifications: the whole contract between the core and operator plugins.

A plugin module implements any of these with ``@ckcore.hookimpl`` and is listed under the
``ckcore`` entry-point group. Hook implementations may accept fewer arguments than the spec.
"""

from __future__ import annotations

from typing import Callable

import pluggy

__all__ = ["hookspec", "hookimpl", "PROJECT"]

PROJECT = "ckcore"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# Registration hooks ------------------------------------------------------------------------


@hookspec
def ck_register_operators(register: Callable) -> None:
    """Register the ops this plugin defines.

    :param register: ``register(spec: ckcore.OperatorSpec)``; raises
        :class:`~ckcore.errors.DuplicateOperatorError` if another plugin defined the op.
    """


@hookspec
def ck_register_kernel_families(register: Callable) -> None:
    """Register kernel families; a family may serve an op that another plugin defines.

    :param register: ``register(family: ckcore.KernelFamily)``; raises
        :class:`~ckcore.errors.DuplicateOperatorError` if the family name is taken.
    """
