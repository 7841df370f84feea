"""The NumPy float64 grouped-convolution reference against PyTorch CPU float64."""

import importlib.util
import pathlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

_PATH = pathlib.Path(__file__).parents[1] / "ck_plugin_grouped_conv" / "reference.py"
_spec = importlib.util.spec_from_file_location("ck_plugin_grouped_conv_reference", _PATH)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

TOL = dict(rtol=1e-10, atol=1e-10)
FWD = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
BWD_DATA = {1: torch.nn.grad.conv1d_input, 2: torch.nn.grad.conv2d_input, 3: torch.nn.grad.conv3d_input}
BWD_WEIGHT = {1: torch.nn.grad.conv1d_weight, 2: torch.nn.grad.conv2d_weight, 3: torch.nn.grad.conv3d_weight}

# (N, C, K, G, spatial, filter, stride, pad, dilation)
CASES = [
    # 1D
    (1, 3, 4, 1, (9,), (3,), (1,), (1,), (1,)),  # G=1
    (2, 6, 4, 2, (8,), (3,), (2,), (0,), (1,)),  # G>1, C/G=3, stride 2 not dividing evenly
    (2, 4, 4, 4, (9,), (5,), (1,), (2,), (2,)),  # depthwise, dilation 2
    (1, 4, 8, 4, (10,), (3,), (2,), (1,), (1,)),  # depthwise, multiplier 2, uneven stride
    (2, 4, 8, 2, (45,), (31,), (1,), (2,), (1,)),  # long filter
    (1, 3, 6, 3, (42,), (31,), (2,), (1,), (1,)),  # long filter, depthwise x2, uneven stride 2
    (2, 5, 3, 1, (6,), (1,), (2,), (0,), (1,)),  # 1x1 filter, uneven stride 2
    # 2D
    (1, 3, 2, 1, (7, 5), (3, 3), (1, 1), (1, 1), (1, 1)),  # G=1
    (2, 4, 6, 2, (9, 7), (3, 5), (2, 1), (1, 2), (1, 1)),  # G>1, C/G=2, mixed stride
    (2, 3, 3, 3, (7, 9), (3, 3), (1, 2), (2, 0), (2, 1)),  # depthwise, dilation 2
    (1, 2, 4, 2, (8, 9), (5, 3), (2, 2), (2, 1), (1, 2)),  # depthwise x2, uneven stride
    (2, 4, 4, 2, (5, 6), (1, 1), (2, 2), (0, 0), (1, 1)),  # 1x1, stride 2
    # 3D
    (1, 2, 3, 1, (5, 4, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),  # G=1
    (2, 4, 4, 2, (5, 7, 6), (3, 1, 3), (2, 1, 2), (1, 0, 2), (1, 1, 1)),  # G>1, uneven strides
    (1, 3, 6, 3, (7, 5, 6), (3, 3, 3), (1, 2, 1), (2, 1, 0), (2, 1, 1)),  # depthwise x2, dilation 2
    (2, 2, 2, 2, (5, 5, 9), (1, 3, 5), (1, 1, 2), (0, 1, 2), (1, 1, 1)),  # depthwise, filter 5
]


def _id(case):
    n, c, k, g, sp, f, s, p, d = case
    j = lambda t: "x".join(map(str, t))  # noqa: E731
    return f"{len(sp)}d-n{n}c{c}k{k}g{g}-in{j(sp)}-f{j(f)}-s{j(s)}-p{j(p)}-d{j(d)}"


def _tensors(case, seed):
    n, c, k, g, sp, f, s, p, d = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + sp)
    w = rng.standard_normal((k, c // g) + f)
    out = tuple(ref.out_size(*a) for a in zip(sp, f, s, p, d))
    dy = rng.standard_normal((n, k) + out)
    return x, w, dy


def _kw(case):
    n, c, k, g, sp, f, s, p, d = case
    return dict(groups=g, stride=s, pad=p, dilation=d)


def _check(got, want):
    assert got.dtype == np.float64 and got.flags.c_contiguous
    np.testing.assert_allclose(got, want.numpy(), **TOL)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_conv_fwd(case):
    x, w, _ = _tensors(case, 1)
    kw = _kw(case)
    want = FWD[x.ndim - 2](torch.from_numpy(x), torch.from_numpy(w), stride=kw["stride"],
                           padding=kw["pad"], dilation=kw["dilation"], groups=kw["groups"])
    _check(ref.conv_fwd(x, w, **kw), want)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_conv_bwd_data(case):
    x, w, dy = _tensors(case, 2)
    kw = _kw(case)
    want = BWD_DATA[x.ndim - 2](x.shape, torch.from_numpy(w), torch.from_numpy(dy), stride=kw["stride"],
                                padding=kw["pad"], dilation=kw["dilation"], groups=kw["groups"])
    _check(ref.conv_bwd_data(dy, w, spatial=x.shape[2:], **kw), want)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_conv_bwd_weight(case):
    x, w, dy = _tensors(case, 3)
    kw = _kw(case)
    want = BWD_WEIGHT[x.ndim - 2](torch.from_numpy(x), w.shape, torch.from_numpy(dy), stride=kw["stride"],
                                  padding=kw["pad"], dilation=kw["dilation"], groups=kw["groups"])
    _check(ref.conv_bwd_weight(x, dy, filter=w.shape[2:], **kw), want)


def test_out_size_matches_torch():
    x = torch.zeros(1, 1, 40, dtype=torch.float64)
    for size in (1, 5, 7, 9, 40):
        for f in (1, 3, 5):
            for s in (1, 2, 3):
                for p in (0, 1, 2):
                    for d in (1, 2):
                        if size + 2 * p < d * (f - 1) + 1:
                            continue
                        w = torch.zeros(1, 1, f, dtype=torch.float64)
                        y = F.conv1d(x[..., :size], w, stride=s, padding=p, dilation=d)
                        assert ref.out_size(size, f, s, p, d) == y.shape[-1], (size, f, s, p, d)
