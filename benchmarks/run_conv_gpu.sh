#!/usr/bin/env bash
# Grouped and depthwise convolution on the GPU, in one device call: build of the default sets
# (timed), GPU tests, `ckcore bench` of the three directions on the public conv suite against
# cuDNN (both conv plugins installed), and the depthwise rows against the roofline.
# usage (device machine, repository root): bash benchmarks/run_conv_gpu.sh OUTDIR [tests|bench|all]
set -u
out=${1:-benchmarks/results}
what=${2:-all}
mkdir -p "$out"
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckconv/ck TRITON_CACHE_DIR=/tmp/ckconv/triton
for op in grouped_conv_fwd grouped_conv_bwd_data grouped_conv_bwd_weight; do
  /usr/bin/time -f "$op build %e s" ckcore build $op --workers 16 2>&1 | tail -2 | tee -a "$out/conv_build.txt"
done
if [ "$what" != bench ]; then
  timeout 330 python3 -m pytest -q -x -m gpu plugins/grouped_conv/tests plugins/depthwise/tests 2>&1 | tail -15 | tee "$out/conv_gpu_tests.txt"
fi
if [ "$what" != tests ]; then
  for op in ${OPS:-grouped_conv_fwd grouped_conv_bwd_data grouped_conv_bwd_weight}; do
    timeout 300 ckcore bench $op --suite benchmarks/suites/conv.jsonl --out "$out/bench_conv_${op#grouped_conv_}_h200.jsonl" 2>&1 | tee "/tmp/bench_${op}.txt" | tail -1
  done
  python3 benchmarks/dw_roofline.py "$out/dw_roofline_h200.json" "$out"/bench_conv_*_h200.jsonl > "$out/dw_roofline.txt" 2>&1
fi
