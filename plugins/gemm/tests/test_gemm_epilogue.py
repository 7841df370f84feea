"""Fused epilogues (alpha, beta · C_in, bias per row or column, D tensors, activations) and
batched GEMM against the NumPy float64 reference in Triton's interpreter, and their errors.

Tolerances are the op's (``GemmOperator.tolerance``): the accumulated product's error (atol
growing with sqrt(K), scaled by |alpha|) plus the output dtype's rounding (rtol); C_in, bias and
D are exact in fp32 and every activation has slope <= 1.13, so the epilogue adds nothing to it.
"""

import itertools

import pytest
import torch

from ckcore import InvalidKernelKey, Registry, Settings, UnsupportedProblem
from ckcore.dispatch import launch
from ckcore.testing import assert_matches_reference
from ck_plugin_gemm.epilogue import Activation, Bias, MAX_D, epilogue_name, parse_epilogue
from ck_plugin_gemm.keys import GemmKey
from ck_plugin_gemm.tma import TmaGemmKey

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]
ACTIVATIONS = [a.value for a in Activation]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r.declare("gemm", "default")
    return r


def _epilogue(i: int) -> dict:
    """A different mix of the epilogue's parts for each i."""
    return {"alpha": (1.0, 0.5, -2.0)[i % 3], "beta": (0.0, 1.5, -1.0, 0.0)[i % 4],
            "bias": ("none", "row", "col")[i % 3 - 1], "num_d": i % 3}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_every_activation_and_dtype(reg, dtype, activation):
    i = ACTIVATIONS.index(activation) + DTYPES.index(dtype)
    # Aligned sizes (the a16 tiled or TMA families) and odd ones (the generic tiled family).
    for M, N, K in ((32, 48, 64), (19, 37, 45)):
        p = reg.problem("gemm", M=M, N=N, K=K, dtype=dtype, layout="rcr", activation=activation, **_epilogue(i + M))
        inst = reg.select(p).instance
        assert inst.key.epilogue == p.epilogue, inst.name
        assert_matches_reference(reg, "gemm", p, interpret=True, seed=i)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("bias", ["row", "col"])
def test_every_layout_with_bias(reg, layout, bias):
    p = reg.problem("gemm", M=24, N=40, K=56, dtype="fp16", layout=layout, bias=bias, beta=0.5, num_d=1,
                    activation="silu")
    assert_matches_reference(reg, "gemm", p, interpret=True)


@pytest.mark.parametrize("ws, block_n", [(False, 64), (True, 64), (False, 128), (True, 256)])
def test_tma_family_takes_the_epilogue_and_the_batch(reg, ws, block_n):
    # block_n 128 and 256: the epilogue runs on 2 and 4 column slices (subtiles); N = 328 leaves
    # a partial last tile, and a slice entirely past N.
    inst = reg.add("gemm_tma", TmaGemmKey(dtype="bf16", layout="rcr", block_m=64, block_n=block_n, block_k=32,
                                          num_warps=4, num_stages=3, warp_specialize=ws))
    for fields in ({"bias": "col", "activation": "gelu"}, {"alpha": 2.0, "num_d": 2, "batch": 3, "activation": "relu"},
                   {"batch": 2}):
        p = reg.problem("gemm", M=40, N=328, K=96, dtype="bf16", layout="rcr", **fields)
        variant = reg.specialized(inst, p)
        if ws and p.epilogue != "none":  # measured slow on the GPU: refused, with the reason
            assert "plain epilogues only" in reg.family(variant).supports(variant.key, p)
            continue
        assert variant.key.epilogue == p.epilogue and variant.key.batched == (p.batch > 1)
        assert reg.family(variant).supports(variant.key, p) is None
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_batched(reg, dtype, layout):
    for fields in ({"batch": 3}, {"batch": 2, "stride_b": 0, "bias": "col", "activation": "gelu_tanh"}):
        p = reg.problem("gemm", M=20, N=32, K=48, dtype=dtype, layout=layout, **fields)
        assert_matches_reference(reg, "gemm", p, interpret=True)


def test_batched_with_padded_output_stride(reg):
    p = reg.problem("gemm", M=16, N=32, K=32, dtype="fp16", layout="rrr", batch=3, stride_c=16 * 32 + 64, beta=1.0)
    assert p.stride_c == 16 * 32 + 64
    assert_matches_reference(reg, "gemm", p, interpret=True)


def test_batched_dispatch_from_tensors_matches_torch(reg):
    op = reg.catalog.op("gemm")
    a = torch.randn(4, 24, 32, dtype=torch.float16)
    w = torch.randn(40, 32, dtype=torch.float16)  # one nn.Linear weight shared by the batch
    bias = torch.randn(40, dtype=torch.float16)
    p = op.problem_from_tensors(a=a, b=w.t(), bias="col", activation="gelu")
    assert (p.batch, p.stride_b, p.layout.value) == (4, 0, "rcr")
    c = launch(reg, "gemm", p, {"a": a, "b": w.t(), "bias": bias}, interpret=True)
    want = torch.nn.functional.gelu(a.float() @ w.float().t() + bias.float())
    torch.testing.assert_close(c.float(), want, rtol=2e-3, atol=2e-2)


def test_torch_baseline_matches_reference(reg):
    # The bench compares ckcore with this unfused torch sequence; it must compute the same thing.
    import numpy as np

    op = reg.catalog.op("gemm")
    p = reg.problem("gemm", M=8, N=16, K=24, dtype="fp32", layout="rrr", alpha=0.5, beta=2.0, bias="row", num_d=2,
                    activation="tanh", batch=2)
    arrays = op.random_inputs(p, np.random.default_rng(0))
    tensors = {n: torch.from_numpy(a) for n, a in arrays.items()}
    tensors["c"] = torch.empty(p.tensor_shapes()["c"], dtype=torch.float64)
    got = op.torch_baseline(p, tensors)().numpy()
    np.testing.assert_allclose(got, op.reference(p, arrays), rtol=1e-12, atol=1e-12)


