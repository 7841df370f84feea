"""The convolution tolerance against the errors real kernels make: fp32 runs on tensor cores as
tf32, whose input rounding errs relative to the products (the magnitude term of
:class:`ckcore.spec.Tolerance`: sqrt(Σ(x·w)²) per output), not to the output (CPU only, NumPy)."""

import numpy as np
import pytest

from ckcore import Registry
from ckcore.measure import compare, magnitude_allowance, reference_allowance


def tf32(a: np.ndarray) -> np.ndarray:
    """``a`` rounded to tf32 (10 mantissa bits, round to nearest even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.fixture(scope="module")
def reg():
    return Registry("sm_90")


def _check(reg, op, p, arrays, out, with_magnitude=True):
    spec = reg.catalog.op(op)
    tol = spec.tolerance(p)
    ref = spec.reference(p, arrays)
    extra = reference_allowance(spec, p, tol, arrays) if with_magnitude else None
    return compare(out, ref, tol.atol, tol.rtol, extra)


@pytest.mark.parametrize("op", ["grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight"])
def test_fp32_allows_tf32_input_rounding_and_no_more(reg, op):
    """A 1×1 depthwise-like problem of reduction K/G = 2 (backward-data) with inputs up to ±8:
    the exact result of tf32-rounded inputs passes only with the magnitude term; the same
    result off by twice the allowance on its largest element fails with it; fp16 and bf16 set
    no magnitude term."""
    p = reg.problem(op, ndim=2, N=8, G=64, C=64, K=128, spatial=[9, 9], filter=[1, 1], stride=[1, 1], pad=[0, 0],
                    dilation=[1, 1], dtype="fp32", layout="nhwgc")
    spec = reg.catalog.op(op)
    rng = np.random.default_rng(0)
    arrays = {n: a * 8.0 for n, a in spec.random_inputs(p, rng).items()}
    out = spec.reference(p, {n: tf32(a) for n, a in arrays.items()})
    assert _check(reg, op, p, arrays, out).passed
    if op == "grouped_conv_bwd_data":  # reduction 2: the output's own tolerance cannot hold tf32's error
        assert not _check(reg, op, p, arrays, out, with_magnitude=False).passed
    tol = spec.tolerance(p)
    allowance = tol.magnitude_rtol * spec.reference(p, {n: a * a for n, a in arrays.items()}) ** 0.5
    wrong = out.copy()
    i = np.unravel_index(np.argmax(allowance), allowance.shape)
    ref = spec.reference(p, arrays)
    wrong[i] = ref[i] + 2 * (allowance[i] + tol.atol + tol.rtol * abs(ref[i]))
    assert not _check(reg, op, p, arrays, wrong).passed
    for dtype in ("fp16", "bf16"):
        q = reg.problem(op, **{**p.to_dict(), "dtype": dtype})
        assert spec.tolerance(q).magnitude_rtol == 0.0


def test_no_magnitude_term_computes_nothing():
    """Where an op sets no magnitude term the reference of absolute values is never computed."""
    from ckcore.spec import Tolerance

    def boom():
        raise AssertionError("computed")

    assert magnitude_allowance(None, None, Tolerance(atol=1e-3, rtol=1e-3), boom) is None
    assert float(magnitude_allowance(None, None, Tolerance(atol=0, rtol=0, magnitude_rtol=0.5), lambda: 16.0)) == 2.0
