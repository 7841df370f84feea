#!/usr/bin/env bash
# Device call for the sliding-window depthwise families on a 4-GPU machine (repository root):
# measures every pair of the problems they serve (suites benchmarks/suites/tune_dw_win_{fwd,bwd_data}.jsonl,
# written with their old rows dropped from the working tree's datasets by
# benchmarks/new_instance_problems.py) whole on one machine, forward on GPUs 0-1 and backward-data
# on GPUs 2-3 at once; retrains both models; then benches the public conv suite against cuDNN for
# both ops, one GPU each at once, and computes the depthwise roofline. Results: $OUT/w.tgz.
# usage: OUT=/path [TUNE_S=260] [BENCH_S=170] bash benchmarks/run_dw_window_data.sh
set -u
res=/tmp/w
mkdir -p "$res/datasets" "$res/models"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckw/ck TRITON_CACHE_DIR=/tmp/ckw/triton
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
for op in grouped_conv_fwd grouped_conv_bwd_data; do
  cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$res/datasets/"
  ckcore build $op --workers 8 > "$res/build_$op.txt" 2>&1 &
done
wait
ckcore tune grouped_conv_fwd --suite benchmarks/suites/tune_dw_win_fwd.jsonl --out "$res/datasets/grouped_conv_fwd_h200.jsonl.gz" \
  --devices 0,1 --max-seconds "${TUNE_S:-260}" 2>"$res/tune_fwd.log" | tail -1 > "$res/tune_fwd.json" &
ckcore tune grouped_conv_bwd_data --suite benchmarks/suites/tune_dw_win_bwd_data.jsonl --out "$res/datasets/grouped_conv_bwd_data_h200.jsonl.gz" \
  --devices 2,3 --max-seconds "${TUNE_S:-260}" 2>"$res/tune_bwd_data.log" | tail -1 > "$res/tune_bwd_data.json" &
wait
cat "$res"/tune_*.json
rm -f "$res"/datasets/*.lock
for op in grouped_conv_fwd grouped_conv_bwd_data; do
  ckcore train $op --data "$res/datasets/${op}_h200.jsonl.gz" --out "$models" > "$res/train_$op.txt" 2>&1 &
done
wait
tail -n 4 "$res"/train_*.txt
cp "$models"/grouped_conv_{fwd,bwd_data}_sm_90.* "$res/models/"
CUDA_VISIBLE_DEVICES=0 timeout "${BENCH_S:-170}" ckcore bench grouped_conv_fwd --suite benchmarks/suites/conv.jsonl \
  --out "$res/bench_conv_fwd.jsonl" > "$res/bench_fwd.txt" 2>&1 &
CUDA_VISIBLE_DEVICES=1 timeout "${BENCH_S:-170}" ckcore bench grouped_conv_bwd_data --suite benchmarks/suites/conv.jsonl \
  --out "$res/bench_conv_bwd_data.jsonl" > "$res/bench_bwd_data.txt" 2>&1 &
wait
tail -n 1 "$res"/bench_*.txt
CUDA_VISIBLE_DEVICES=0 python3 benchmarks/dw_roofline.py "$res/dw_roofline.json" "$res/bench_conv_fwd.jsonl" "$res/bench_conv_bwd_data.jsonl" > "$res/dw_roofline.txt" 2>&1
cat "$res/dw_roofline.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$res/gpu.txt" 2>&1
tar czf "$OUT/w.tgz" -C /tmp w
