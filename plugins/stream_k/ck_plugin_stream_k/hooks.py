"""Hook implementations of ck-plugin-stream-k."""

from ckcore import hookimpl


@hookimpl
def ck_register_kernel_families(register):
    from .gemv import GemvGemm
    from .splitk import SplitKGemm
    from .streamk import StreamKGemm

    register(SplitKGemm())
    register(StreamKGemm())
    register(GemvGemm())
