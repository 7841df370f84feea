#!/usr/bin/env bash
# Device call for the sliding-window depthwise families on a 4-GPU machine (repository root):
# measures every pair of the problems new instances serve (suites
# benchmarks/suites/tune_${SUITES}_{fwd,bwd_data}.jsonl, SUITES default dw_win, written with their old
# rows dropped from the working tree's datasets by benchmarks/new_instance_problems.py) whole on one
# machine, forward on GPUs 0-1 and backward-data on GPUs 2-3 at once; retrains both models; then
# benches against cuDNN, one GPU per op at once, and computes the depthwise roofline: the public
# conv suite, or, where .old/ holds another commit's grouped-conv and depthwise plugins
# (`git archive REV plugins/grouped_conv plugins/depthwise | tar -x -C .old`, carried), the
# suite's depthwise rows with this tree and then with .old/ on the same GPU. Results: $OUT/w.tgz.
# With SWEEP_OP=bwd_weight (or fwd, bwd_data), backward-data is measured on GPU 2 alone and GPU 3 runs
# benchmarks/run_dw_window_sweep.sh for that op at the same time (SWEEP file, TEST_S; into $OUT/sweep).
# BENCH_S=0 skips the benches and the roofline (the models are still retrained and returned).
# usage: OUT=/path [SUITES=dw_win] [TUNE_S=260] [BENCH_S=170] [SWEEP_OP=op SWEEP=FILE TEST_S=150]
#        bash benchmarks/run_dw_window_data.sh
set -u
res=/tmp/w
mkdir -p "$res/datasets" "$res/models"
source benchmarks/device_prologue.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckw/ck TRITON_CACHE_DIR=/tmp/ckw/triton
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
if [ -n "${SWEEP_OP:-}" ]; then
  mkdir -p "$OUT/sweep"
  (CUDA_VISIBLE_DEVICES=3 OP=$SWEEP_OP OUT=$OUT/sweep TUNE_S=${TUNE_S:-260} \
   bash benchmarks/run_dw_window_sweep.sh > "$OUT/sweep/sweep.txt" 2>&1) &
  sweep=$!
fi
for op in grouped_conv_fwd grouped_conv_bwd_data; do
  cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$res/datasets/"
  ckcore build $op --workers 8 > "$res/build_$op.txt" 2>&1 &
  builds="${builds:-} $!"
done
wait $builds
ckcore tune grouped_conv_fwd --suite "benchmarks/suites/tune_${SUITES:-dw_win}_fwd.jsonl" --out "$res/datasets/grouped_conv_fwd_h200.jsonl.gz" \
  --devices 0,1 --max-seconds "${TUNE_S:-260}" 2>"$res/tune_fwd.log" | tail -1 > "$res/tune_fwd.json" &
tunes=$!
ckcore tune grouped_conv_bwd_data --suite "benchmarks/suites/tune_${SUITES:-dw_win}_bwd_data.jsonl" --out "$res/datasets/grouped_conv_bwd_data_h200.jsonl.gz" \
  --devices "$([ -n "${SWEEP_OP:-}" ] && echo 2 || echo 2,3)" --max-seconds "${TUNE_S:-260}" 2>"$res/tune_bwd_data.log" | tail -1 > "$res/tune_bwd_data.json" &
wait $tunes $!
cat "$res"/tune_*.json
rm -f "$res"/datasets/*.lock
for op in grouped_conv_fwd grouped_conv_bwd_data; do
  ckcore train $op --data "$res/datasets/${op}_h200.jsonl.gz" --out "$models" > "$res/train_$op.txt" 2>&1 &
  trains="${trains:-} $!"
done
wait $trains
tail -n 4 "$res"/train_*.txt
cp "$models"/grouped_conv_{fwd,bwd_data}_sm_90.* "$res/models/"
if [ "${BENCH_S:-170}" = 0 ]; then
  [ -n "${sweep:-}" ] && wait "$sweep"
  tar czf "$OUT/w.tgz" -C /tmp w
  exit 0
fi
bench_conv() {  # GPU OP SUITE NAME [PYTHONPATH]
  PYTHONPATH=${5:-} CUDA_VISIBLE_DEVICES=$1 timeout "${BENCH_S:-170}" ckcore bench "$2" --suite "$3" \
    --out "$res/bench_$4.jsonl" > "$res/bench_$4.txt" 2>&1
}
if [ -d .old/plugins ]; then
  dw_rows /tmp/dw_rows.jsonl
  old="$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise"
  (bench_conv 0 grouped_conv_fwd /tmp/dw_rows.jsonl conv_fwd; bench_conv 0 grouped_conv_fwd /tmp/dw_rows.jsonl conv_fwd_old "$old") &
  (bench_conv 1 grouped_conv_bwd_data /tmp/dw_rows.jsonl conv_bwd_data
   bench_conv 1 grouped_conv_bwd_data /tmp/dw_rows.jsonl conv_bwd_data_old "$old") &
else
  bench_conv 0 grouped_conv_fwd benchmarks/suites/conv.jsonl conv_fwd &
  bench_conv 1 grouped_conv_bwd_data benchmarks/suites/conv.jsonl conv_bwd_data &
fi
wait
tail -n 1 "$res"/bench_*.txt
CUDA_VISIBLE_DEVICES=0 python3 benchmarks/dw_roofline.py "$res/dw_roofline.json" "$res/bench_conv_fwd.jsonl" "$res/bench_conv_bwd_data.jsonl" > "$res/dw_roofline.txt" 2>&1
cat "$res/dw_roofline.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$res/gpu.txt" 2>&1
tar czf "$OUT/w.tgz" -C /tmp w
