#!/usr/bin/env bash
# The sliding-window depthwise families against the session-start tree, on one GPU in one call
# (repository root; results under OUT): the depthwise GPU tests of forward and backward-data
# (channels-last cases: every supporting default dw_* instance against the float64 reference),
# then `ckcore bench` of the depthwise rows (C/G = 1) of benchmarks/suites/conv.jsonl for forward
# and backward-data, each with this tree's plugins and with the depthwise and grouped-conv plugins
# (and models) carried in .old/ (PYTHONPATH), one after the other, then the depthwise roofline.
# Prepare .old/ here: `git archive REV plugins/depthwise plugins/grouped_conv | tar -x -C .old`.
# With FOUR=1 (a 4-GPU machine) the benches come first and run at once: GPU 0 forward and GPU 1
# backward-data, this tree then .old/; GPUs 2 and 3 the same in the other order (files ..._r);
# then the GPU tests on GPU 0; everything under OUT in one archive, dw_ab_TAG.tgz.
# usage: OUT=DIR [TEST_S=200] [BENCH_S=120] [FOUR=1] bash benchmarks/run_dw_window_ab_gpu.sh [TAG]
set -u
# FOUR=1 archives and removes what OUT holds: never the committed results folder.
[ "${FOUR:-0}" = 1 ] && : "${OUT:?FOUR=1 needs OUT}"
source benchmarks/device_prologue.sh
set +e
old=$PWD/.old/plugins/depthwise:$PWD/.old/plugins/grouped_conv
dw_rows /tmp/dw_suite.jsonl
bench_dw() {  # OP SIDE [SUFFIX]: one bench of the depthwise rows, this tree (new) or .old/ (old)
  local path=""; [ "$2" = old ] && path=$old
  PYTHONPATH=$path timeout "${BENCH_S:-120}" ckcore bench "$1" --suite /tmp/dw_suite.jsonl \
    --out "$out/bench_dw_${1#grouped_conv_}_$2_$tag${3:-}.jsonl" 2>&1 | tail -1 | cut -c1-200 | sed "s/^/${1#grouped_conv_} $2${3:-}: /"
}
if [ "${FOUR:-0}" = 1 ]; then
  (export CUDA_VISIBLE_DEVICES=0; bench_dw grouped_conv_fwd new; bench_dw grouped_conv_fwd old) &
  (export CUDA_VISIBLE_DEVICES=1; bench_dw grouped_conv_bwd_data new; bench_dw grouped_conv_bwd_data old) &
  (export CUDA_VISIBLE_DEVICES=2; bench_dw grouped_conv_fwd old _r; bench_dw grouped_conv_fwd new _r) &
  (export CUDA_VISIBLE_DEVICES=3; bench_dw grouped_conv_bwd_data old _r; bench_dw grouped_conv_bwd_data new _r) &
  wait
  export CUDA_VISIBLE_DEVICES=0
else
  for op in grouped_conv_fwd grouped_conv_bwd_data; do
    bench_dw $op new
    bench_dw $op old
  done
fi
if [ "${TEST_S:-200}" -gt 0 ]; then
  timeout "${TEST_S:-200}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py \
    -k "cl and (grouped_conv_fwd or grouped_conv_bwd_data)" 2>&1 | tail -3 | tee "$out/gpu_tests_dw_window_$tag.txt"
fi
python3 benchmarks/dw_roofline.py "$out/dw_roofline_window_$tag.json" "$out"/bench_dw_*_new_$tag.jsonl | tail -22
if [ "${FOUR:-0}" = 1 ]; then
  tar czf "$out/dw_ab_$tag.tgz" -C "$out" --remove-files $(cd "$out" && ls | grep -v "\.tgz$")
fi
