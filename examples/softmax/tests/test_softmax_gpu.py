"""The example plugin on the GPU: every default instance against the NumPy reference."""

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore.testing import assert_matches_reference, instances_of  # noqa: E402


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_every_instance_on_gpu(ck_registry, dtype):
    ck_registry.declare("softmax")
    for inst in instances_of(ck_registry, "softmax"):
        if inst.key.dtype.value != dtype:
            continue
        cols = min(inst.key.block_n, 3000) - 3 if inst.key.single_pass else 3 * inst.key.block_n + 5
        p = ck_registry.problem("softmax", rows=300, cols=cols, dtype=dtype)
        assert_matches_reference(ck_registry, "softmax", p, instance=inst.name, interpret=False)
