#!/usr/bin/env bash
# Nsight Compute on depthwise forward instances, consecutive-pixel against spatial tiles, on two
# suite rows (ConvNeXt 7x7 and MobileNetV2 3x3); one report as text in $OUT/dw_ncu.txt.
set -u
source benchmarks/ncu_env.sh
p7='{"ndim":2,"N":32,"G":96,"C":96,"K":96,"spatial":[56,56],"filter":[7,7],"stride":[1,1],"pad":[3,3],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
p3='{"ndim":2,"N":32,"G":32,"C":32,"K":32,"spatial":[112,112],"filter":[3,3],"stride":[1,1],"pad":[1,1],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
flat=dw_fwd_bf16_cl_p128xc32_w4_s1_m1_t3_a16
for pr in "$p7" "$p3"; do
  tiles="$flat dw_fwd_bf16_cl_p32xc128_w4_s1_h4_m1_t3_a16 dw_fwd_bf16_cl_p64xc32_w4_s1_h8_m1_t3_a16"
  python3 benchmarks/dw_ncu.py grouped_conv_fwd "$pr" $tiles 2>&1 | grep -v -i warn
  ncu --clock-control none -k regex:dw_fwd --launch-skip 0 --launch-count 6 $sections \
    python3 benchmarks/dw_ncu.py grouped_conv_fwd "$pr" $tiles --time 2>&1 | grep -v -i "warn" >> $OUT/dw_ncu.txt
done
grep -E "dw_fwd_|Duration|Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|L1/TEX Hit|L2 Hit|Stall|Warp Cycles Per Issued|Eligible Warps" $OUT/dw_ncu.txt | head -150
