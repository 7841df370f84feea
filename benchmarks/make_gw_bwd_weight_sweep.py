"""Writes benchmarks/sweep_gw_bwd_weight.json: a bf16 channels-last backward-weight sweep for the
grouped rows (G > 1, C/G > 1) of the conv suite, whose best picks ran at 0.56-0.89 of cuDNN on
ResNeXt-50 l2-l4 and ResNeXt-3D (twenty-second session, bench_conv_bwd_weight_v4win_new_h100.jsonl).

Holds (1) the default set's bf16 channels-last instances of the three families that serve those
rows (implicit GEMM ``conv_bwd_weight``, ``conv_tma_bwd_weight``, grouped windows
``gw_win_bwd_weight``), so the sweep and its reference are measured in one run; (2) implicit-GEMM
tiles of 16, 32 and 64 rows (output channels per group) with 1, 2 or 4 splits, 2 or 4 warps, 3
stages (2 and 4 where block_k < 128 at 4 warps and split < 4), one or two groups per program (rows
16 and 32); (3) twelve grouped-window tiles (8-64 rows x 2 or 4 columns x 32 or 64 channels, 2 or
4 warps) at splits 1-32 and column strides 1 and 2; (4) TMA tiles (four patches x 64x64 and 64x32)
at splits 1 and 2. Every new key passes its family's static check. The default set has since taken
eight of them, so a rerun lists the same instances in another order.

usage: python benchmarks/make_gw_bwd_weight_sweep.py [--out benchmarks/sweep_gw_bwd_weight.json]
"""

import argparse
import itertools
import json

import attrs

from ckcore import Registry

FAMILIES = ("conv_bwd_weight", "conv_tma_bwd_weight", "gw_win_bwd_weight")


def _default(reg):
    """The default set's bf16 channels-last a16 instances of FAMILIES, and one of each as a
    template for new keys."""
    out, templates = [], {}
    for i in reg.of_op("grouped_conv_bwd_weight"):
        k = i.key
        if i.family not in FAMILIES or k.dtype.value != "bf16" or not getattr(k, "channels_last", True):
            continue
        if getattr(k, "access", None) is not None and k.access.value != "a16":
            continue
        out.append((i.family, k))
        templates.setdefault(i.family, k)
    return out, templates


def _new(reg, templates):
    """New keys (family, key) that pass the family's static check."""
    fams = {f: reg.catalog.families[f] for f in FAMILIES}
    keys = []
    base = attrs.evolve(templates["conv_bwd_weight"], flat=False, tap_block=1)
    for bm, bn, bk, w, s, split, gpb in itertools.product((16, 32, 64), (32, 64, 128), (32, 64, 128), (2, 4),
                                                          (2, 3, 4), (1, 2, 4), (1, 2)):
        acc = bm * bn * gpb // (32 * w)
        if not 4 <= acc <= 64 or (bm == 64 and bn == 128 and w == 2) or (gpb > 1 and bm == 64):
            continue
        if s != 3 and (bk == 128 or split == 4 or w == 2):  # stages 2 and 4 on a subset only
            continue
        keys.append(("conv_bwd_weight", attrs.evolve(base, block_m=bm, block_n=bn, block_k=bk, num_warps=w,
                                                     num_stages=s, split_k=split, groups_per_block=gpb)))
    win = templates["gw_win_bwd_weight"]
    for (bh, bw, bc, w), split, stride in itertools.product(
            [(32, 2, 64, 4), (64, 2, 64, 4), (32, 4, 64, 4), (16, 4, 64, 4), (16, 2, 64, 4), (8, 4, 64, 4),
             (32, 2, 32, 4), (64, 2, 32, 4), (32, 4, 32, 4), (64, 4, 32, 4), (16, 4, 32, 2), (32, 2, 32, 2)],
            (1, 2, 4, 8, 16, 32), (1, 2)):
        keys.append(("gw_win_bwd_weight", attrs.evolve(win, block_h=bh, block_w=bw, block_p=bh * bw, block_c=bc,
                                                       num_warps=w, split=split, stride_w=stride)))
    tma = templates["conv_tma_bwd_weight"]
    for (h, wd), (bm, bn), split in itertools.product(((8, 8), (4, 16), (8, 16), (4, 32)), ((64, 64), (64, 32)),
                                                       (1, 2)):
        keys.append(("conv_tma_bwd_weight", attrs.evolve(tma, block_h=h, block_w=wd, block_m=bm, block_n=bn,
                                                         split_k=split)))
    return [(f, k) for f, k in keys if not fams[f].check(k, reg.arch)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/sweep_gw_bwd_weight.json")
    args = ap.parse_args()
    reg = Registry("sm_90")
    reg.declare("grouped_conv_bwd_weight", "default")
    default, templates = _default(reg)
    new = _new(reg, templates)
    seen, inst = set(), []
    for fam, key in default + new:
        if (fam, key) not in seen:
            seen.add((fam, key))
            inst.append({"family": fam, "key": key.to_dict()})
    with open(args.out, "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print(f"{args.out}: {len(default)} default + {len(inst) - len(default)} new instances")


if __name__ == "__main__":
    main()
