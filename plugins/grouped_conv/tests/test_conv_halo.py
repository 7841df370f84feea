"""The halo families (``conv_halo_fwd``, ``conv_halo_bwd_data``: Gluon, stride 1, channels-last).

Gluon kernels do not run in Triton's interpreter, so on the CPU one bf16 instance of each channel
width per op is compiled for sm_90a and its parameters compared with the family's signature, the
registry must refuse the families where kernels are interpreted, and ``check`` / ``supports`` must
refuse what the kernel does not implement. On the GPU (marker ``gpu``) every full-set instance that
supports a case runs against the NumPy float64 reference: groups of 40 and 64 channels, several
column blocks, partial patches, padding wider than the halo, a one-column filter, width dilation,
depth taps (inside and outside the input), more tiles than programs (group switches and depth-row
carries inside a program), and keys beyond the sets: a 5-row filter (25 resident taps) and height
dilation 2 (a 4-row tail), and merged groups (4-16 channels per group, block-diagonal filters). The
backward-weight family likewise, splits 1, 4, 16 and 64 (the last two summed in two levels), merged
groups included (the diagonal blocks of each group block's tile stored)."""

import json
import math

import attrs
import pytest
import torch

from ckcore import Registry, Settings
from ckcore.testing import assert_matches_reference, instances_of, kernel_parameters
from ck_plugin_grouped_conv.halo import ConvHaloFwdKey

from cases import case, layout

FAMILIES = {"grouped_conv_fwd": "conv_halo_fwd", "grouped_conv_bwd_data": "conv_halo_bwd_data"}
REGNET = case(2, 2, 6, 240, 240, (14, 14), 3, pad=1)


def _problem(reg, op, fields, dtype="bf16", channels_last=True):
    return reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], channels_last))


@pytest.mark.parametrize("op", sorted(FAMILIES))
def test_default_set(reg, op):
    insts = instances_of(reg, op, FAMILIES[op])
    assert {i.key.dtype.value for i in insts} == {"fp16", "bf16"}
    assert {i.key.block_n for i in insts} == {32, 64}


@pytest.mark.parametrize("op", sorted(FAMILIES))
def test_compiles_for_sm90(reg, op):
    """The bf16 default instances of both channel widths (64 and 32: 128- and 64-byte swizzle)
    compile for sm_90a (CPU) with the parameters the signature names, within the family's
    shared-memory bound, as one warpgroup (each compile takes seconds: fp16 differs only in type)."""
    insts = [i for i in instances_of(reg, op, FAMILIES[op]) if i.key.dtype.value == "bf16"]
    insts = [min((i for i in insts if i.key.block_n == bn), key=lambda i: i.name) for bn in (32, 64)]
    report = reg.build(max_workers=1, progress=False, instances=insts)
    assert not report.failed, report.failed
    for inst in insts:
        job = reg.job(inst)
        assert kernel_parameters(job.source, inst.name) == list(reg.family(inst).signature(inst.key))
        files = reg.cache.lookup(reg.fingerprint(inst)).files
        meta = json.loads(files["kernel.json"].read_text())
        assert meta["shared"] <= inst.key.smem_bytes() <= reg.arch.smem_per_block_bytes
        assert meta["num_warps"] == 4 and ".target sm_90a" in files["kernel.ptx"].read_text()


def test_refused_where_kernels_are_interpreted(tmp_path):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path, interpret=True))
    r.declare("grouped_conv_fwd", "default")
    p = _problem(r, "grouped_conv_fwd", REGNET)
    cands, rejected = r.candidates(p)
    assert cands and all(c.family.name != "conv_halo_fwd" for c in cands)
    assert any("interpreter" in why for name, why in rejected.items() if name.startswith("conv_halo_fwd"))
    gpu_like = Registry("sm_90", settings=Settings(cache_dir=tmp_path, interpret=True), interpret=False)
    gpu_like.declare("grouped_conv_fwd", "default")
    assert any(c.family.name == "conv_halo_fwd" for c in gpu_like.candidates(p)[0])


