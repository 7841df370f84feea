"""Host-made TMA descriptors for kernels that take them as arguments (Triton 3.6 ``tensordesc``
parameters, ``triton.tools.tensor_descriptor.TensorDescriptor``).

Made in the kernel instead (``tl.make_tensor_descriptor``), each program writes the tensor map
to global scratch and fences it before its first TMA: 2-4 µs a launch on an H100
(``docs/performance.md``, seventeenth session). Made on the host, Triton's launcher encodes the
map at each launch and passes it by value.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["host_descriptor", "check_descriptor"]


def check_descriptor(shape: Sequence[int], strides: Sequence[int], block: Sequence[int], itemsize: int) -> None:
    """Triton's own checks of a descriptor's geometry (rank, block shape, 16-byte strides,
    positive sizes, unit last stride) for elements of ``itemsize`` bytes; callers run it once
    per geometry (when they memoise it), not at every launch.

    :raises AssertionError, ValueError: the geometry breaks Triton's descriptor rules (a ckcore bug: kernel
        families only describe what their ``supports`` accepted).
    """
    from triton.tools.tensor_descriptor import TensorDescriptor

    class _Aligned:  # a stand-in base: the base pointer's alignment is the caller's to check
        dtype = type("dtype", (), {"itemsize": itemsize})()

        @staticmethod
        def data_ptr() -> int:
            return 0

    TensorDescriptor(_Aligned(), list(shape), list(strides), list(block))


def host_descriptor(base: Any, shape: list[int], strides: list[int], block: list[int]):
    """A ``TensorDescriptor`` of the tensor ``base`` (whose data pointer is element 0 of the
    described array and is 16-byte aligned: the caller's ``supports`` and tensor checks ensure
    it) with ``shape`` and ``strides`` in elements and boxes of ``block``, all checked before
    with :func:`check_descriptor` (Triton's constructor would check them again at every launch,
    which costs more than the rest of a launch's arguments). The lists are shared, not copied:
    nothing downstream modifies them."""
    if not _CLASS:
        from triton.tools.tensor_descriptor import TensorDescriptor

        _CLASS.append(TensorDescriptor)
    desc = object.__new__(_CLASS[0])
    desc.__dict__ = {"base": base, "shape": shape, "strides": strides, "block_shape": block, "padding": "zero"}
    return desc


_CLASS: list = []  # Triton's TensorDescriptor, imported on first use
