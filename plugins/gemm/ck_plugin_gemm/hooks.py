"""ck-plugin-gemm's hook implementations (the module named by its ``ckcore`` entry point)."""

from __future__ import annotations

from ckcore import hookimpl


@hookimpl
def ck_register_operators(register):
    from .op import GemmOperator

    register(GemmOperator())


@hookimpl
def ck_register_kernel_families(register):
    from .family import TiledGemm
    from .gluon_ws import GluonWsGemm
    from .persistent import PersistentGemm
    from .tma import TmaGemm

    register(TiledGemm())
    register(TmaGemm())
    register(PersistentGemm())
    register(GluonWsGemm())