@pytest.mark.parametrize("change, words", [
    (dict(stride=[2, 2]), "compiled for stride 1"), (dict(filter=[5, 5], pad=[2, 2]), "filter height"),
    (dict(dilation=[2, 1]), "dilation"), (dict(filter=[3, 5]), "max_taps"), (dict(C=6 * 80, K=6 * 80), "block_k"),
    (dict(C=24, K=24), "Cg * 2 B % 16"), (dict(N=1, G=1, C=8, K=8, spatial=[(1 << 28) - 16, 1], filter=[3, 1], pad=[1, 0]), "32-bit tile"),
])
def test_supports_refuses(reg, change, words):
    fam = reg.catalog.families["conv_halo_fwd"]
    key = ConvHaloFwdKey(dtype="bf16", block_h=16, block_w=8, block_n=64)
    assert fam.supports(key, _problem(reg, "grouped_conv_fwd", REGNET)) is None
    why = fam.supports(key, _problem(reg, "grouped_conv_fwd", {**REGNET, **change}))
    assert why and words in why, why
    assert "channels-last" in fam.supports(key, _problem(reg, "grouped_conv_fwd", REGNET, channels_last=False))
    assert "dtype" in fam.supports(key, _problem(reg, "grouped_conv_fwd", REGNET, dtype="fp16"))


MERGED = case(2, 2, 32, 128, 128, (13, 11), 3, pad=1)  # 4 channels per group


@pytest.mark.parametrize("gpb, change, words", [
    (8, dict(G=20, C=80, K=80), "multiple of groups_per_block"), (16, {}, "block_k"),
    (8, dict(K=256), "block_n"), (2, dict(G=64, C=128, K=128), "groups_per_block 2 * Cg * 2 B % 16"),
    (4, {}, "at most half"),
])
def test_merged_supports_refuses(reg, gpb, change, words):
    """Merged groups: G a multiple of groups_per_block, whose channels fit one tile each way,
    and descriptor strides of 16 bytes (gpb · channels per group)."""
    fam = reg.catalog.families["conv_halo_fwd"]
    key = ConvHaloFwdKey(dtype="bf16", block_h=16, block_w=8, block_n=32, groups_per_block=gpb)
    ok = fam.supports(key, _problem(reg, "grouped_conv_fwd", MERGED))
    why = fam.supports(key, _problem(reg, "grouped_conv_fwd", {**MERGED, **change}))
    assert why and words in why, (ok, why)


@pytest.mark.parametrize("op", sorted(FAMILIES))
def test_merged_compiles_for_sm90(reg, op):
    """A merged-group key (no filter descriptor: the block-diagonal filter is gathered with
    pointer loads) compiles for sm_90a with the signature's parameters; the tiles cover G / gpb
    group blocks."""
    fam = reg.catalog.families[FAMILIES[op]]
    key = fam.key_cls(dtype="bf16", block_h=8, block_w=8, block_n=32, num_stages=4, groups_per_block=8)
    assert "filt" not in fam.signature(key) and key.name.endswith("_gpb8")
    assert fam.tiles(key, _problem(reg, op, MERGED)) == 2 * 2 * 2 * 4
    inst = reg.add(fam.name, key)
    report = reg.build(max_workers=1, progress=False, instances=[inst])
    assert not report.failed, report.failed
    assert kernel_parameters(reg.job(inst).source, inst.name) == list(fam.signature(key))


@pytest.mark.parametrize("change, words", [
    (dict(dtype="fp32"), "fp16 / bf16"), (dict(block_h=32), "block_h*block_w"), (dict(block_h=4, block_w=8), "64 or 128"),
    (dict(block_n=128), "128 B"), (dict(block_h=8, block_w=16, num_stages=7), "shared memory"),
])
def test_check_refuses(reg, change, words):
    key = ConvHaloFwdKey(**{**dict(dtype="bf16", block_h=16, block_w=8, block_n=64), **change})
    reasons = reg.catalog.families["conv_halo_fwd"].check(key, reg.arch)
    assert any(words in r for r in reasons), reasons


# Row phases (stride-2 forward keys, ``_st2``): ResNeXt's 8 channels per group at stride 2.
PHASES = case(2, 2, 8, 64, 64, (12, 10), 3, stride=2, pad=1)


