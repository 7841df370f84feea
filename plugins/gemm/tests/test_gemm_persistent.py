"""The persistent TMA family against the NumPy float64 reference in Triton's interpreter: every
dtype and layout, flattened (with and without subtiles) and warp-specialised keys, plain and
with a fused epilogue, with more tiles than programs (each program walks several tiles)."""

import pytest
import torch

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference, kernel_parameters
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


# Stream-K tails over 3 programs (reg's sm_count): (M tiles, N tiles, K) giving 8 tiles (3
# data-parallel, 5 shared out, some split between programs), 2 tiles (fewer than the programs:
# every tile split) and 9 tiles (whole waves: no tail).
SK_SHAPES = [(4, 2, 80), (1, 2, 200), (3, 3, 48)]


def _sk_inst(reg, dtype, layout, bm=32, bn=64, sub=False, flat=True):
    return reg.add("gemm_persistent", PersistentGemmKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=32,
                                                        num_warps=4, num_stages=3, group_m=2, flatten=flat,
                                                        subtile=sub, stream_k=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_stream_k_tail_matches_reference(reg, dtype, layout):
    from ck_plugin_gemm.schedule import dp_tiles

    inst = _sk_inst(reg, dtype, layout, flat=layout != "ccr")
    for i, (tm, tn, k) in enumerate(SK_SHAPES):
        p = reg.problem("gemm", M=tm * 32 - 8, N=tn * 64 - 8, K=k, dtype=dtype, layout=layout)
        fam = reg.family(inst)
        assert fam.supports(inst.key, p) is None
        assert fam.grid(inst.key, p) == (3, 1, 1)
        assert dp_tiles(tm * tn, 3) == {8: 3, 2: 0, 9: 9}[tm * tn]
        # Twice on the same workspace: the arrival counters must be back at zero after a run.
        for seed in (i, i + 10):
            assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True, seed=seed)


@pytest.mark.parametrize("bn", [128, 256])
def test_stream_k_tail_with_fused_epilogue_and_subtiles(reg, bn):
    """The subtiled store in two and four 64-column slices, on the whole-tile and the combining
    branch, with a fused epilogue (alpha = 0.5: applied twice, it would show)."""
    inst = _sk_inst(reg, "bf16", "rcr", bm=32, bn=bn, sub=True)
    p = reg.problem("gemm", M=4 * 32 - 8, N=2 * bn - 8, K=80, dtype="bf16", layout="rcr", alpha=0.5, beta=1.0,
                    bias="col", num_d=1, activation="gelu")
    variant = reg.specialized(inst, p)
    assert variant.key.stream_k and variant.key.epilogue == p.epilogue
    assert_matches_reference(reg, "gemm", p, instance=inst.name, interpret=True)


def test_stream_k_refusals_and_schedule():
    from ckcore.arch import load
    from ck_plugin_gemm.schedule import dp_tiles

    fam = Registry("sm_90").catalog.families["gemm_persistent"]
    arch = load("sm_90")
    base = dict(layout="rcr", block_m=128, block_n=128, block_k=64, num_warps=4, num_stages=3, stream_k=True)
    assert not fam.check(PersistentGemmKey(dtype="bf16", **base), arch)
    assert any("combined in fp32" in r for r in fam.check(PersistentGemmKey(dtype="int8", **{**base, "block_k": 128}), arch))
    assert any("stream_k" in r for r in fam.check(PersistentGemmKey(dtype="bf16", **base, warp_specialize=True,
                                                                    flatten=False), arch))
    assert any("stream_k" in r for r in fam.check(PersistentGemmKey(dtype="bf16", **base, programs_per_sm=2), arch))
    # 192 tiles of 128 x 256 on 132 SMs (M = 1024, N = 6144): no whole wave before the tail;
    # 320 tiles: one data-parallel wave, 188 shared out; 264: two whole waves, no tail.
    assert (dp_tiles(192, 132), dp_tiles(320, 132), dp_tiles(264, 132)) == (0, 132, 264)
    key = PersistentGemmKey(dtype="bf16", **base)
    p = Registry("sm_90").problem("gemm", M=1024, N=1024, K=4096, dtype="bf16", layout="rcr")
    assert fam.grid(key, p) == (132, 1, 1)  # 64 tiles: the K steps of each shared by about two programs
    assert fam.workspaces(key, p) == {"partials": 132 * 2 * 128 * 128 * 4, "counters": 64 * 4}
    assert fam.pair_features(key, p, arch)["sk_tile_share"] == 1.0
    assert fam.features(key)["stream_k"] == 1.0
    # Keys without a tail carry no stream-K features (models trained before them still match).
    plain = PersistentGemmKey(dtype="bf16", **{**base, "stream_k": False})
    assert "stream_k" not in fam.features(plain) and "sk_tile_share" not in fam.pair_features(plain, p, arch)


# Split tails over 8 programs (the fixture's sm_count is 3; these tests set 8): (M tiles, N tiles)
# giving 9 tiles (one wave, one tile split in two), 10 (two split) and 12 (four: half a wave).
# Half-width tiles of 32 (block_n 64) and 64 columns (128, subtiled: one slice).
TS_SHAPES = [(3, 3), (5, 2), (4, 3)]


