"""``float64_recompute`` (the GPU reference of bench and tune) on the CPU: for gemm and the three
conv directions it returns float64 and matches the NumPy float64 reference. (cuDNN checks that
all operands share a dtype; the placeholder tensors of the backward baselines must be float64 too.)"""

import numpy as np
import pytest
import torch

from ckcore import Registry, Settings
from ckcore.bench import float64_recompute

CONV = {"ndim": 2, "N": 2, "G": 2, "C": 4, "K": 6, "spatial": [5, 6], "filter": [3, 3], "stride": [2, 1],
        "pad": [1, 1], "dilation": [1, 1], "dtype": "bf16", "layout": "nhwgc"}


@pytest.mark.parametrize("op, fields", [
    ("gemm", {"M": 5, "N": 7, "K": 9, "dtype": "fp16", "layout": "crr"}),
    ("grouped_conv_fwd", CONV), ("grouped_conv_bwd_data", CONV), ("grouped_conv_bwd_weight", CONV)])
def test_float64_and_matches_reference(op, fields, tmp_path):
    reg = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    spec = reg.catalog.op(op)
    p = spec.problem(**fields)
    arrays = spec.random_inputs(p, np.random.default_rng(0))
    tensors = spec.to_torch(p, arrays, "cpu")
    out = float64_recompute(spec, p, tensors)
    assert out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), spec.reference(p, arrays), rtol=1e-12, atol=1e-12)