@pytest.mark.parametrize("change, words", [
    (dict(stride=[1, 1]), "height and width stride 2"), (dict(stride=[2, 1]), "height and width stride 2"),
    (dict(spatial=[12, 11]), "even input height and width"), (dict(dilation=[1, 2], pad=[1, 2]), "dilation 1"),
    (dict(G=4, C=64, K=64), "== block_k"), (dict(filter=[5, 3], pad=[2, 1]), "filter height"),
])
def test_phases_supports_refuses(reg, change, words):
    """A stride-2 key serves stride (2, 2) (depth stride 1), even input sizes, dilation 1 and a
    channel box of exactly its groups' channels."""
    fam = reg.catalog.families["conv_halo_fwd"]
    key = ConvHaloFwdKey(dtype="bf16", block_h=16, block_w=8, block_n=32, num_stages=3, groups_per_block=4, stride=2)
    assert fam.supports(key, _problem(reg, "grouped_conv_fwd", PHASES)) is None
    why = fam.supports(key, _problem(reg, "grouped_conv_fwd", {**PHASES, **change}))
    assert why and words in why, why


def test_phases_keys(reg):
    """Stride 2 is forward only, 3-row filters at dilation 1; a halo is the even row taps' phase
    (the patch and one row) and the odd tap's (the patch); the bucket's stride facet is not-1; the
    full set holds stride-2 twins of every 9-tap tile, the default set those of
    ``_HALO_PHASES_DEFAULT`` (3 tiles x 5 group counts x 2 dtypes)."""
    fam = reg.catalog.families["conv_halo_fwd"]
    key = ConvHaloFwdKey(dtype="bf16", block_h=16, block_w=8, block_n=32, groups_per_block=4, stride=2)
    assert key.name.endswith("_gpb4_st2") and key.tail_h == 1 and key.slot_atoms == (2 * 16 + 1) * 8 // 8
    assert fam.bucket(key)[4] is False and fam.bucket(attrs.evolve(key, stride=1))[4] is True
    assert any("stride 2" in r for r in fam.check(attrs.evolve(key, taps_h=5), reg.arch))
    bwd = reg.catalog.families["conv_halo_bwd_data"]
    assert any("stride 2" in r for r in bwd.check(bwd.key_cls(dtype="bf16", block_h=16, block_w=8, block_n=32,
                                                               stride=2), reg.arch))
    full = Registry("sm_90", settings=reg.settings)
    assert any("_st2" in i.name for i in full.declare("grouped_conv_fwd", "full"))
    default = [i.name for i in instances_of(reg, "grouped_conv_fwd", "conv_halo_fwd") if "_st2" in i.name]
    assert "conv_halo_fwd_bf16_8x8x64_s7_t3d1_m9_gpb8_st2" in default and len(default) == 2 * 3 * 5


def test_phases_compile_for_sm90(reg):
    """A stride-2 key compiles for sm_90a with its signature's parameters (three halo boxes a step;
    ``test_no_serialised_warpgroup_mmas`` checks its MMAs)."""
    fam = reg.catalog.families["conv_halo_fwd"]
    inst = reg.add(fam.name, ConvHaloFwdKey(dtype="bf16", block_h=8, block_w=8, block_n=64, num_stages=4,
                                            groups_per_block=8, stride=2))
    report = reg.build(max_workers=1, progress=False, instances=[inst])
    assert not report.failed, report.failed
    source = reg.job(inst).source
    assert kernel_parameters(source, inst.name) == list(fam.signature(inst.key))
    assert source.count("tma.async_copy_global_to_shared(src") == 3


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

