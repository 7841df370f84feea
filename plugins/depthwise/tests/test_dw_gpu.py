"""Direct depthwise kernels on the GPU against the NumPy float64 reference (device tool).

The registries build into ``CKCORE_CACHE_DIR`` where it is set (a cache that ``ckcore build``
filled first is reused: entries are content-addressed), else into a fresh temporary folder, with
``CKCORE_BUILD_WORKERS`` or one process per CPU. With 16 processes and a fresh folder, building the
three directions' default sets took most of a 240 s call on a 64-core host (twenty-first session).
"""

import os

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from ckcore import Registry, Settings  # noqa: E402
from ckcore.dispatch import launch  # noqa: E402
from ckcore.testing import assert_matches_reference  # noqa: E402

OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")
CASES = {
    "mbv2_like": dict(ndim=2, N=4, G=96, C=96, K=96, spatial=[28, 28], filter=[3, 3], stride=[2, 2], pad=[1, 1], dilation=[1, 1]),
    "convnext_like": dict(ndim=2, N=2, G=64, C=64, K=128, spatial=[20, 20], filter=[7, 7], stride=[1, 1], pad=[3, 3], dilation=[1, 1]),
    # Multiplier one, 7x7, 5x5 and 1-D 31 taps: every sliding-window tile and taps-per-step count.
    "convnext_m1": dict(ndim=2, N=2, G=128, C=128, K=128, spatial=[17, 23], filter=[7, 7], stride=[1, 1], pad=[3, 3], dilation=[1, 1]),
    "effnet_5x5s2": dict(ndim=2, N=2, G=64, C=64, K=64, spatial=[19, 21], filter=[5, 5], stride=[2, 2], pad=[2, 2], dilation=[1, 1]),
    "conformer_d1": dict(ndim=1, N=5, G=64, C=64, K=64, spatial=[150], filter=[31], stride=[1], pad=[15], dilation=[1]),
    "conformer_like": dict(ndim=1, N=4, G=128, C=128, K=128, spatial=[200], filter=[31], stride=[1], pad=[15], dilation=[2]),
    "x3d_like": dict(ndim=3, N=2, G=48, C=48, K=48, spatial=[6, 14, 14], filter=[3, 3, 3], stride=[1, 1, 1], pad=[1, 1, 1], dilation=[1, 1, 1]),
    # 108 channels (X3D): not 16-divisible, so the v4 instances (4-element vectors) serve it.
    # Multiplier two at column stride 2 (the _m2 windows compiled for it, the tap-by-tap backward-data
    # _m2 kernels' stride phases) and 1-D with 40 channels (channel blocks past the last channel).
    "m2_s2": dict(ndim=2, N=3, G=48, C=48, K=96, spatial=[17, 19], filter=[3, 3], stride=[2, 2], pad=[1, 1], dilation=[1, 1]),
    "m2_1d": dict(ndim=1, N=4, G=40, C=40, K=80, spatial=[37], filter=[5], stride=[1], pad=[2], dilation=[1]),
    "x3d_108": dict(ndim=3, N=2, G=108, C=108, K=108, spatial=[5, 12, 12], filter=[3, 3, 3], stride=[1, 2, 2], pad=[1, 1, 1], dilation=[1, 1, 1]),
}


def _registry(tmp_path_factory, name):
    """An sm_90 registry on the environment's cache, or a fresh one; see the module docstring."""
    env = Settings.from_env()
    cache = env.cache_dir or tmp_path_factory.mktemp(name)
    return Registry("sm_90", settings=Settings(cache_dir=cache))


def _build(r):
    r.build(max_workers=Settings.from_env().workers or os.cpu_count(), progress=False)


def layout(ndim, cl):
    spatial = "dhw"[3 - ndim:]
    return f"n{spatial}gc" if cl else f"ngc{spatial}"


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = _registry(tmp_path_factory, "c")
    for op in OPS:
        r.declare(op, "default")
    _build(r)
    return r


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("cl", [True, False], ids=["cl", "cf"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_supporting_depthwise_instance(reg, op, dtype, cl, name):
    fields = CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], cl))
    dw = [r.instance for r in reg.select(p).ranked if r.instance.family.startswith("dw_")]
    assert dw
    for inst in dw:
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=False, seed=len(inst.name))


def test_bwd_weight_is_bitwise_deterministic(reg):
    op = "grouped_conv_bwd_weight"
    p = reg.problem(op, **CASES["mbv2_like"], dtype="bf16", layout="nhwgc")
    spec = reg.catalog.op(op)
    tensors = spec.random_tensors(p, 0, "cuda")
    split = [r.instance for r in reg.select(p).ranked if getattr(r.instance.key, "split", 1) > 1]
    assert split
    for inst in split[:3]:
        outs = [launch(reg, op, p, dict(tensors), instance=inst.name).clone() for _ in range(5)]
        assert all(torch.equal(outs[0], o) for o in outs[1:]), inst.name


