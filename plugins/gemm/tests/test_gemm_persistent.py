"""The persistent TMA family against the NumPy float64 reference in Triton's interpreter: every
dtype and layout, flattened (with and without subtiles) and warp-specialised keys, plain and
with a fused epilogue, with more tiles than programs (each program walks several tiles)."""

import pytest

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference
from ck_plugin_gemm.persistent import PersistentGemmKey

LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
DTYPES = ["fp16", "bf16", "fp32"]
# (block_m, block_n, warps, warp_specialize, flatten, subtile): small tiles keep the interpreter fast.
CONFIGS = [(32, 64, 4, False, True, False), (32, 128, 4, False, True, True), (64, 256, 4, False, False, True),
           (64, 64, 4, True, False, False)]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    r.catalog.families["gemm_persistent"].sm_count = 3  # 3 programs: several tiles each
    yield r
    r.catalog.families["gemm_persistent"].sm_count = 132


def _inst(reg, dtype, layout, cfg):
    bm, bn, w, ws, flat, sub = cfg
    return reg.add("gemm_persistent", PersistentGemmKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn,
                                                        block_k=32, num_warps=w, num_stages=3, group_m=2,
                                                        warp_specialize=ws, flatten=flat, subtile=sub))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_matches_reference(reg, dtype, layout):
    for i, cfg in enumerate(CONFIGS):
        inst = _inst(reg, dtype, layout, cfg)
        # 5 x 3 partial tiles over 3 programs, K with a partial last step (leading dimensions
        # stay multiples of 16 bytes, as TMA needs).
        p = reg.problem("gemm", M=5 * cfg[0] - 8, N=3 * cfg[1] - 24, K=80, dtype=dtype, layout=layout)
        assert reg.family(inst).supports(inst.key, p) is None, inst.name
        assert reg.family(inst).grid(inst.key, p) == (3, 1, 1)
        assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=i)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c[0]}x{c[1]}{'_ws' if c[3] else ''}{'_sub' if c[5] else ''}")
def test_fused_epilogue(reg, cfg):
    inst = _inst(reg, "bf16", "rcr", cfg)
    p = reg.problem("gemm", M=3 * cfg[0] + 5, N=2 * cfg[1] + 8, K=64, dtype="bf16", layout="rcr", alpha=0.5,
                    beta=1.0, bias="col", num_d=1, activation="gelu")
    variant = reg.specialized(inst, p)
    assert variant.key.epilogue == p.epilogue
    if cfg[3]:  # warp-specialised: refused (measured slow with a fused epilogue)
        assert "warp-specialised" in reg.family(inst).supports(variant.key, p)
        return
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_invalid_combinations_are_refused():
    from ckcore.arch import load

    fam = Registry("sm_90").catalog.families["gemm_persistent"]
    arch = load("sm_90")
    base = dict(dtype="bf16", layout="rcr", block_m=128, block_n=256, block_k=64, num_warps=4, num_stages=3)
    assert any("flatten" in r for r in fam.check(PersistentGemmKey(**base, warp_specialize=True, flatten=True), arch))
    assert any("subtile" in r for r in fam.check(PersistentGemmKey(**base, warp_specialize=True, flatten=False, subtile=True), arch))
    assert any("subtile needs" in r for r in fam.check(PersistentGemmKey(**{**base, "block_n": 64, "num_warps": 4}, subtile=True), arch))
    # 128x256x64 bf16, 5 stages, whole-tile staging: 212 KB pipeline + 64 KB > 227 KB.
    assert any("shared memory" in r for r in fam.check(PersistentGemmKey(**{**base, "num_warps": 8, "num_stages": 5}), arch))
