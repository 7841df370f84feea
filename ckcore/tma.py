"""Host-made TMA descriptors for kernels that take them as arguments (Triton 3.6 ``tensordesc``
parameters, ``triton.tools.tensor_descriptor.TensorDescriptor``).

Made in the kernel instead (``tl.make_tensor_descriptor``), each program writes the tensor map
to global scratch and fences it before its first TMA: 2-4 µs a launch on an H100
(``docs/performance.md``, seventeenth session). Made on the host, Triton's launcher encodes the
map at each launch and passes it by value.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["host_descriptor", "check_descriptor", "checked_views", "host_descriptors"]


def check_descriptor(shape: Sequence[int], strides: Sequence[int], block: Sequence[int], itemsize: int) -> None:
    """Triton 3.6's rules for a descriptor's geometry (``TensorDescriptor.__post_init__`` and
    ``validate_block_shape``), checked explicitly (they hold under ``python -O`` too): rank 1-5
    alike in all three, positive sizes, a unit last stride, the other strides multiples of 16
    bytes for elements of ``itemsize`` bytes, and power-of-two block sizes. Callers run it once
    per geometry (when they memoise it), not at every launch.

    :raises ValueError: the geometry breaks one of them (a ckcore bug: kernel families only
        describe what their ``supports`` accepted).
    """
    what = f"shape {list(shape)}, strides {list(strides)}, block {list(block)}"
    if not 1 <= len(shape) <= 5 or len(strides) != len(shape) or len(block) != len(shape):
        raise ValueError(f"TMA descriptor {what}: rank 1-5, the same for shape, strides and block")
    if any(d <= 0 for d in shape):
        raise ValueError(f"TMA descriptor {what}: every size must be positive")
    if strides[-1] != 1 or any(s * itemsize % 16 for s in strides[:-1]):
        raise ValueError(f"TMA descriptor {what}: the last stride must be 1 and the others multiples of 16 bytes "
                         f"({itemsize}-byte elements)")
    if any(b <= 0 or b & (b - 1) for b in block):
        raise ValueError(f"TMA descriptor {what}: block sizes must be powers of two")


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


def checked_views(entries) -> tuple:
    """A kernel's descriptors as ``(tensor, shape, strides, block)`` tuples (lists inside, in
    elements), from ``(tensor, shape, strides, block, itemsize)`` entries, each geometry checked
    with :func:`check_descriptor`. Kernel families memoise the result per (key, problem)."""
    out = []
    for tensor, shape, strides, block, itemsize in entries:
        check_descriptor(shape, strides, block, itemsize)
        out.append((tensor, list(shape), list(strides), list(block)))
    return tuple(out)


def host_descriptors(views, tensors) -> tuple:
    """The descriptors of :func:`checked_views` ``views`` over a launch's ``tensors`` (by name)."""
    return tuple(host_descriptor(tensors[t], shape, strides, block) for t, shape, strides, block in views)