def _window_bwd_weight(reg, fields, p, dtype):
    """dw_win_bwd_weight instances beyond the default set's for ``p`` (4-column tiles, ``v4`` where
    the channels are not a multiple of 16, any multiplier, stride and dilation): three (tile, taps
    per step) pairs, a 4-column tile with two filter rows per program (where the filter has two)
    and a tree-summed second stage; split 16 where the rows allow (else the most they allow; the
    tree's rounded down to a power of two)."""
    d, h, _ = p.as_3d()["out"]
    access = "a16" if fields["C"] % 16 == 0 else "v4"
    m2 = fields["K"] == 2 * fields["G"]  # the multiplier-two windows (i32 where a16 does not apply)
    out = []
    for (bh, bw, bc, w), steps, extra in [((8, 4, 64, 2), 3, {}), ((8, 8, 64, 2), 7, {}), ((16, 8, 32, 2), 3, {}),
                                         ((16, 4, 32, 2), 3, {"filter_rows": 2}),
                                         ((8, 8, 64, 2), 3, {"tree_reduce": True})]:
        split = max(1, min(16, -(-p.N * d * h // bh)))
        if extra.get("tree_reduce"):
            split = 1 << (split.bit_length() - 1)  # a power of two
        if extra.get("filter_rows", 1) > p.as_3d()["filter"][1]:
            continue
        out.append(reg.add("dw_win_bwd_weight", {
            "dtype": dtype, "channels_last": True, "block_p": bh * bw, "block_h": bh, "block_w": bw, "block_c": bc,
            "num_warps": w, "access": "i32" if m2 and fields["C"] % 16 else access,
            "multiplier_one": fields["K"] == fields["G"], "multiplier_two": m2, "unroll": steps,
            "stride_w": fields["stride"][-1], "dilation_w": fields["dilation"][-1], "split": split, **extra}))
    return out


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_window_backward_weight(reg, dtype, name):
    """Sliding-window backward-weight kernels beyond the default set's (which the test above
    covers) against the reference on every case, channels-last, among them two filter rows per
    program and the tree-summed second stage (``_m2`` on the K/G = 2 cases); and bitwise the same
    over repeated runs."""
    op = "grouped_conv_bwd_weight"
    fields = CASES[name]
    p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    for inst in _window_bwd_weight(reg, fields, p, dtype):
        assert reg.family(inst).supports(inst.key, p) is None, inst.name
        assert_matches_reference(reg, op, p, instance=inst.name, interpret=False, seed=len(inst.name))
    if dtype == "bf16":
        tensors = reg.catalog.op(op).random_tensors(p, 0, "cuda")
        outs = [launch(reg, op, p, dict(tensors), instance=inst.name).clone() for _ in range(3)]
        assert all(torch.equal(outs[0], o) for o in outs[1:]), inst.name


# Grouped problems for the tensor-core windows (gw_win_fwd): C/G 4, 8, 16, 32, stride 1 and 2,
# 1-D with a 5-tap filter (a step of 3 taps and two single ones), 3-D, a partial channel block,
# ragged row and column tiles.
GROUPED_CASES = {
    # N·Do·Ho >= 128 output rows, so every tile's rows fit (the family refuses fewer rows than a tile)
    "resnext_cg4": dict(ndim=2, N=10, G=32, C=128, K=128, spatial=[14, 15], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1]),
    "resnext_cg8_s2": dict(ndim=2, N=17, G=32, C=256, K=256, spatial=[15, 14], filter=[3, 3], stride=[2, 2], pad=[1, 1], dilation=[1, 1]),
    "resnext_cg32": dict(ndim=2, N=20, G=8, C=256, K=256, spatial=[7, 7], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1]),
    "cg16_g3": dict(ndim=2, N=15, G=3, C=48, K=48, spatial=[9, 11], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1]),
    "resnext3d_cg8": dict(ndim=3, N=4, G=8, C=64, K=64, spatial=[4, 8, 9], filter=[3, 3, 3], stride=[1, 1, 1], pad=[1, 1, 1], dilation=[1, 1, 1]),
    "cg16_1d_k5": dict(ndim=1, N=130, G=6, C=96, K=96, spatial=[50], filter=[5], stride=[1], pad=[2], dilation=[1]),
}


@pytest.fixture(scope="module")
def gw_reg(tmp_path_factory):
    """A registry of the tensor-core grouped windows only: the default sets of the three directions."""
    r = _registry(tmp_path_factory, "gw")
    fwd = r.catalog.families["gw_win_fwd"]
    for key in fwd.kernel_sets()["default"](r.arch):
        r.add(fwd, key)
    for name in ("gw_win_bwd_data", "gw_win_bwd_weight"):
        fam = r.catalog.families[name]
        for key in fam.kernel_sets()["default"](r.arch):
            r.add(fam, key)
    _build(r)
    return r


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("op,name", [(op, name) for op in OPS for name in sorted(GROUPED_CASES)
                                     if op != "grouped_conv_bwd_data" or set(GROUPED_CASES[name]["stride"]) == {1}])
def test_every_grouped_window_instance(gw_reg, op, name, dtype):
    """Every default gw_win_fwd, gw_win_bwd_data (unit-stride cases: those windows are
    unit-stride) and gw_win_bwd_weight instance that supports the problem, against the reference."""
    fields = GROUPED_CASES[name]
    p = gw_reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
    cands, _ = gw_reg.candidates(p)
    assert cands
    for c in cands:
        assert_matches_reference(gw_reg, op, p, instance=c.instance.name, interpret=False, seed=len(c.instance.name))
