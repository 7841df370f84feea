"""Extra tune problems for the merged-group halo instances (CPU only): stride-1 grouped
convolutions with 4, 8 or 16 channels per group (ResNeXt-like), which the datasets hold few of
(13 forward, 15 backward-data problems that ``conv_halo_*_gpb*`` instances serve, twenty-eighth
session). Deterministic (seed 0): ``count`` problems per op, 2-D 3×3 (one in eight 3-D 1×3×3),
padding 1, fp16 / bf16 channels-last, G in 8-64 (a multiple of the merged tiles' groups), sizes
capped at 16 M activation elements, each checked to be served by a default-set merged instance.
With ``--cube``: 3-D 3×3×3 problems (depth 2-8) with 8 or 16 channels per group, for the 27-tap tiles.
With ``--stride2`` (forward): height and width stride 2 (3-D: depth stride 1), even input sizes, 2-64
channels per group, each served by a default-set row-phase instance (``_st2``; thirtieth session).
usage: python benchmarks/make_halo_merged_suite.py OP COUNT [--cube | --stride2] >> SUITE.jsonl
"""

import json
import sys

import numpy as np

from ckcore import Registry


def main():
    op, count, cube, phases = sys.argv[1], int(sys.argv[2]), "--cube" in sys.argv, "--stride2" in sys.argv
    reg = Registry("sm_90", interpret=False)
    reg.declare(op, "default")
    serving = (lambda i: i.key.stride == 2) if phases else (lambda i: i.key.groups_per_block > 1)  # noqa: E731
    merged = [i for i in reg.of_op(op) if i.family.startswith("conv_halo") and serving(i)]
    even = 2 if phases else 1  # row phases need even input sizes
    rng = np.random.default_rng(0)
    seen, out = set(), []
    while len(out) < count:
        cg = int(rng.choice([2, 4, 8, 16, 32, 64] if phases else [4, 8, 16]))
        kg = cg if rng.random() < 0.8 else int(rng.choice([cg // 2, cg * 2]))
        g = int(rng.choice([2, 4, 8, 16, 32, 64] if phases else [8, 16, 32, 64]))
        n = int(rng.choice([1, 2, 4, 8, 16, 32]))
        hw = int(rng.choice([14, 24, 28, 38, 56, 112] if phases else [7, 12, 14, 19, 28, 35, 56]))
        w = hw if rng.random() < 0.7 else int(rng.integers(6, 60)) // even * even
        three_d = cube or rng.random() < 0.125
        if cube and cg == 4:
            continue
        spatial = [int(rng.integers(2, 9)), hw, w] if three_d else [hw, w]
        if n * g * max(cg, kg) * int(np.prod(spatial)) > 16 << 20 or kg < 2:
            continue
        stride = ([1, 2, 2] if three_d else [2, 2]) if phases else [1] * len(spatial)
        fields = dict(ndim=len(spatial), N=n, G=g, C=g * cg, K=g * kg, spatial=spatial,
                      filter=[3, 3, 3] if cube else [1, 3, 3] if three_d else [3, 3], stride=stride,
                      pad=[1, 1, 1] if cube else [0, 1, 1] if three_d else [1, 1], dilation=[1] * len(spatial),
                      dtype=str(rng.choice(["fp16", "bf16"])), layout="ndhwgc" if three_d else "nhwgc")
        p = reg.problem(op, **fields)
        if p.name in seen or not any(reg.family(i).supports(i.key, p) is None for i in merged):
            continue
        seen.add(p.name)
        out.append({"op": op, "name": p.name, **fields})
    sys.stdout.writelines(json.dumps(r) + "\n" for r in out)


if __name__ == "__main__":
    main()
