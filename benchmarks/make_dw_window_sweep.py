"""Writes benchmarks/sweep_dw_window.json: sliding-window depthwise forward instances (dw_win_fwd)
swept on the GPU: bf16, channels-last, multiplier one, a16; [block_h, block_c] tiles of 8 elements
per thread for 2, 4 and 8 warps × 4 or 8 unrolled output columns × 3 or 7 column taps per step ×
column stride 1 and 2 × num_stages 1 and 3 × the filter-row loop unrolled 1 or 3 times.
usage: python benchmarks/make_dw_window_sweep.py; then on the GPU:
       ckcore tune grouped_conv_fwd --suite SUITE --kernel-set-file benchmarks/sweep_dw_window.json"""

import itertools
import json

# (block_h, block_c, num_warps): block_h · block_c = 8 · 32 · num_warps
TILES = [(8, 64, 2), (4, 128, 2), (16, 32, 2), (32, 32, 4), (16, 64, 4), (8, 128, 4), (64, 32, 8), (32, 64, 8)]


def main():
    inst = []
    for (bh, bc, w), bw, steps, stride, stages, rows in itertools.product(TILES, (4, 8), (3, 7), (1, 2), (1, 3), (1, 3)):
        inst.append({"family": "dw_win_fwd", "key": {
            "dtype": "bf16", "channels_last": True, "block_p": bh * bw, "block_c": bc, "num_warps": w,
            "num_stages": stages, "access": "a16", "multiplier_one": True, "unroll": steps, "block_h": bh,
            "block_w": bw, "stride_w": stride, "dilation_w": 1, "unroll_rows": rows}})
    with open("benchmarks/sweep_dw_window.json", "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
        f.write("\n")
    print("benchmarks/sweep_dw_window.json", len(inst))


if __name__ == "__main__":
    main()
