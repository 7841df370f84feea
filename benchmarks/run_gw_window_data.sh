#!/usr/bin/env bash
# Device call for the tensor-core grouped windows (gw_win_fwd; OP=grouped_conv_bwd_data for
# gw_win_bwd_data once its instances are in the default sets) on a 2-GPU machine (repository root):
# builds the op's default set, measures every pair of the op's dataset problems they serve
# (benchmarks/suites/tune_gw_win_<fwd|bwd_data>.jsonl, written with their old rows dropped from the
# working tree's dataset by `benchmarks/new_instance_problems.py OP ... --match '^gw_win_'`)
# on both GPUs, retrains the op's model into the tree, runs the families' GPU tests, then benches
# the conv suite for the op with this tree (GPU 0) and with the plugins in .old/ (GPU 1) at once.
# Results: $OUT/gw.tgz (datasets/, models/, logs, bench files). TUNE_S=0: the GPU tests and the
# benches only (the tree's model as it is).
# usage: OUT=/path [OP=grouped_conv_fwd] [TUNE_S=200] [BENCH_S=150] [TEST_S=90] bash benchmarks/run_gw_window_data.sh
set -u
res=/tmp/gw
mkdir -p "$res/datasets" "$res/models"
source benchmarks/device_prologue.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckgw/ck TRITON_CACHE_DIR=/tmp/ckgw/triton
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
op=${OP:-grouped_conv_fwd}
if [ "${TUNE_S:-200}" != 0 ]; then
cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$res/datasets/"
ckcore build $op --workers 30 > "$res/build.txt" 2>&1
tail -2 "$res/build.txt"
ckcore tune $op --suite "benchmarks/suites/tune_gw_win_${op#grouped_conv_}.jsonl" --out "$res/datasets/${op}_h200.jsonl.gz" \
  --devices 0,1 --max-seconds "${TUNE_S:-200}" 2>"$res/tune.log" | tail -1 | tee "$res/tune.json"
rm -f "$res"/datasets/*.lock
ckcore train $op --data "$res/datasets/${op}_h200.jsonl.gz" --out "$models" > "$res/train.txt" 2>&1
tail -n 4 "$res/train.txt"
cp "$models"/${op}_sm_90.* "$res/models/"
fi
CUDA_VISIBLE_DEVICES=0 timeout "${TEST_S:-90}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py \
  -k grouped_window > "$res/gpu_tests.txt" 2>&1
tail -1 "$res/gpu_tests.txt"
old="$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise"
(CUDA_VISIBLE_DEVICES=0 timeout "${BENCH_S:-150}" ckcore bench $op --suite benchmarks/suites/conv.jsonl --out "$res/bench_new.jsonl" \
   > "$res/bench_new.txt" 2>&1) &
(PYTHONPATH=$old CUDA_VISIBLE_DEVICES=1 timeout "${BENCH_S:-150}" ckcore bench $op --suite benchmarks/suites/conv.jsonl \
   --out "$res/bench_old.jsonl" > "$res/bench_old.txt" 2>&1) &
wait
tail -n 1 "$res"/bench_*.txt | cut -c1-400
rm -f "$res"/*.lock
tar czf "$OUT/gw.tgz" -C /tmp gw
