"""ckcore.tma: host-made TMA descriptors without per-launch checks, and the checks they skip."""

import pytest

torch = pytest.importorskip("torch")

from ckcore.tma import check_descriptor, host_descriptor  # noqa: E402


def test_host_descriptor_is_tritons_descriptor_with_the_given_geometry():
    from triton.tools.tensor_descriptor import TensorDescriptor

    base = torch.zeros(64, 48, dtype=torch.bfloat16)
    shape, strides, block = [64, 48], [48, 1], [32, 16]
    check_descriptor(shape, strides, block, 2)
    desc = host_descriptor(base, shape, strides, block)
    ref = TensorDescriptor(base, shape, strides, block)
    assert isinstance(desc, TensorDescriptor)
    assert (desc.base, desc.shape, desc.strides, desc.block_shape, desc.padding) == \
        (ref.base, ref.shape, ref.strides, ref.block_shape, ref.padding)


@pytest.mark.parametrize("shape,strides,block,itemsize", [
    ([64, 48], [40, 1], [32, 16], 1),   # a row stride of 40 B: not a multiple of 16 B
    ([64, 48], [48, 2], [32, 16], 2),   # last dimension not contiguous
    ([64, 0], [48, 1], [32, 16], 2),    # an empty dimension
    ([64, 48], [48, 1], [32, 24], 2),   # a block that is not a power of two
    ([64, 48], [48, 1], [32], 2),       # rank mismatch
])
def test_check_descriptor_rejects_what_triton_rejects(shape, strides, block, itemsize):
    with pytest.raises((AssertionError, ValueError)):
        check_descriptor(shape, strides, block, itemsize)  # AssertionError or ValueError, as Triton raises
