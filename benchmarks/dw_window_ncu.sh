#!/usr/bin/env bash
# Nsight Compute on sliding-window depthwise forward instances (dw_win_fwd) on two memory-bound
# 3x3 suite rows (MobileNetV2 dw32 at 112x112 and dw144 at 56x56, bf16), next to the tap-by-tap
# spatial tile they replaced, and cuDNN's kernel for the same problem (the op's torch baseline in
# an NVTX range); report as text in $OUT/dw_window_ncu.txt (rewritten), key lines printed.
# OP and INST (space-separated instance names) profile other instances of another direction on the
# same two rows, e.g. OP=grouped_conv_bwd_weight INST="dw_win_bwd_weight_... dw_bwd_weight_...".
# usage (device machine, repository root): OUT=DIR [OP=grouped_conv_fwd INST=...] bash benchmarks/dw_window_ncu.sh
set -u
source benchmarks/ncu_env.sh
: > $OUT/dw_window_ncu.txt
p32='{"ndim":2,"N":32,"G":32,"C":32,"K":32,"spatial":[112,112],"filter":[3,3],"stride":[1,1],"pad":[1,1],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
p144='{"ndim":2,"N":32,"G":144,"C":144,"K":144,"spatial":[56,56],"filter":[3,3],"stride":[1,1],"pad":[1,1],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
inst=${INST:-"dw_win_fwd_bf16_cl_p128xc32_w2_s1_h16_x8_sw1d1_m1_t3_a16 dw_win_fwd_bf16_cl_p32xc64_w2_s1_h8_x4_sw1d1_m1_t3_a16 dw_fwd_bf16_cl_p128xc32_w4_s1_h2_m1_a16"}
op=${OP:-grouped_conv_fwd}
n=$(echo $inst | wc -w)
for pr in "$p32" "$p144"; do
  python3 benchmarks/dw_ncu.py $op "$pr" $inst 2>&1 | grep -v -i warn | tee -a $OUT/dw_window_ncu.txt
  timeout 120 ncu --clock-control none -k regex:dw_ --launch-skip 0 --launch-count $((2 * n)) $sections \
    python3 benchmarks/dw_ncu.py $op "$pr" $inst --time 2>&1 | grep -v -i "warn" >> $OUT/dw_window_ncu.txt
  echo "== cuDNN" >> $OUT/dw_window_ncu.txt
  timeout 120 ncu --clock-control none --nvtx --nvtx-include "torch/" $sections \
    python3 benchmarks/dw_ncu.py $op "$pr" --torch --time 2>&1 | grep -v -i "warn" >> $OUT/dw_window_ncu.txt
done
grep -E "^  [a-zA-Z_]|== cuDNN|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Eligible Warps|Theoretical Occupancy" $OUT/dw_window_ncu.txt | head -120