def test_plain_and_variant_instances_refuse_the_other_problem(reg):
    plain = reg.problem("gemm", M=32, N=32, K=32, dtype="fp16", layout="rcr")
    fused = reg.problem("gemm", M=32, N=32, K=32, dtype="fp16", layout="rcr", bias="col", activation="relu")
    inst = reg.select(plain).instance
    fam = reg.family(inst)
    assert "epilogue none != the problem's bcol_relu" in fam.supports(inst.key, fused)
    variant = reg.specialized(inst, fused)
    assert variant.name == inst.name + "_bcol_relu"
    assert "epilogue bcol_relu != the problem's none" in fam.supports(variant.key, plain)
    # A plain problem runs the declared instance itself; its name and identity are unchanged.
    assert reg.specialized(inst, plain) is inst and "_none" not in inst.name


def test_epilogue_identifiers_round_trip():
    names = set()
    for dq, scale, c_in, bias, num_d, act in itertools.product(("none", "tensor", "row"), (False, True), (False, True),
                                                              Bias, range(MAX_D + 1), Activation):
        name = epilogue_name(dequant=dq, scale=scale, c_in=c_in, bias=bias, num_d=num_d, activation=act)
        assert parse_epilogue(name) == {"dequant": dq, "scale": scale, "c_in": c_in, "bias": bias, "num_d": num_d,
                                        "activation": act}
        names.add(name)
    assert len(names) == 3 * 2 * 2 * 3 * (MAX_D + 1) * len(Activation)
    for bad in ("", "identity", "gelu_alpha", "d0", "d5", "bcol_brow", "alpha__beta", "relu_relu", "import os",
                "sten_srow", "alpha_sten"):
        assert parse_epilogue(bad) is None, bad
        with pytest.raises(InvalidKernelKey, match="epilogue"):
            GemmKey(dtype="fp16", layout="rcr", block_m=64, block_n=64, block_k=32, epilogue=bad)


@pytest.mark.parametrize("fields, field", [
    ({"activation": "swish"}, "activation"),
    ({"bias": "both"}, "bias"),
    ({"num_d": MAX_D + 1}, "num_d"),
    ({"alpha": float("nan")}, "alpha"),
    ({"beta": float("inf")}, "beta"),
    ({"batch": 0}, "batch"),
    ({"stride_a": 100}, "stride_a"),  # a stride with batch 1
    ({"batch": 2, "stride_c": 100}, "stride_c"),  # matrices of C would overlap (M * ldc = 256)
    ({"batch": 2, "stride_b": -1}, "stride_b"),
])
def test_bad_epilogue_and_batch_fields(reg, fields, field):
    with pytest.raises(UnsupportedProblem, match=field):
        reg.problem("gemm", M=16, N=16, K=16, dtype="fp16", layout="rrr", **fields)


def test_bad_epilogue_tensors(reg):
    p = reg.problem("gemm", M=16, N=24, K=32, dtype="fp16", layout="rrr", bias="row", beta=1.0)
    a, b = torch.randn(16, 32, dtype=torch.float16), torch.randn(32, 24, dtype=torch.float16)
    c_in, bias = torch.randn(16, 24, dtype=torch.float16), torch.randn(16, dtype=torch.float16)
    with pytest.raises(UnsupportedProblem, match="bias"):  # missing
        launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="bias.shape"):  # a column bias for a row problem
        launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in, "bias": torch.randn(24, dtype=torch.float16)}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="c_in.stride"):
        launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in.t().contiguous().t(), "bias": bias}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="d0"):  # a tensor the epilogue does not read
        launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in, "bias": bias, "d0": c_in}, interpret=True)
    with pytest.raises(UnsupportedProblem, match="e0"):
        launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in, "bias": bias, "e0": c_in}, interpret=True)
    out = launch(reg, "gemm", p, {"a": a, "b": b, "c_in": c_in, "bias": bias}, interpret=True)
    want = a.float() @ b.float() + c_in.float() + bias.float()[:, None]
    torch.testing.assert_close(out.float(), want, rtol=2e-3, atol=2e-2)


def test_a_variant_that_fails_to_compile_gives_way_to_the_next(tmp_path, monkeypatch):
    # On the GPU a derived variant can need more shared memory than its plain tile (an epilogue
    # tensor converted through shared memory); dispatch must then run the next ranked instance.
    from ckcore import CompileError

    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    r.declare("gemm", "default")
    p = r.problem("gemm", M=32, N=48, K=64, dtype="fp16", layout="rcr", beta=1.0, activation="relu")
    first = r.select(p).instance
    real_load = r.load

    def load(inst, *, interpret=False):
        if inst.name == first.name:
            raise CompileError(inst.name, "sm_90", "needs 245784 B of shared memory")
        return real_load(inst, interpret=interpret)

    monkeypatch.setattr(r, "load", load)
    a, b, c_in = (torch.randn(*s, dtype=torch.float16) for s in ((32, 64), (48, 64), (32, 48)))
    out = launch(r, "gemm", p, {"a": a, "b": b.t(), "c_in": c_in}, interpret=True)
    torch.testing.assert_close(out.float(), torch.relu(a.float() @ b.float().t() + c_in.float()), rtol=2e-3, atol=2e-2)
    assert r.select(p).instance.name != first.name
    assert r.compile_failure(first.name) and "failed to compile" in r.select(p).rejected[first.name]
