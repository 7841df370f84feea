"""Selection checks only the instances of the problem's bucket (dtype and layout for gemm; for
conv also whether G = 1 and whether C/G = 1, which the filter-row, pointwise and depthwise
families name, whether every stride is 1 and the filter height, which the stride-1, row-phase and
halo families name): the candidates are exactly those whose ``supports`` accepts the problem, and every other
instance is rejected with its family's reason, computed when read."""

import pytest

from ckcore import Registry, Settings
from ckcore.errors import InvalidKernelKey, NoKernelFound
from ckcore.registry import bucket_matches

GEMM = [dict(M=40, N=24, K=56, dtype="bf16", layout="crr"), dict(M=1, N=4096, K=4096, dtype="fp16", layout="rcr"),
        dict(M=33, N=17, K=9, dtype="fp32", layout="rrr")]
CONV = [dict(ndim=2, N=2, G=4, C=16, K=16, spatial=[9, 8], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1],
             dtype="bf16", layout="nhwgc"),
        dict(ndim=1, N=1, G=8, C=8, K=8, spatial=[30], filter=[5], stride=[2], pad=[2], dilation=[1], dtype="fp32",
             layout="ngcw"),
        # depthwise, channels-last (the depthwise families' bucket), and G = 1 pointwise (the
        # pointwise and filter-row families')
        dict(ndim=2, N=2, G=16, C=16, K=32, spatial=[9, 8], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1],
             dtype="fp16", layout="nhwgc"),
        dict(ndim=2, N=2, G=1, C=32, K=16, spatial=[9, 8], filter=[1, 1], stride=[1, 1], pad=[0, 0], dilation=[1, 1],
             dtype="bf16", layout="nhwgc"),
        # stride 2 (the stride-1-only families' facet) and a 5-row filter (the halo families')
        dict(ndim=2, N=2, G=2, C=32, K=32, spatial=[12, 10], filter=[3, 3], stride=[2, 2], pad=[1, 1], dilation=[1, 1],
             dtype="bf16", layout="nhwgc"),
        dict(ndim=2, N=2, G=2, C=32, K=32, spatial=[12, 10], filter=[5, 5], stride=[1, 1], pad=[2, 2], dilation=[1, 1],
             dtype="fp16", layout="nhwgc")]
CONV_OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), heuristic="rules"))
    for op in ("gemm",) + CONV_OPS:
        r.declare(op, "default")
    return r


@pytest.mark.parametrize("op,fields", [("gemm", f) for f in GEMM] + [(op, f) for op in CONV_OPS for f in CONV])
def test_candidates_are_exactly_the_supporting_instances(reg, op, fields):
    p = reg.problem(op, **fields)
    cands, rejected = reg.candidates(p)
    every = reg.of_op(op)
    brute = set()
    for inst in every:
        try:  # the variant a family derives for p (conv_row's pairs); an invalid one is rejected
            run = reg.specialized(inst, p)
        except InvalidKernelKey:
            continue
        if reg._rejection(run, reg.family(run), p) is None:
            brute.add(run.name)
    assert {c.instance.name for c in cands} == brute
    assert len(rejected) == len(every) - len(brute) == len(dict(rejected))
    other = [i for i in every if not bucket_matches(reg.family(i).bucket(i.key), reg.catalog.op(op).bucket(p))]
    assert other  # the index skipped these; their reasons are computed when read
    assert all(rejected[i.name] == reg._rejection(i, reg.family(i), p) for i in other)


def test_the_index_follows_new_declarations(tmp_path):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path, heuristic="rules"))
    p = r.problem("gemm", **GEMM[0])
    with pytest.raises(NoKernelFound) as err:
        r.select(p)
    assert not err.value.rejected
    r.declare("gemm", "default")
    assert r.select(p).instance.key.layout.value == "crr"


def test_bucket_matching():
    """None matches everything; tuples match by leading components, None components matching any
    value; other values by equality."""
    want = ("bf16", True, False, True)
    assert bucket_matches(None, want) and bucket_matches(want, want)
    assert bucket_matches(("bf16", True), want)  # a shorter family bucket leaves the rest open
    assert bucket_matches(("bf16", True, None, True), want)
    assert not bucket_matches(("bf16", True, True), want)
    assert not bucket_matches(("fp16", True), want)
    assert not bucket_matches(("bf16", True, None, True, 1), want)  # longer than the problem's
    assert bucket_matches("x", "x") and not bucket_matches("x", "y") and not bucket_matches(("x",), "x")


@pytest.mark.parametrize("fields", CONV[2:4], ids=["depthwise", "one_group"])
def test_facets_skip_families_that_cannot_serve(reg, fields):
    """A depthwise problem skips the filter-row and pointwise families (G = 1 only); a G = 1
    problem with C/G > 1 skips the depthwise families."""
    p = reg.problem("grouped_conv_fwd", **fields)
    checked, _ = reg._bucket_groups("grouped_conv_fwd", reg.catalog.op("grouped_conv_fwd").bucket(p))
    families = {i.family for i in checked}
    if p.G == 1:
        assert not any(f.startswith("dw_") for f in families) and "conv_row_fwd" in families
    else:
        assert any(f.startswith("dw_") for f in families) and not any(f.startswith(("pw_", "conv_row")) for f in families)


@pytest.mark.parametrize("op", CONV_OPS)
def test_stride_and_filter_height_facets(reg, op):
    """A stride-2 problem skips the stride-1 halo kernels (and backward-data's TMA kernels, the
    forward TMA kernels without row phases) and checks only the row-phase ones (``_st2``: forward
    and backward-weight);
    a 5-row filter skips the 3-row halo kernels; a stride-1 3-row problem checks the stride-1 ones."""
    strided, five, three = (reg.problem(op, **f) for f in (CONV[4], CONV[5], CONV[0]))
    spec = reg.catalog.op(op)

    def names(p, family):
        return {i.name for i in reg._bucket_groups(op, spec.bucket(p))[0] if i.family == family}

    halo = {"grouped_conv_fwd": "conv_halo_fwd", "grouped_conv_bwd_data": "conv_halo_bwd_data",
            "grouped_conv_bwd_weight": "conv_halo_bwd_weight"}[op]
    phases = names(strided, halo)
    assert all(n.endswith("_st2") for n in phases) and bool(phases) == (op != "grouped_conv_bwd_data")
    assert not names(five, halo) and names(three, halo)
    assert not any(n.endswith("_st2") for n in names(three, halo))
    tma = {i.name for i in reg._bucket_groups(op, spec.bucket(strided))[0] if i.family.startswith("conv_tma")}
    if op == "grouped_conv_bwd_data":
        assert not tma
    elif op == "grouped_conv_fwd":
        assert tma and all("_ph" in name for name in tma)
    else:
        assert tma