GPU_CASES = {
    "regnet_like": REGNET,
    "dense_64": case(2, 8, 1, 64, 64, (16, 16), 3, pad=1),
    # three column blocks of 64 (136 output channels per group forward, input channels
    # backward-data), patches cut off in both directions
    "column_blocks": case(2, 3, 3, 3 * 64, 3 * 136, (19, 13), 3, pad=1),
    # 32-channel groups, padding 2 (output larger than the input: halo rows outside on both sides)
    "cg32_pad2": case(2, 2, 2, 64, 64, (5, 7), 3, pad=2),
    "one_column_filter": case(2, 2, 2, 128, 128, (9, 11), (3, 1), pad=(1, 0)),
    "width_dilation": case(2, 2, 1, 64, 64, (10, 12), 3, pad=(0, 2), dilation=(1, 2)),
    "conv3d_1x3x3": case(3, 2, 2, 128, 128, (3, 6, 7), (1, 3, 3), pad=(0, 1, 1)),
    "conv3d_depth_taps": case(3, 1, 2, 128, 128, (4, 6, 5), (3, 3, 1), pad=(1, 1, 0)),
    # 192 tiles of 16x8 over 132 programs: programs switch groups between tiles
    "group_switches": case(2, 4, 6, 240, 240, (28, 28), 3, pad=1),
    # 3-D, 144 tiles of 16x8: programs carry their tile across depth rows and images
    "conv3d_depth_rows": case(3, 2, 2, 128, 128, (6, 20, 20), (1, 3, 3), pad=(0, 1, 1)),
    # merged groups (groups_per_block > 1): 4 channels per group; 4 in and 8 out (a rectangular
    # block-diagonal filter); 8 per group with 144-576 tiles (programs switch group blocks); a
    # 3-D 1x3x3 filter with 16 per group
    "merged_cg4": MERGED,
    "merged_cg4_kg8": case(2, 2, 16, 64, 128, (10, 9), 3, pad=1),
    "merged_switches": case(2, 6, 32, 256, 256, (24, 24), 3, pad=1),
    "merged_conv3d": case(3, 2, 8, 128, 128, (3, 6, 7), (1, 3, 3), pad=(0, 1, 1)),
    # 3×3×3 filters (27 resident taps): 8 and 16 channels per group
    "merged_conv3d_27_cg8": case(3, 2, 8, 64, 64, (4, 6, 7), 3, pad=1),
    "merged_conv3d_27_cg16": case(3, 1, 4, 64, 64, (3, 5, 9), 3, pad=1),
    # stream-K: 768 dw tiles of 2 patches (gpb 1) over 132 or 264 programs: a program runs several
    # whole tiles and cuts two; with 8 groups a block, 96 tiles shared by 132 programs
    "stream_k_runs": case(2, 2, 256, 2048, 2048, (8, 8), 3, pad=1),
}


