"""ck-plugin-depthwise's hook implementations: kernel families only (the ops come from
ck-plugin-grouped-conv)."""

from __future__ import annotations

from ckcore import hookimpl


@hookimpl
def ck_register_kernel_families(register):
    from .family import FAMILIES

    for family in FAMILIES:
        register(family())
