"""Staging's copy kernels (ckcore.copying): how copies reduce to batches of 2-D tiles, and the
Triton kernels in the interpreter against torch's copy_ for every variant and element size."""

import pytest
import torch

from ckcore import Registry, Settings
from ckcore.copying import CopyPlan, plan


def _cl_strides(shape):
    n, c, *sp = shape
    out, acc = [0] * len(shape), c
    out[1] = 1
    for i in range(len(shape) - 1, 1, -1):
        out[i] = acc
        acc *= shape[i]
    out[0] = acc
    return tuple(out)


def _cf_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


@pytest.mark.parametrize("shape", [(2, 16, 17), (2, 18, 6, 7), (2, 20, 3, 5, 6)])
def test_channels_first_to_last_is_one_transpose_per_image(shape):
    p = plan(shape, _cf_strides(shape), _cl_strides(shape))
    pixels = 1
    for n in shape[2:]:
        pixels *= n
    assert p == CopyPlan("transpose", shape[0], shape[1], pixels, (shape[1] * pixels, pixels), (shape[1] * pixels, shape[1]))
    back = plan(shape, _cl_strides(shape), _cf_strides(shape))
    assert back.variant == "transpose" and (back.R, back.C) == (pixels, shape[1])


def test_padded_rows_and_transposed_matrices():
    assert plan((4095, 4095), (4095, 1), (4096, 1)) == CopyPlan("rows", 1, 4095, 4095, (0, 4095), (0, 4096))
    assert plan((100, 50), (1, 100), (1, 128)) == CopyPlan("rows", 1, 50, 100, (0, 100), (0, 128))  # column-major
    assert plan((96, 64), (64, 1), (1, 128)) == CopyPlan("transpose", 1, 96, 64, (0, 64), (0, 128))  # K-major copy of B
    assert plan((8, 8), (8, 1), (8, 1)) == CopyPlan("rows", 1, 1, 64, (0, 0), (0, 0))  # merges into one row


def test_layouts_it_leaves_to_torch():
    assert plan((16, 5, 32), (1, 16, 80), (160, 32, 1)) == CopyPlan("transpose", 5, 32, 16, (16, 80), (32, 160))
    assert plan((2, 3, 4, 5), (60, 20, 5, 1), (60, 5, 15, 1)) is None  # rows, but three outer dimensions
    shape = (32, 3, 224, 224)  # a 3-channel image: mostly masked tiles, torch's copy_ is faster
    assert plan(shape, _cf_strides(shape), _cl_strides(shape)) is None
    assert plan((4, 6), (2, 12), (6, 1)) is None  # the source has no contiguous dimension


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    return Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), interpret=True))


@pytest.mark.parametrize("dtype", [torch.int8, torch.bfloat16, torch.float32, torch.float64])
def test_kernels_match_torch(reg, dtype):
    g = torch.Generator().manual_seed(0)
    cases = []
    x = (torch.randn(3, 70, 9, 11, generator=g) * 50).to(dtype)  # channels-first image
    cases.append((x, torch.empty_like(x, memory_format=torch.channels_last)))
    cases.append((x.contiguous(memory_format=torch.channels_last), torch.empty_like(x)))
    a = (torch.randn(67, 130, generator=g) * 50).to(dtype)
    cases.append((a, torch.empty(67, 144, dtype=dtype)[:, :130]))  # padded rows
    cases.append((a, torch.empty(144, 67, dtype=dtype)[:130].t()))  # transposed, padded
    for src, dst in cases:
        assert plan(tuple(src.shape), src.stride(), dst.stride()) is not None
        dst.fill_(0)
        reg.copy(dst, src)
        assert torch.equal(dst, src), (src.shape, src.stride(), dst.stride())


def test_overlapping_copies_follow_torch(reg):
    """Source and destination in one storage: torch's copy_ decides (it refuses this one)."""
    x = torch.arange(128 * 128, dtype=torch.float32).reshape(128, 128)
    with pytest.raises(RuntimeError, match="single memory location"):
        reg.copy(x, x.t())
