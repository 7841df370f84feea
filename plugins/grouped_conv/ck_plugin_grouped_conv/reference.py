"""NumPy float64 reference for grouped convolution: forward, backward-data and backward-weight.

Semantics are PyTorch's: ``conv_fwd`` is torch.nn.functional.conv{1,2,3}d, ``conv_bwd_data`` is
torch.nn.grad.conv{1,2,3}d_input and ``conv_bwd_weight`` is torch.nn.grad.conv{1,2,3}d_weight
(cross-correlation, symmetric zero padding, dilation, ``groups`` splitting channels into G blocks).

Arrays use PyTorch's logical layouts, with 1, 2 or 3 spatial dims (``ndim``):
x (N, C, *spatial), w (K, C/G, *filter), y (N, K, *out), out[i] = out_size(spatial[i], ...).
G must divide C and K. Everything is computed in float64 and returned as contiguous float64.

Method: loop over the filter taps only. For each tap, a strided slice of the zero-padded input
(N, G, C/G, *out) meets the tap's weights (G, K/G, C/G) in one einsum within groups, so the cost
is prod(filter) einsums of N*prod(out)*K*C/G multiply-adds in total. Backward-data scatters into a
zero-padded dx and crops it, so positions that no output reads get a zero gradient.
"""

import itertools

import numpy as np

_SP = "xyz"


def out_size(size: int, filter: int, stride: int, pad: int, dilation: int) -> int:
    """Output length of one spatial dim: floor((size + 2*pad - dilation*(filter-1) - 1)/stride) + 1."""
    return (size + 2 * pad - dilation * (filter - 1) - 1) // stride + 1


def _setup(c, k, groups, spatial, filt, stride, pad, dilation):
    nd = len(spatial)
    if not 1 <= nd <= 3 or not len(filt) == len(stride) == len(pad) == len(dilation) == nd:
        raise ValueError("spatial, filter, stride, pad and dilation need one entry per spatial dim (1-3)")
    if c % groups or k % groups:
        raise ValueError(f"groups={groups} must divide C={c} and K={k}")
    out = tuple(out_size(*a) for a in zip(spatial, filt, stride, pad, dilation))
    if min(out) < 1:
        raise ValueError(f"empty output {out}")
    sp = _SP[:nd]
    taps = []  # (filter index, slices into the padded input) per tap
    for t in itertools.product(*(range(f) for f in filt)):
        sl = tuple(slice(i * d, i * d + s * (o - 1) + 1, s) for i, d, s, o in zip(t, dilation, stride, out))
        taps.append((t, (Ellipsis,) + sl))
    return out, sp, taps


def _grouped_w(w, groups):
    k, cg = w.shape[:2]
    return np.asarray(w, dtype=np.float64).reshape(groups, k // groups, cg, *w.shape[2:])


def _grouped_padded(x, groups, pad):
    """Zero-pad the spatial dims of x (N, C, *spatial) and split channels: (N, G, C/G, *padded)."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    return xp.reshape(x.shape[0], groups, x.shape[1] // groups, *xp.shape[2:])


def conv_fwd(x, w, *, groups, stride, pad, dilation):
    """Forward: x (N, C, *spatial) float64, w (K, C/G, *filter) float64 -> y (N, K, *out) float64."""
    x = np.asarray(x, dtype=np.float64)
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    k, filt = w.shape[0], w.shape[2:]
    if w.shape[1] * groups != c:
        raise ValueError(f"w.shape[1]={w.shape[1]} must be C/G={c}/{groups}")
    out, sp, taps = _setup(c, k, groups, spatial, filt, stride, pad, dilation)
    xp = _grouped_padded(x, groups, pad)
    wg = _grouped_w(w, groups)
    y = np.zeros((n, groups, k // groups) + out)
    for t, sl in taps:
        y += np.einsum(f"ngc{sp},gkc->ngk{sp}", xp[sl], wg[(Ellipsis,) + t], optimize=True)
    return np.ascontiguousarray(y.reshape(n, k, *out))


def conv_bwd_data(dy, w, *, groups, stride, pad, dilation, spatial):
    """Gradient of conv_fwd wrt x: dy (N, K, *out) float64, w (K, C/G, *filter) float64
    -> dx (N, C, *spatial) float64."""
    dy = np.asarray(dy, dtype=np.float64)
    n, k, cg, filt, spatial = dy.shape[0], w.shape[0], w.shape[1], w.shape[2:], tuple(spatial)
    c = cg * groups
    out, sp, taps = _setup(c, k, groups, spatial, filt, stride, pad, dilation)
    if dy.shape != (n, k) + out:
        raise ValueError(f"dy.shape={dy.shape}, expected {(n, k) + out}")
    dyg = dy.reshape(n, groups, k // groups, *out)
    wg = _grouped_w(w, groups)
    dxp = np.zeros((n, groups, cg) + tuple(s + 2 * p for s, p in zip(spatial, pad)))
    for t, sl in taps:
        dxp[sl] += np.einsum(f"ngk{sp},gkc->ngc{sp}", dyg, wg[(Ellipsis,) + t], optimize=True)
    crop = (Ellipsis,) + tuple(slice(p, p + s) for s, p in zip(spatial, pad))
    return np.ascontiguousarray(dxp[crop].reshape(n, c, *spatial))


def conv_bwd_weight(x, dy, *, groups, stride, pad, dilation, filter):
    """Gradient of conv_fwd wrt w: x (N, C, *spatial) float64, dy (N, K, *out) float64
    -> dw (K, C/G, *filter) float64."""
    x, dy = np.asarray(x, dtype=np.float64), np.asarray(dy, dtype=np.float64)
    n, c, spatial, k, filt = x.shape[0], x.shape[1], x.shape[2:], dy.shape[1], tuple(filter)
    out, sp, taps = _setup(c, k, groups, spatial, filt, stride, pad, dilation)
    if dy.shape != (n, k) + out:
        raise ValueError(f"dy.shape={dy.shape}, expected {(n, k) + out}")
    xp = _grouped_padded(x, groups, pad)
    dyg = dy.reshape(n, groups, k // groups, *out)
    dw = np.zeros((groups, k // groups, c // groups) + filt)
    for t, sl in taps:
        dw[(Ellipsis,) + t] = np.einsum(f"ngc{sp},ngk{sp}->gkc", xp[sl], dyg, optimize=True)
    return np.ascontiguousarray(dw.reshape(k, c // groups, *filt))
