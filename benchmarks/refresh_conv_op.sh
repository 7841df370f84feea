#!/usr/bin/env bash
# After a kernel change to one conv op, in one device call (repository root): build its default
# set, run its GPU tests, measure the tune dataset's missing pairs (benchmarks/collect_datasets.sh),
# retrain its model on the device with that dataset, then `ckcore bench` the public conv suite
# against cuDNN with the new model. Outputs (dataset, model, logs, bench) go to OUT.
# TESTS overrides the GPU test paths, TEST_K their -k expression (default: the direction),
# TEST_S / BENCH_S cap the tests / bench (seconds); the measuring half is
# benchmarks/measure_and_train.sh (EXTRA_SUITE, BENCH_SUITE).
# usage: OUT=/path MAX=200 bash benchmarks/refresh_conv_op.sh grouped_conv_bwd_data
set -u
op=$1
export OUT=${OUT:-benchmarks/results}
out=$OUT
mkdir -p "$out"
source benchmarks/device_setup.sh
export SETUP_DONE=1
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
/usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee "$out/build_$op.txt"
timeout "${TEST_S:-200}" python3 -m pytest -q -m gpu ${TESTS:-plugins/grouped_conv/tests plugins/depthwise/tests} -k "${TEST_K:-${op#grouped_conv_}}" 2>&1 | tail -8 \
  | tee "$out/gpu_tests_$op.txt"
bash benchmarks/measure_and_train.sh "$op"
