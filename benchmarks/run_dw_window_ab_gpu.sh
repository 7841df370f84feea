#!/usr/bin/env bash
# The sliding-window depthwise families against the session-start tree, on one GPU in one call
# (repository root; results under OUT): the depthwise GPU tests of forward and backward-data
# (channels-last cases: every supporting default dw_* instance against the float64 reference),
# then `ckcore bench` of the depthwise rows (C/G = 1) of benchmarks/suites/conv.jsonl for forward
# and backward-data, each with this tree's plugins and with the depthwise and grouped-conv plugins
# (and models) carried in .old/ (PYTHONPATH), one after the other, then the depthwise roofline.
# Prepare .old/ here: `git archive REV plugins/depthwise plugins/grouped_conv | tar -x -C .old`.
# usage: OUT=DIR [TEST_S=200] [BENCH_S=120] bash benchmarks/run_dw_window_ab_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
old=$PWD/.old/plugins/depthwise:$PWD/.old/plugins/grouped_conv
if [ "${TEST_S:-200}" -gt 0 ]; then
  timeout "${TEST_S:-200}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py \
    -k "cl and (grouped_conv_fwd or grouped_conv_bwd_data)" 2>&1 | tail -3 | tee "$out/gpu_tests_dw_window_$tag.txt"
fi
python3 -c "
import json
rows = [json.loads(l) for l in open('benchmarks/suites/conv.jsonl') if l.strip()]
open('/tmp/dw_suite.jsonl', 'w').writelines(json.dumps(r) + '\n' for r in rows if r['C'] == r['G'])"
for op in grouped_conv_fwd grouped_conv_bwd_data; do
  d=${op#grouped_conv_}
  for side in new old; do
    path=""; [ $side = old ] && path=$old
    PYTHONPATH=$path timeout "${BENCH_S:-120}" ckcore bench $op --suite /tmp/dw_suite.jsonl \
      --out "$out/bench_dw_${d}_${side}_$tag.jsonl" 2>&1 | tail -1 | cut -c1-200 | sed "s/^/$d $side: /"
  done
done
python3 benchmarks/dw_roofline.py "$out/dw_roofline_window_$tag.json" "$out"/bench_dw_*_new_$tag.jsonl | tail -22
