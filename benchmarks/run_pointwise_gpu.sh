#!/usr/bin/env bash
# Device call for the pointwise GEMM families (ck_plugin_grouped_conv/pointwise.py), per conv op
# given: build the op's default set; GPU tests of every instance on the `pointwise` case (TEST_K:
# the -k expression); then benchmarks/measure_and_train.sh with the pointwise training suite
# (benchmarks/suites/conv_pointwise.jsonl: 1x1 layers of ResNet-50, MobileNetV2, EfficientNet-B0,
# ConvNeXt-T, a 3-D ResNet and Conformer) as EXTRA_SUITE: the dataset's missing pairs, that suite,
# the op's model retrained on the device, `ckcore bench` of BENCH_SUITE against cuDNN. Results: one tarball
# $OUT/pointwise_res.tgz (the device tool returns few files).
# usage (device machine, repository root): OUT=/path [MAX=200] [TEST_S=150] [BENCH_S=150] \
#   bash benchmarks/run_pointwise_gpu.sh grouped_conv_fwd [grouped_conv_bwd_data ...]
set -u
res=/tmp/pw_res
mkdir -p "$res"
source benchmarks/device_setup.sh
export SETUP_DONE=1
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
for op in "$@"; do
  /usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee "$res/build_${op#grouped_conv_}.txt"
done
# The GPU tests' registry builds the three default sets into the same cache.
timeout "${TEST_S:-150}" python3 -m pytest -q -m gpu plugins/grouped_conv/tests/test_conv_gpu.py \
  -k "${TEST_K:-pointwise and every_supporting}" 2>&1 | tail -4 | tee "$res/gpu_tests_pointwise.txt"
for op in "$@"; do
  OUT="$res" EXTRA_SUITE=benchmarks/suites/conv_pointwise.jsonl BENCH_S="${BENCH_S:-150}" \
    bash benchmarks/measure_and_train.sh "$op"
done
tar czf "$OUT/pointwise_res.tgz" -C /tmp pw_res