def _ts_inst(reg, dtype, layout, bn=64, sub=False, flat=True):
    return reg.add("gemm_persistent", PersistentGemmKey(dtype=dtype, layout=layout, block_m=32, block_n=bn, block_k=32,
                                                        num_warps=4, num_stages=3, group_m=2, flatten=flat,
                                                        subtile=sub, tail_split=True))


@pytest.fixture
def reg4(reg):
    reg.catalog.families["gemm_persistent"].sm_count = 8
    yield reg
    reg.catalog.families["gemm_persistent"].sm_count = 3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_split_tail_matches_reference(reg4, dtype, layout):
    inst = _ts_inst(reg4, dtype, layout, flat=layout != "ccr")
    fam = reg4.family(inst)
    for i, (tm, tn) in enumerate(TS_SHAPES):
        p = reg4.problem("gemm", M=tm * 32 - 8, N=tn * 64 - 24, K=80, dtype=dtype, layout=layout)
        assert fam.supports(inst.key, p) is None, (tm, tn)
        assert fam.grid(inst.key, p) == (8, 1, 1)
        assert_matches_reference(reg4, "gemm", p, instance=inst.name, interpret=True, seed=i)


@pytest.mark.parametrize("bn,sub", [(128, True), (256, True), (128, False)])
def test_split_tail_with_fused_epilogue_and_subtiles(reg4, bn, sub):
    """The halves' store in one and two 64-column slices and whole, with a fused epilogue whose
    column bias and D tensor must land on the right half (two whole waves: 17 tiles of 8
    programs; after one, fused epilogues are refused)."""
    inst = _ts_inst(reg4, "bf16", "rcr", bn=bn, sub=sub)
    fields = dict(dtype="bf16", layout="rcr", alpha=0.5, beta=1.0, bias="col", num_d=1, activation="gelu")
    p = reg4.problem("gemm", M=17 * 32 - 8, N=bn - 8, K=80, **fields)
    variant = reg4.specialized(inst, p)
    assert variant.key.tail_split and variant.key.epilogue == p.epilogue
    assert reg4.family(inst).supports(variant.key, p) is None
    assert_matches_reference(reg4, "gemm", p, instance=inst.name, interpret=True)
    one_wave = reg4.problem("gemm", M=9 * 32 - 8, N=bn - 8, K=80, **fields)
    assert "fused epilogue" in reg4.family(inst).supports(reg4.specialized(inst, one_wave).key, one_wave)


def test_split_tail_over_several_halves_per_program(reg4, monkeypatch):
    """The kernel itself for any tail: 15 tiles on 8 programs (one wave, 7 tiles split into 14
    halves, so most programs run two halves and the epilogue's recomputed coordinates advance),
    with the wave rule of ``supports`` lifted; and the launch arguments name the whole waves."""
    from ck_plugin_gemm.persistent import PersistentGemm
    from ck_plugin_gemm.tma import TmaGemm

    monkeypatch.setattr(PersistentGemm, "supports", TmaGemm.supports)
    inst = _ts_inst(reg4, "bf16", "rcr", bn=128, sub=True)
    p = reg4.problem("gemm", M=5 * 32 - 8, N=3 * 128 - 24, K=80, dtype="bf16", layout="rcr", bias="col", num_d=1,
                     activation="gelu")
    variant = reg4.specialized(inst, p)
    fam = reg4.family(variant)
    # PROGRAMS, DP_TILES (one wave), the host descriptors (the tail's B and C are half as wide), UPCAST
    tensors = {n: torch.zeros(s, dtype=torch.bfloat16) for n, s in (("a", (p.M, p.K)), ("b", (p.N, p.K)), ("c", (p.M, p.N)))}
    args = dict(zip(fam.core_signature(variant.key), fam.core_args(variant.key, p, tensors, interpret=False)))
    assert (args["PROGRAMS"], args["DP_TILES"], args["UPCAST"]) == (8, 8, False)
    blocks = {n: (list(d.shape), list(d.block_shape)) for n, d in args.items() if n.endswith(("_hd", "_hd_t"))}
    assert blocks == {"a_hd": ([p.M, p.K], [32, 32]), "b_hd": ([p.N, p.K], [128, 32]), "c_hd": ([p.M, p.N], [32, 64]),
                      "b_hd_t": ([p.N, p.K], [64, 32]), "c_hd_t": ([p.M, p.N], [32, 64])}
    assert_matches_reference(reg4, "gemm", p, instance=inst.name, interpret=True)


