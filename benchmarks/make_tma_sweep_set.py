"""Writes benchmarks/sweep_tma_bwd_weight.json: TMA backward-weight instances swept on the GPU to
choose the default set (bf16; patches 1x64 to 16x8 x dw tiles 64x64, 128x64, 64x128 (4 warps, 3
stages) and 128x128 (8 warps, 2 stages) x splits 4, 16, 64).
usage: python benchmarks/make_tma_sweep_set.py; then on the GPU:
ckcore tune grouped_conv_bwd_weight --suite benchmarks/suites/conv.jsonl \
    --kernel-set-file benchmarks/sweep_tma_bwd_weight.json --out OUT/tma_sweep_bwd_weight_h200.jsonl.gz"""

import itertools
import json

PATCHES = [(1, 64), (1, 128), (2, 64), (4, 32), (8, 16), (16, 8), (8, 8)]
TILES = [(64, 64, 4, 3), (128, 64, 4, 3), (64, 128, 4, 3), (128, 128, 8, 2)]


def main():
    inst = [{"family": "conv_tma_bwd_weight",
             "key": {"dtype": "bf16", "block_h": bh, "block_w": bw, "block_m": bm, "block_n": bn, "split_k": s,
                     "num_warps": w, "num_stages": st}}
            for (bh, bw), (bm, bn, w, st), s in itertools.product(PATCHES, TILES, (4, 16, 64))]
    with open("benchmarks/sweep_tma_bwd_weight.json", "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print(len(inst))


if __name__ == "__main__":
    main()
