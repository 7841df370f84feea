"""Hook implementations (the module named by the ``ckcore`` entry point); imports stay cheap."""

from ckcore import hookimpl


@hookimpl
def ck_register_operators(register):
    from .op import SoftmaxOperator

    register(SoftmaxOperator())


@hookimpl
def ck_register_kernel_families(register):
    from .family import SoftmaxRows

    register(SoftmaxRows())