@pytest.fixture(scope="module")
def gpu_reg(tmp_path_factory):
    """The halo families' full sets (and the backward-weight splits the tests run), compiled in
    parallel up front (hundreds of instances: one at a time, the first uses would take minutes)."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("g")))
    for op in FAMILIES:
        r.declare(op, "full")
    wgrad = [r.add(WGRAD, k) for k in r.catalog.families[WGRAD].kernel_sets()["full"](r.arch)
             if k.split_k in WGRAD_SPLITS or k.stream_k]
    r.build(progress=False, instances=[i for i in r.instances.values() if i.family in FAMILIES.values()] + wgrad)
    return r


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", sorted(GPU_CASES))
@pytest.mark.parametrize("op", sorted(FAMILIES))
def test_gpu_matches_reference(gpu_reg, op, name, dtype):
    fields = GPU_CASES[name]
    if op == "grouped_conv_bwd_data":  # its reduction runs over K/G: the same channel counts swapped
        fields = {**fields, "C": fields["K"], "K": fields["C"]}
    p = _problem(gpu_reg, op, fields, dtype)
    fam = gpu_reg.catalog.families[FAMILIES[op]]
    insts = [i for i in instances_of(gpu_reg, op, FAMILIES[op]) if fam.supports(i.key, p) is None]
    assert insts
    for seed, inst in enumerate(insts):
        assert_matches_reference(gpu_reg, op, p, instance=inst.name, interpret=False, seed=seed)


# ---- conv_halo_bwd_weight ----

WGRAD = "conv_halo_bwd_weight"
WGRAD_SPLITS = (1, 4, 16, 64)  # the GPU tests': one-level sums (4) and two-level (16: 4 x 4, 64: 8 x 8)


def _wgrad_key(**kw):
    from ck_plugin_grouped_conv.halo_wgrad import ConvHaloBwdWeightKey

    return ConvHaloBwdWeightKey(**{**dict(dtype="bf16", block_h=16, block_w=8, block_m=64, block_n=64, split_k=4), **kw})


def test_wgrad_sets(reg):
    """Default: splits 1-32 of both patches and channel tiles, every merged-group count, and
    stream-K at one program an SM with 16x8 patches; full adds 64 splits, and stream-K with both
    patches at one and two programs an SM."""
    fam = reg.catalog.families[WGRAD]
    default, full = (fam.kernel_sets()[s](reg.arch) for s in ("default", "full"))
    for keys, splits in ((default, {1, 2, 4, 8, 16, 32}), (full, {1, 2, 4, 8, 16, 32, 64})):
        assert {k.block_n for k in keys} == {32, 64} and {k.split_k for k in keys} == splits
        assert {k.groups_per_block for k in keys} == {1, 2, 4, 8, 16} and {k.dtype.value for k in keys} == {"fp16", "bf16"}
    assert {(k.block_h, k.stream_k) for k in default if k.stream_k} == {(16, 1)}
    assert {(k.block_h, k.stream_k) for k in full if k.stream_k} == {(16, 1), (16, 2), (8, 1), (8, 2)}
    assert set(default) < set(full)


def test_wgrad_compiles_for_sm90(tmp_path):
    """A split and an unsplit instance, 64- and 32-channel x tiles (128- and 64-byte swizzle),
    compile for sm_90a with the parameters the signature names, within the shared-memory bound."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    insts = [r.add(WGRAD, _wgrad_key()), r.add(WGRAD, _wgrad_key(block_h=8, block_n=32, split_k=1))]
    report = r.build(max_workers=1, progress=False, instances=insts)
    assert not report.failed, report.failed
    for inst in insts:
        assert kernel_parameters(r.job(inst).source, inst.name) == list(r.family(inst).signature(inst.key))
        files = r.cache.lookup(r.fingerprint(inst)).files
        meta = json.loads(files["kernel.json"].read_text())
        assert meta["shared"] <= inst.key.smem_bytes() <= r.arch.smem_per_block_bytes and meta["num_warps"] == 4


def test_no_serialised_warpgroup_mmas(tmp_path):
    """ptxas keeps the warpgroup MMAs of every halo loop asynchronous: with accumulators' MMAs
    still in flight across a loop's back edge it serialises every one of them (warning C7515;
    the backward-weight kernels ran so until the twenty-ninth session). A forward and a
    backward-data default key, a forward stride-2 key, and backward-weight keys with one- and two-level split sums,
    merged groups too, stream-K (its runs in a loop over tiles) and row phases (stride 2) (CPU: PTX compiled for sm_90a, then ``ptxas -v`` again)."""
    import subprocess

    from triton.backends.nvidia.compiler import get_ptxas

    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    insts = [r.add(FAMILIES[op], r.catalog.families[FAMILIES[op]].key_cls(dtype="bf16", block_h=16, block_w=8, block_n=64,
                                                                         num_stages=6, groups_per_block=8))
             for op in sorted(FAMILIES)]
    insts.append(r.add("conv_halo_fwd", ConvHaloFwdKey(dtype="bf16", block_h=16, block_w=8, block_n=32, num_stages=3,
                                                       groups_per_block=4, stride=2)))
    insts += [r.add(WGRAD, _wgrad_key(split_k=4, block_n=32, groups_per_block=8)),
              r.add(WGRAD, _wgrad_key(split_k=16, num_stages=3)),
              r.add(WGRAD, _wgrad_key(split_k=1, stream_k=1, block_h=8, block_n=32, groups_per_block=2)),
              r.add(WGRAD, _wgrad_key(split_k=4, block_n=32, groups_per_block=4, stride=2))]
    report = r.build(max_workers=1, progress=False, instances=insts)
    assert not report.failed, report.failed
    for inst in insts:
        ptx = r.cache.lookup(r.fingerprint(inst)).files["kernel.ptx"]
        out = subprocess.run([get_ptxas(90).path, "-arch=sm_90a", "-v", str(ptx), "-o", str(tmp_path / "k.cubin")],
                             capture_output=True, text=True, check=True)
        assert "C7515" not in out.stderr and "serialized" not in out.stderr, (inst.name, out.stderr[:400])


