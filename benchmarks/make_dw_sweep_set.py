"""Writes benchmarks/sweep_dw.json: the direct depthwise forward and backward-data instances swept
on the GPU to choose the default set (bf16 and fp16, channels-last, multiplier one, the default
channels-last tiles × num_stages 1/3 × unroll 1/3/9 taps per step, plus the 64x64 tile with
32-bit indexing for unaligned channel counts; backward-data one-tap tiles also as unit-stride twins),
and benchmarks/sweep_dw_bwd_weight.json: backward-weight tiles × taps per pass (1, 3, 7, 9,
as many as 128 fp32 accumulators per thread allow) × splits 4-64, same dtypes and layout
(round 3 also swept num_stages 2: it timed the same as 1).
usage: python benchmarks/make_dw_sweep_set.py; then on the GPU: bash benchmarks/run_dw_sweep.sh OUT"""

import itertools
import json

TILES = [(64, 64, 4), (128, 32, 4), (32, 128, 4), (128, 64, 8)]
# Backward-weight (block_p, block_c, num_warps): the default tiles and smaller ones that leave
# registers for several per-tap accumulator tiles.
BWD_WEIGHT_TILES = [(64, 64, 4), (128, 32, 4), (32, 32, 4), (64, 32, 4), (32, 64, 4), (32, 64, 8), (64, 64, 8),
                    (16, 64, 4), (128, 64, 8)]


def main():
    inst = []
    for family, dtype, (bp, bc, w), s, u in itertools.product(("dw_fwd", "dw_bwd_data"), ("bf16", "fp16"), TILES,
                                                               (1, 3), (1, 3, 9)):
        for access in ("a16", "i32") if (bp, bc) == (64, 64) else ("a16",):
            key = {"dtype": dtype, "channels_last": True, "block_p": bp, "block_c": bc, "num_warps": w,
                   "num_stages": s, "access": access, "multiplier_one": True, "unroll": u}
            inst.append({"family": family, "key": key})
            if family == "dw_bwd_data" and u == 1:  # the unit-stride twin (no per-tap division)
                inst.append({"family": family, "key": {**key, "unit_stride": True}})
    write("benchmarks/sweep_dw.json", inst)
    inst = []
    for dtype, (bp, bc, w), taps, split, s in itertools.product(("bf16", "fp16"), BWD_WEIGHT_TILES, (1, 3, 7, 9),
                                                                (4, 16, 64), (1,)):
        if taps * bp * bc // (32 * w) <= 128:
            inst.append({"family": "dw_bwd_weight", "key": {
                "dtype": dtype, "channels_last": True, "block_p": bp, "block_c": bc, "num_warps": w, "num_stages": s,
                "access": "a16", "multiplier_one": True, "unroll": taps, "split": split}})
    write("benchmarks/sweep_dw_bwd_weight.json", inst)


def write(path, inst):
    with open(path, "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print(path, len(inst))


if __name__ == "__main__":
    main()