def test_split_tail_refusals_and_features():
    from ckcore.arch import load

    fam = Registry("sm_90").catalog.families["gemm_persistent"]
    arch = load("sm_90")
    base = dict(dtype="bf16", layout="rcr", block_m=128, block_n=256, block_k=64, num_warps=8, num_stages=3,
                subtile=True, tail_split=True)
    key = PersistentGemmKey(**base)
    assert key.name.endswith("_sub_ts") and not fam.check(key, arch)
    assert any("tail_split" in r for r in fam.check(PersistentGemmKey(**base, stream_k=True), arch))
    assert any("tail_split" in r for r in fam.check(PersistentGemmKey(**{**base, "num_warps": 4, "subtile": False},
                                                                      warp_specialize=True, flatten=False), arch))
    reg = Registry("sm_90")
    # 3000 x 2000: 24 x 8 = 192 tiles, one wave of 132 and 60 split; 1024 x 14336: 448 tiles, three
    # waves and 52; 1024 x 1024: 32 tiles, no whole wave; 2048 x 4096: 16 x 16 = 256 tiles, a tail of
    # 124 (more than half a wave); 4224 x 1024: 132 tiles, one whole wave only; 4096 x 6144: 768
    # tiles, five whole waves before the tail.
    for m, n in [(3000, 2000), (1024, 14336)]:
        assert fam.supports(key, reg.problem("gemm", M=m, N=n, K=1000, dtype="bf16", layout="rcr")) is None
    for m, n in [(1024, 1024), (2048, 4096), (4224, 1024), (4096, 6144)]:
        assert "tail_split needs" in fam.supports(key, reg.problem("gemm", M=m, N=n, K=64, dtype="bf16", layout="rcr"))
    p = reg.problem("gemm", M=3000, N=2000, K=1000, dtype="bf16", layout="rcr")
    assert fam._whole_wave_tiles(key, p) == 132
    tensors = {n: torch.empty(s, dtype=torch.bfloat16) for n, s in (("a", (p.M, p.K)), ("b", (p.N, p.K)), ("c", (p.M, p.N)))}
    args = dict(zip(fam.core_signature(key), fam.core_args(key, p, tensors, interpret=False)))
    assert (args["PROGRAMS"], args["DP_TILES"], args["UPCAST"]) == (132, 132, False)
    # The estimate spreads the work evenly (optimistic: see PersistentGemm.estimate_ms).
    dev = arch.device("NVIDIA H200")
    assert fam.estimate_ms(key, p, arch, dev) < fam.estimate_ms(PersistentGemmKey(**{**base, "tail_split": False}), p, arch, dev)
    assert fam.pair_features(key, p, arch)["ts_tile_share"] == 60 / 192
    assert fam.features(key)["tail_split"] == 1.0
    plain = PersistentGemmKey(**{**base, "tail_split": False})
    assert "tail_split" not in fam.features(plain) and "ts_tile_share" not in fam.pair_features(plain, p, arch)


@pytest.mark.parametrize("layout,epilogue,ws,host", [("rcr", "none", False, True), ("rcr", "bcol_gelu", False, True),
                                                     ("crr", "none", False, True), ("crr", "bcol_gelu", False, False),
                                                     ("ccr", "brow", False, False), ("rcr", "none", True, False)])
def test_host_descriptors_rule_matches_the_template(layout, epilogue, ws, host):
    """The key's ``host_descriptors`` and the rendered kernel agree: descriptor parameters made on
    the host, or descriptors made in the kernel (warp-specialised, or column-major A with a fused
    epilogue), and the signature names them in the kernel's order."""
    from ckcore.arch import load
    from ckcore.render import render

    fam = Registry("sm_90").catalog.families["gemm_persistent"]
    key = PersistentGemmKey(dtype="bf16", layout=layout, block_m=128, block_n=128, block_k=64, num_warps=4 if ws else 8,
                            num_stages=3, warp_specialize=ws, flatten=not ws, epilogue=epilogue)
    assert key.host_descriptors is host
    src = render(fam, key, load("sm_90"))
    assert ("make_tensor_descriptor" not in src) is host
    params = kernel_parameters(src, key.name)
    assert params == list(fam.signature(key))
    assert all(t.startswith("tensordesc<bf16[") for n, t in fam.signature(key).items() if n.endswith("_hd")) and \
        (("a_hd" in params) is host)


def test_host_descriptors_rule_matches_the_template_over_the_full_set():
    """As above, for every full-set persistent key of every dtype, plain and with a fused
    bias + gelu (per-problem epilogue variants): the template and ``host_descriptors`` agree,
    and the signature names the kernel's parameters in order."""
    import attrs

    from ckcore.arch import load
    from ckcore.render import render

    reg = Registry("sm_90")
    fam = reg.catalog.families["gemm_persistent"]
    arch = load("sm_90")
    seen = set()
    for inst in reg.declare("gemm", "full"):
        if inst.family != "gemm_persistent":
            continue
        for epilogue in ("none", "bcol_gelu"):
            key = attrs.evolve(inst.key, epilogue=epilogue)
            if fam.check(key, arch):
                continue
            src = render(fam, key, arch)
            params = kernel_parameters(src, key.name)
            assert params == list(fam.signature(key)), key.name
            assert ("a_hd" in params) is key.host_descriptors is ("make_tensor_descriptor" not in src), key.name
            seen.add(key.host_descriptors)
    assert seen == {True, False}
