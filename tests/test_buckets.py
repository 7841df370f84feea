"""Selection checks only the instances of the problem's bucket (dtype and layout for gemm and
conv): the candidates are exactly those whose ``supports`` accepts the problem, and every other
instance is rejected with its family's reason, computed when read."""

import pytest

from ckcore import Registry, Settings
from ckcore.errors import NoKernelFound

GEMM = [dict(M=40, N=24, K=56, dtype="bf16", layout="crr"), dict(M=1, N=4096, K=4096, dtype="fp16", layout="rcr"),
        dict(M=33, N=17, K=9, dtype="fp32", layout="rrr")]
CONV = [dict(ndim=2, N=2, G=4, C=16, K=16, spatial=[9, 8], filter=[3, 3], stride=[1, 1], pad=[1, 1], dilation=[1, 1],
             dtype="bf16", layout="nhwgc"),
        dict(ndim=1, N=1, G=8, C=8, K=8, spatial=[30], filter=[5], stride=[2], pad=[2], dilation=[1], dtype="fp32",
             layout="ngcw")]


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c"), heuristic="rules"))
    for op in ("gemm", "grouped_conv_fwd"):
        r.declare(op, "default")
    return r


@pytest.mark.parametrize("op,fields", [("gemm", f) for f in GEMM] + [("grouped_conv_fwd", f) for f in CONV])
def test_candidates_are_exactly_the_supporting_instances(reg, op, fields):
    p = reg.problem(op, **fields)
    cands, rejected = reg.candidates(p)
    every = reg.of_op(op)
    brute = {i.name for i in every if reg._rejection(i, reg.family(i), p) is None}
    assert {c.instance.name for c in cands} == brute
    assert len(rejected) == len(every) - len(brute) == len(dict(rejected))
    other = [i for i in every if reg.family(i).bucket(i.key) != reg.catalog.op(op).bucket(p)]
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
