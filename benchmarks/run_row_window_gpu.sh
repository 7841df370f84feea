#!/usr/bin/env bash
# The filter-row family of one conv op (conv_row_fwd or conv_row_bwd_weight) on the GPU, in one
# device call (repository root): build the op's default set, run its first-layer GPU tests (every
# supporting instance of every family against the reference, three stems, every dtype and layout),
# measure the dataset's missing pairs and every default instance on the first-layer suite
# (benchmarks/suites/first_layers.jsonl), retrain the op's model on the device, then `ckcore bench`
# the public conv suite and the first-layer suite against cuDNN. Everything goes to OUT.
# usage: OUT=/path [MAX=150] [TEST_S=120] [BENCH_S=170] bash benchmarks/run_row_window_gpu.sh OP
set -u
op=$1
out=${OUT:?OUT: where results go}
mkdir -p "$out"
source benchmarks/device_setup.sh
export SETUP_DONE=1
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
/usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee "$out/build_$op.txt"
timeout "${TEST_S:-120}" python3 -m pytest -q -m gpu plugins/grouped_conv/tests/test_conv_gpu.py \
  -k "first_layer and ${op#grouped_conv_}" 2>&1 | tail -6 | tee "$out/gpu_tests_row_$op.txt"
EXTRA_SUITE=benchmarks/suites/first_layers.jsonl MAX="${MAX:-150}" BENCH_S="${BENCH_S:-170}" \
  bash benchmarks/measure_and_train.sh "$op"
timeout 90 ckcore bench "$op" --suite benchmarks/suites/first_layers.jsonl \
  --out "$out/bench_first_layers_${op#grouped_conv_}.jsonl" 2>&1 | tail -3
