"""Writes a sweep of sliding-window depthwise instances (dw_win_fwd, or dw_win_bwd_data /
dw_win_bwd_weight with --op) for the GPU: bf16, channels-last, multiplier one, a16; [block_h,
block_c] tiles of 8 elements per thread for 2, 4 (and 8) warps × 4 or 8 unrolled output columns ×
column taps per step × column stride (forward, backward-weight) × num_stages × the filter-row loop
unrolled or not (× splits, backward-weight: --splits; it takes num_stages 1 and no row unroll).
num_stages > 1 is the flat, pipelined loop over filter rows and steps (templates/dw_win.j2).
usage: python benchmarks/make_dw_window_sweep.py [--op fwd|bwd_data|bwd_weight] [--out FILE] [--stages 1,3]
       [--steps 3,7] [--rows 1,3] [--warps 2,4,8] [--max-registers 0,168,128] [--splits 4,16,64]
       [--from-default [--filter-rows 2,3 [--block-w 4]] [--tree-reduce-splits 16,64,256]]; then on the GPU:
       ckcore tune grouped_conv_fwd --suite SUITE --kernel-set-file FILE
The eleventh session's sweep (benchmarks/sweep_dw_window.json) is the default arguments. With
--multiplier-two: the product's tiles with multiplier_two (K/G = 2) instead of multiplier one, plus
the tiles whose x tile [block_h, block_c / 2] still holds 8 elements per thread (block_h · block_c =
16 · 32 · num_warps), each in a16 and i32, the ones the family's static check accepts. With
--from-default: the default set's uncapped bf16 window instances of the op, once per non-zero
register cap, and (backward-weight, --filter-rows) once per number of filter rows per program
above 1 (and per --block-w) that the family's static check accepts, and (--tree-reduce-splits)
with tree_reduce at each split (the run script adds the default set's own)."""

import argparse
import itertools
import json

# (block_h, block_c, num_warps): block_h · block_c = 8 · 32 · num_warps
TILES = [(8, 64, 2), (4, 128, 2), (16, 32, 2), (32, 32, 4), (16, 64, 4), (8, 128, 4), (64, 32, 8), (32, 64, 8)]
# multiplier_two: block_h · block_c = 16 · 32 · num_warps (the x tile of block_c / 2 channels: 8 per thread)
TILES_M2 = [(8, 128, 2), (16, 64, 2), (32, 32, 2), (16, 128, 4), (32, 64, 4)]


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=("fwd", "bwd_data", "bwd_weight"), default="fwd")
    ap.add_argument("--out", default="benchmarks/sweep_dw_window.json")
    ap.add_argument("--stages", type=_ints, default=(1, 3))
    ap.add_argument("--steps", type=_ints, default=(3, 7))
    ap.add_argument("--rows", type=_ints, default=(1, 3))
    ap.add_argument("--warps", type=_ints, default=(2, 4, 8))
    ap.add_argument("--max-registers", type=_ints, default=(0,), help="register caps (maxnreg; 0: none)")
    ap.add_argument("--splits", type=_ints, default=(4, 16, 64), help="backward-weight: splits of the rows")
    ap.add_argument("--multiplier-two", action="store_true", help="multiplier_two keys (K/G = 2), a16 and i32")
    ap.add_argument("--from-default", action="store_true",
                    help="cap the default set's bf16 window instances instead of the tile product")
    ap.add_argument("--filter-rows", type=_ints, default=(1,),
                    help="with --from-default, backward-weight: filter rows per program (1: none)")
    ap.add_argument("--block-w", type=_ints, default=(),
                    help="with --filter-rows: also each instance with these output columns per program")
    ap.add_argument("--tree-reduce-splits", type=_ints, default=(),
                    help="with --from-default, backward-weight: each instance with tree_reduce at these splits")
    args = ap.parse_args()
    if (args.tree_reduce_splits or max(args.filter_rows) > 1) and args.op != "bwd_weight":
        ap.error("--filter-rows and --tree-reduce-splits are backward-weight key fields")
    if args.from_default:
        inst = _default_variants(args.op, [c for c in args.max_registers if c], [r for r in args.filter_rows if r > 1],
                                 args.block_w, args.tree_reduce_splits)
    else:
        inst = _product(args)
    with open(args.out, "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print(args.out, len(inst))


def _default_variants(op, caps=(), filter_rows=(), block_ws=(), tree_splits=()):
    """Variants of the default set's uncapped bf16 window instances of ``op``: each register cap;
    each number of filter rows (× ``block_ws``) that the family's static check accepts; and, after
    those, ``tree_reduce`` at each split (once per distinct key; an invalid split stops)."""
    import attrs

    from ckcore import Registry

    reg = Registry("sm_90")
    reg.declare(f"grouped_conv_{op}", "default")
    inst, trees = [], {}
    for i in reg.of_op(f"grouped_conv_{op}"):
        if i.family != f"dw_win_{op}" or i.key.dtype.value != "bf16" or i.key.max_registers:
            continue
        fam = reg.family(i)
        for cap in caps:
            inst.append({"family": i.family, "key": {**i.key.to_dict(), "max_registers": cap}})
        for rows, bw in itertools.product(filter_rows, sorted({i.key.block_w, *block_ws})):
            key = attrs.evolve(i.key, filter_rows=rows, block_w=bw, block_p=i.key.block_h * bw)
            if not fam.check(key, reg.arch):
                inst.append({"family": i.family, "key": key.to_dict()})
        for split in tree_splits:
            key = attrs.evolve(i.key, split=split, tree_reduce=True)
            if reasons := fam.check(key, reg.arch):
                raise SystemExit(f"{key.name}: {'; '.join(reasons)}")
            trees[key] = {"family": i.family, "key": key.to_dict()}
    return inst + list(trees.values())


def _product(args):
    bwd_weight = args.op == "bwd_weight"
    strides = (1,) if args.op == "bwd_data" else (1, 2)
    stages, rows_unroll = ((1,), (1,)) if bwd_weight else (args.stages, args.rows)
    splits = args.splits if bwd_weight else (0,)
    tiles = [t for t in TILES + (TILES_M2 if args.multiplier_two else []) if t[2] in args.warps]
    accesses = ("a16", "i32") if args.multiplier_two else ("a16",)
    inst = []
    for (bh, bc, w), bw, steps, stride, stages_, rows, cap, split, access in itertools.product(
            tiles, (4, 8), args.steps, strides, stages, rows_unroll, args.max_registers, splits, accesses):
        key = {"dtype": "bf16", "channels_last": True, "block_p": bh * bw, "block_c": bc, "num_warps": w,
               "num_stages": stages_, "access": access, "multiplier_one": not args.multiplier_two, "unroll": steps,
               "block_h": bh, "block_w": bw, "stride_w": stride, "dilation_w": 1, "unroll_rows": rows}
        if args.multiplier_two:
            key["multiplier_two"] = True
        if cap:
            key["max_registers"] = cap
        if split:
            key["split"] = split
        inst.append({"family": f"dw_win_{args.op}", "key": key})
    return _checked(inst) if args.multiplier_two else inst


def _checked(inst):
    """The instances whose family's static check accepts them."""
    from ckcore import Registry

    reg = Registry("sm_90")
    out = []
    for i in inst:
        fam = reg.catalog.families[i["family"]]
        if not fam.check(fam.key_cls(**i["key"]), reg.arch):
            out.append(i)
    return out

if __name__ == "__main__":
    main()
