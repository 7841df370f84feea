"""Writes benchmarks/sweep_conv_fwd.json: the forward-conv kernel set swept on the GPU to choose
the default tiles and fit the rules constants (bf16, channels-last; group-merging tiles with
BM 64-256, BN = BK 32 or 64, 2-16 groups per block; dense tiles BM 64-256, BN 64/128, BK 32/64;
warps 4/8; stages 1-4). usage: python benchmarks/make_conv_sweep_set.py"""

import itertools
import json


def main():
    inst = []

    def add(bm, bn, bk, gpb, w, s):
        if bm * bn < 32 * w * 4 or bm * bn // (32 * w) > 128:
            return
        inst.append({"family": "conv_fwd", "key": {"dtype": "bf16", "channels_last": True, "block_m": bm, "block_n": bn,
                                                   "block_k": bk, "groups_per_block": gpb, "num_warps": w,
                                                   "num_stages": s, "access": "a16"}})

    for bm, (bn, bk), gpb, w, s in itertools.product((64, 128, 256), ((32, 32), (64, 64)), (2, 4, 8, 16), (4, 8), (1, 2, 3, 4)):
        add(bm, bn, bk, gpb, w, s)
    for bm, bn, bk, w, s in itertools.product((64, 128, 256), (64, 128), (32, 64), (4, 8), (1, 2, 3, 4)):
        add(bm, bn, bk, 1, w, s)
    with open("benchmarks/sweep_conv_fwd.json", "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print(len(inst))


if __name__ == "__main__":
    main()
