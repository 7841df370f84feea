#!/usr/bin/env bash
# After a kernel change to one conv op, in one device call (repository root): build its default
# set, run its GPU tests, measure the tune dataset's missing pairs (benchmarks/collect_datasets.sh),
# retrain its model on the device with that dataset, then `ckcore bench` the public conv suite
# against cuDNN with the new model. Outputs (dataset, model, logs, bench) go to OUT.
# TESTS overrides the GPU test paths, TEST_K their -k expression (default: the direction),
# TEST_S / BENCH_S cap the tests / bench (seconds).
# usage: OUT=/path MAX=200 bash benchmarks/refresh_conv_op.sh grouped_conv_bwd_data
set -u
op=$1
out=${OUT:-benchmarks/results}
mkdir -p "$out/models"
source benchmarks/device_setup.sh
export SETUP_DONE=1
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
/usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee "$out/build_$op.txt"
timeout "${TEST_S:-200}" python3 -m pytest -q -m gpu ${TESTS:-plugins/grouped_conv/tests plugins/depthwise/tests} -k "${TEST_K:-${op#grouped_conv_}}" 2>&1 | tail -8 \
  | tee "$out/gpu_tests_$op.txt"
DEST="$out/datasets" LOGS="$out" MAX="${MAX:-200}" bash benchmarks/collect_datasets.sh "$op"
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
ckcore train "$op" --data "$out/datasets/${op}_h200.jsonl.gz" --out "$models" 2>&1 | tee "$out/train_$op.txt"
cp "$models/${op}_sm_90".* "$out/models/"
timeout "${BENCH_S:-200}" ckcore bench "$op" --suite benchmarks/suites/conv.jsonl \
  --out "$out/bench_conv_${op#grouped_conv_}_h200.jsonl" 2>&1 | tail -3
