#!/usr/bin/env bash
# Nsight Compute on backward-weight instances of ResNeXt-50's grouped 3x3 layers (suite rows
# resnext50.l1.g32, C/G = 4, and resnext50.l4.g32, C/G = 32; bf16 channels-last): the implicit
# GEMM per tap against tap blocks; report as text in $OUT/wgrad_ncu.txt, do_bench times first.
# usage: OUT=/path bash benchmarks/wgrad_ncu.sh
set -u
source benchmarks/ncu_env.sh
l1='{"ndim":2,"N":32,"G":32,"C":128,"K":128,"spatial":[56,56],"filter":[3,3],"stride":[1,1],"pad":[1,1],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
l4='{"ndim":2,"N":32,"G":32,"C":1024,"K":1024,"spatial":[7,7],"filter":[3,3],"stride":[1,1],"pad":[1,1],"dilation":[1,1],"dtype":"bf16","layout":"nhwgc"}'
op=grouped_conv_bwd_weight
i=conv_bwd_weight_bf16_cl
for pr in "$l1" "$l4"; do
  if [ "$pr" = "$l1" ]; then
    names="${i}_64x64x64_gpb16_w4_s3_k32_a16 ${i}_32x32x64_gpb8_w4_s3_k32_a16 ${i}_32x32x64_gpb8_w4_s3_k32_tb9_a16"
  else
    names="${i}_32x32x64_gpb1_w4_s3_k8_a16 ${i}_64x64x64_gpb1_w4_s3_k8_a16 ${i}_32x32x64_gpb1_w4_s3_k8_tb9_a16"
  fi
  python3 benchmarks/dw_ncu.py $op "$pr" $names 2>&1 | grep -v -i warn | tee -a $OUT/wgrad_times.txt
  ncu --clock-control none -k regex:conv_bwd_weight --launch-skip 0 --launch-count 6 $sections \
    python3 benchmarks/dw_ncu.py $op "$pr" $names --time 2>&1 | grep -v -i "warn" >> $OUT/wgrad_ncu.txt
done
grep -E "conv_bwd_weight_|Duration|Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|L1/TEX Hit|L2 Hit|Stall|Warp Cycles Per Issued|Eligible Warps|Block Limit|Dynamic Shared" $OUT/wgrad_ncu.txt | head -200
