"""ck-plugin-grouped-conv's hook implementations (the module named by its ``ckcore`` entry point)."""

from __future__ import annotations

from ckcore import hookimpl


@hookimpl
def ck_register_operators(register):
    from .op import OPERATORS

    for op in OPERATORS:
        register(op())


@hookimpl
def ck_register_kernel_families(register):
    from .family import FAMILIES
    from .halo import HALO_FAMILIES
    from .halo_wgrad import ConvHaloBwdWeight
    from .pointwise import pointwise_families
    from .row_window import ROW_FAMILIES
    from .tma import TMA_FAMILIES

    for family in FAMILIES + TMA_FAMILIES + HALO_FAMILIES + (ConvHaloBwdWeight, ) + ROW_FAMILIES:
        register(family())
    for family in pointwise_families():  # the gemm op's kernels on pointwise problems, where installed
        register(family)
