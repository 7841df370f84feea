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
    from triton.tools.tensor_descriptor import TensorDescriptor

    with pytest.raises(ValueError):
        check_descriptor(shape, strides, block, itemsize)
    base = torch.zeros(64 * 48, dtype={1: torch.int8, 2: torch.float16}[itemsize])
    with pytest.raises((AssertionError, ValueError)):  # Triton's own constructor refuses it too
        TensorDescriptor(base, shape, strides, block)


def test_host_descriptor_sets_every_field_of_tritons_descriptor():
    """host_descriptor skips the constructor: it must set every dataclass field Triton reads."""
    import dataclasses

    from triton.tools.tensor_descriptor import TensorDescriptor

    desc = host_descriptor(torch.zeros(4, dtype=torch.float16), [4], [1], [4])
    assert set(vars(desc)) == {f.name for f in dataclasses.fields(TensorDescriptor)}