@pytest.mark.parametrize("change, words", [
    (dict(stride=[2, 2]), "compiled for stride 1"), (dict(filter=[5, 5], pad=[2, 2]), "filter height"), (dict(dilation=[2, 1]), "dilation"),
    (dict(C=24, K=24), "Cg * 2 B % 16"), (dict(N=1, spatial=[8, 8]), "fewer than split_k"),
])
def test_wgrad_supports_refuses(reg, change, words):
    fam = reg.catalog.families[WGRAD]
    assert fam.supports(_wgrad_key(), _problem(reg, "grouped_conv_bwd_weight", REGNET)) is None
    why = fam.supports(_wgrad_key(), _problem(reg, "grouped_conv_bwd_weight", {**REGNET, **change}))
    assert why and words in why, why


@pytest.mark.parametrize("gpb, bn, change, words", [
    (8, 32, dict(G=20, C=80, K=80), "multiple of groups_per_block"), (16, 32, {}, "block_n"),
    (8, 32, dict(K=1024), "block_m"), (2, 64, dict(G=64, C=128, K=128), "groups_per_block 2 * Cg * 2 B % 16"),
    (4, 64, {}, "at most half"),
])
def test_wgrad_merged_supports_refuses(reg, gpb, bn, change, words):
    """Merged groups: G a multiple of groups_per_block, whose output channels fit block_m and
    input channels block_n, 16-byte descriptor strides, a tile more than half full one way."""
    fam = reg.catalog.families[WGRAD]
    key = _wgrad_key(block_n=bn, groups_per_block=gpb)
    ok = fam.supports(key, _problem(reg, "grouped_conv_bwd_weight", MERGED))
    why = fam.supports(key, _problem(reg, "grouped_conv_bwd_weight", {**MERGED, **change}))
    assert why and words in why, (ok, why)


