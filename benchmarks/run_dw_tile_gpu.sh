#!/usr/bin/env bash
# Device call for the depthwise spatial tiles (block_h) of one op (OP, default grouped_conv_fwd),
# in two steps so each fits one call: `measure` builds the op's default set, runs its depthwise
# channels-last GPU tests, measures the dataset's missing pairs (benchmarks/collect_datasets.sh)
# and retrains the op's model on the device; `bench` (same machine, right after) benches the conv
# suite against cuDNN with that model and computes the depthwise roofline. Results go to one tarball,
# $OUT/dw_tile_<step>.tgz (the device tool returns few files).
# usage: OUT=/path [OP=grouped_conv_bwd_data] bash benchmarks/run_dw_tile_gpu.sh measure|bench
set -u
step=$1
res=/tmp/dw_tile_res
mkdir -p "$res"
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
op=${OP:-grouped_conv_fwd}
dir=${op#grouped_conv_}
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
if [ "$step" = measure ]; then
  source benchmarks/device_setup.sh
  export SETUP_DONE=1
  /usr/bin/time -f "$op build %e s" ckcore build $op --workers 16 2>&1 | tail -2 | tee "$res/build.txt"
  timeout "${TEST_S:-100}" python3 -m pytest -q -m gpu plugins/depthwise/tests -k "$dir and cl" 2>&1 | tail -6 | tee "$res/gpu_tests_dw_$dir.txt"
  DEST="$res/datasets" LOGS="$res" MAX="${MAX:-270}" bash benchmarks/collect_datasets.sh $op
  ckcore train $op --data "$res/datasets/${op}_h200.jsonl.gz" --out "$models" 2>&1 | tee "$res/train.txt"
  mkdir -p "$res/models" && cp "$models/${op}_sm_90".* "$res/models/"
else
  export PYTHONUNBUFFERED=1
  cp "$res/models/${op}_sm_90".* "$models/"
  timeout "${BENCH_S:-300}" ckcore bench $op --suite benchmarks/suites/conv.jsonl --out "$res/bench_conv_${dir}_h200.jsonl" 2>&1 | tail -3
  python3 benchmarks/dw_roofline.py "$res/dw_roofline_$dir.json" "$res/bench_conv_${dir}_h200.jsonl" > "$res/dw_roofline_$dir.txt"
  cat "$res/dw_roofline_$dir.txt"
fi
tar czf "$OUT/dw_tile_$step.tgz" -C /tmp dw_tile_res