def test_wgrad_merged_compiles_for_sm90(tmp_path):
    """A merged key whose 64 splits sum in two levels (8 groups of 8) compiles for sm_90a with
    the signature's parameters; its grid has G / gpb group blocks, and its counters one per
    group of splits and one per tile."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    fam = r.catalog.families[WGRAD]
    key = _wgrad_key(split_k=64, groups_per_block=16, num_stages=3)
    assert key.name.endswith("_k64_s3_t3d1_gpb16") and key.split_levels == (8, 8)
    p = _problem(r, "grouped_conv_bwd_weight", case(2, 32, 32, 128, 128, (56, 56), 3, pad=1))
    assert fam.supports(key, p) is None and fam.grid(key, p) == (2 * 3, 64, 1)
    assert fam.workspaces(key, p)["counters"] == 4 * 6 * 65
    inst = r.add(WGRAD, key)
    report = r.build(max_workers=1, progress=False, instances=[inst])
    assert not report.failed, report.failed
    source = r.job(inst).source
    assert kernel_parameters(source, inst.name) == list(fam.signature(key)) and "group = split // 8" in source


def test_wgrad_stream_k(reg, tmp_path):
    """Stream-K keys: named ``_sk<n>``, a grid of 132 x n programs, two slots of partial tiles a
    program and a counter a dw tile; refused with fewer patch steps than programs; compiled for
    sm_90a with the workspaces in the signature."""
    fam = reg.catalog.families[WGRAD]
    key = _wgrad_key(split_k=1, stream_k=2, block_h=8, block_n=32, groups_per_block=2)
    assert key.name == "conv_halo_bwd_weight_bf16_8x8_64x32_sk2_s4_t3d1_gpb2" and key.programs == 264
    # 32 groups of 16 channels, 14x14: 16 group blocks x 3 column taps = 48 tiles of 32 x 2 x 2 patches
    p = _problem(reg, "grouped_conv_bwd_weight", case(2, 32, 32, 512, 512, (14, 14), 3, pad=1))
    assert fam.supports(key, p) is None and fam.grid(key, p) == (264, 1, 1) and fam.dw_tiles(key, p) == 48
    assert fam.workspaces(key, p) == {"partials": 264 * 2 * 3 * 64 * 32 * 4, "counters": 4 * 48}
    feats = fam.pair_features(key, p, reg.arch)
    assert feats["k_steps"] == math.ceil(48 * 128 / 264)
    small = _problem(reg, "grouped_conv_bwd_weight", case(2, 1, 32, 512, 512, (14, 14), 3, pad=1))
    why = fam.supports(key, small)
    assert why and "fewer than its 264 programs" in why, why
    assert fam.check(attrs.evolve(key, split_k=2), reg.arch)
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path))
    inst = r.add(WGRAD, key)
    assert not r.build(max_workers=1, progress=False, instances=[inst]).failed
    source = r.job(inst).source
    assert kernel_parameters(source, inst.name) == list(fam.signature(key))
    assert "ws_ptr" in fam.signature(key) and "while x < x_end:" in source and "PROGRAMS = gl.constexpr(264)" in source


def test_wgrad_row_phases(reg):
    """Stride-2 keys (``_st2``): x from its row phases, three boxes a halo (the even row taps' 17
    phase rows, the odd one's 16); refused for odd input sizes, a channel box that is not whole
    groups, and filters other than 3 rows at dilation 1."""
    fam = reg.catalog.families[WGRAD]
    key = _wgrad_key(block_n=32, groups_per_block=4, split_k=2, stride=2)
    assert key.name == "conv_halo_bwd_weight_bf16_16x8_64x32_k2_s4_t3d1_gpb4_st2"
    assert key.tail_h == 1 and key.slot_atoms == (2 * 16 + 1) * 8 // 8
    p = _problem(reg, "grouped_conv_bwd_weight", PHASES)
    assert fam.supports(key, p) is None
    assert "compiled for stride 1" in fam.supports(attrs.evolve(key, stride=1), p)
    for change, words in ((dict(spatial=[13, 10]), "even input height and width"), (dict(dilation=[1, 2], pad=[1, 2]), "dilation 1")):
        why = fam.supports(key, _problem(reg, "grouped_conv_bwd_weight", {**PHASES, **change}))
        assert why and words in why, why
    why = fam.supports(attrs.evolve(key, groups_per_block=2), p)
    assert why and "== block_n 32" in why, why
    assert any("3-row filters" in r for r in fam.check(attrs.evolve(key, taps_h=5), reg.arch))


@pytest.mark.parametrize("change, words", [
    (dict(dtype="fp32"), "fp16 / bf16"), (dict(block_m=128), "block_m"), (dict(block_h=32), "64 or 128 pixels"),
    (dict(block_n=128), "32-128 B"),
])
def test_wgrad_check_refuses(reg, change, words):
    reasons = reg.catalog.families[WGRAD].check(_wgrad_key(**change), reg.arch)
    assert any(words in r for r in reasons), reasons


# Keys beyond the sets (op, key fields, problem): a 5-row filter with 25 resident taps (32-channel
# groups), and height dilation 2 (the tail rounds 4 rows up to a power of two: 4).
ODD_KEYS = [
    ("grouped_conv_fwd", dict(block_h=16, block_w=8, block_n=32, num_stages=3, taps_h=5, max_taps=25),
     case(2, 2, 2, 64, 64, (19, 13), 5, pad=2)),
    ("grouped_conv_bwd_data", dict(block_h=8, block_w=8, block_n=32, num_stages=4, taps_h=5, max_taps=25),
     case(2, 2, 2, 64, 64, (12, 17), 5, pad=2)),
    ("grouped_conv_fwd", dict(block_h=16, block_w=8, block_n=64, num_stages=3, dil_h=2),
     case(2, 2, 2, 128, 128, (21, 15), 3, pad=2, dilation=(2, 1))),
    ("grouped_conv_bwd_data", dict(block_h=16, block_w=8, block_n=64, num_stages=3, dil_h=2),
     case(2, 2, 2, 128, 128, (21, 15), 3, pad=2, dilation=(2, 1))),
]


# Forward row phases (stride 2, every full-set ``_st2`` key that supports a case): 8 channels per
# group (4 and 8 groups a tile); 32 per group without padding (gpb 1 and 2); padding 2 and 16 per
# group; 3-D 1x3x3 (depth rows of the merged N·D dimension); 1024 tiles over 132 programs (group
# block switches); output patches cut off by odd output sizes.
PHASE_CASES = {
    "cg8": PHASES,
    "cg32_pad0": case(2, 2, 2, 64, 64, (14, 12), 3, stride=2, pad=0),
    "cg16_pad2": case(2, 2, 4, 64, 64, (10, 12), 3, stride=2, pad=2),
    "conv3d_1x3x3": case(3, 2, 8, 64, 64, (3, 8, 10), (1, 3, 3), stride=(1, 2, 2), pad=(0, 1, 1)),
    "switches": case(2, 4, 32, 256, 256, (28, 28), 3, stride=2, pad=1),
    "odd_out": case(2, 1, 8, 64, 64, (18, 22), 3, stride=2, pad=1),
}


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", sorted(PHASE_CASES))
def test_gpu_phases_match_reference(gpu_reg, name, dtype):
    op = "grouped_conv_fwd"
    p = _problem(gpu_reg, op, PHASE_CASES[name], dtype)
    fam = gpu_reg.catalog.families["conv_halo_fwd"]
    insts = [i for i in instances_of(gpu_reg, op, "conv_halo_fwd") if "_st2" in i.name and fam.supports(i.key, p) is None]
    assert insts
    for seed, inst in enumerate(insts):
        assert_matches_reference(gpu_reg, op, p, instance=inst.name, interpret=False, seed=seed)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", sorted(PHASE_CASES))
def test_wgrad_gpu_phases_match_reference(gpu_reg, name, dtype):
    """Backward-weight row phases: every full-set ``_st2`` key of splits 1, 4, 16, 64 and stream-K
    that supports the case."""
    op = "grouped_conv_bwd_weight"
    p = _problem(gpu_reg, op, PHASE_CASES[name], dtype)
    fam = gpu_reg.catalog.families[WGRAD]
    keys = [k for k in fam.kernel_sets()["full"](gpu_reg.arch) if k.dtype.value == dtype and k.stride == 2
            and (k.split_k in WGRAD_SPLITS or k.stream_k)]
    insts = [gpu_reg.add(WGRAD, k) for k in keys if fam.supports(k, p) is None]
    assert insts
    for seed, inst in enumerate(insts):
        assert_matches_reference(gpu_reg, op, p, instance=inst.name, interpret=False, seed=seed)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("op, fields, problem", ODD_KEYS, ids=lambda v: str(v)[:20] if isinstance(v, str) else None)
def test_gpu_odd_keys_match_reference(gpu_reg, op, fields, problem):
    fam = gpu_reg.catalog.families[FAMILIES[op]]
    inst = gpu_reg.add(fam.name, fam.key_cls(dtype="bf16", **fields))
    p = _problem(gpu_reg, op, problem)
    assert fam.supports(inst.key, p) is None
    assert_matches_reference(gpu_reg, op, p, instance=inst.name, interpret=False)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", sorted(GPU_CASES))
def test_wgrad_gpu_matches_reference(gpu_reg, name, dtype):
    """Splits 1, 4 (one-level sum), 16 and 64 (two levels; where there are patches enough) and
    stream-K at one and two programs an SM (where there are patch steps enough) of each patch,
    channel tile and merged-group count that supports the case."""
    op = "grouped_conv_bwd_weight"
    p = _problem(gpu_reg, op, GPU_CASES[name], dtype)
    fam = gpu_reg.catalog.families[WGRAD]
    keys = [k for k in fam.kernel_sets()["full"](gpu_reg.arch) if k.dtype.value == dtype and (k.split_k in WGRAD_SPLITS or k.stream_k)]
    insts = [gpu_reg.add(WGRAD, k) for k in keys if fam.supports(k, p) is None]
    assert insts
    for seed, inst in enumerate(insts):
        assert_matches_reference(gpu_reg, op, p, instance=inst.name, interpret=False, seed=seed)
