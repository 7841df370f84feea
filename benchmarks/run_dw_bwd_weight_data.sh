#!/usr/bin/env bash
# Device call for depthwise backward-weight on a 4-GPU machine (repository root): measures every
# pair of the problems of benchmarks/suites/tune_${SUITE}_bwd_weight.jsonl whole on all four GPUs
# (SUITE default dw_winbw; written with their old rows dropped from the working tree's dataset by
# benchmarks/new_instance_problems.py), retrains the backward-weight model, then at once:
#   GPU 0: `ckcore bench grouped_conv_bwd_weight` of the suite's depthwise rows (C/G = 1), this
#          tree then the plugins carried in .old/ (`git archive REV plugins/grouped_conv
#          plugins/depthwise | tar -x -C .old`); GPU 1 the same in the other order (files ..._r);
#   GPU 2: the depthwise backward-weight GPU tests (channels-last: every supporting default dw_*
#          instance against the float64 reference, and the window kernels' own test);
#   GPU 3: `ckcore bench grouped_conv_bwd_weight` of the whole public conv suite with this tree.
# Results: $OUT/bw.tgz (dataset, model, logs, benches).
# usage: OUT=/path [SUITE=dw_winbw] [TUNE_S=220] [BENCH_S=90] [TEST_S=200] bash benchmarks/run_dw_bwd_weight_data.sh
set -u
: "${OUT:?OUT: where bw.tgz goes}"
res=/tmp/bw
mkdir -p "$res/datasets" "$res/models"
source benchmarks/device_prologue.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckbw/ck TRITON_CACHE_DIR=/tmp/ckbw/triton
op=grouped_conv_bwd_weight
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$res/datasets/"
ckcore tune $op --suite "benchmarks/suites/tune_${SUITE:-dw_winbw}_bwd_weight.jsonl" --out "$res/datasets/${op}_h200.jsonl.gz" \
  --devices 0,1,2,3 --max-seconds "${TUNE_S:-220}" 2>"$res/tune.log" | tail -1 | tee "$res/tune.json"
rm -f "$res"/datasets/*.lock
ckcore train $op --data "$res/datasets/${op}_h200.jsonl.gz" --out "$models" > "$res/train.txt" 2>&1
tail -n 4 "$res/train.txt"
cp "$models/${op}_sm_90".* "$res/models/"
dw_rows /tmp/dw_rows.jsonl
old="$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise"
export BENCH_S=${BENCH_S:-90}
bench_on() {  # GPU SUITE NAME [PYTHONPATH]
  bench_op_on "$1" $op "$2" "$res/bench_$3.jsonl" "$3" "${4:-}"
}
(bench_on 0 /tmp/dw_rows.jsonl dw_bwd_weight_new; bench_on 0 /tmp/dw_rows.jsonl dw_bwd_weight_old "$old") > "$res/log0.txt" &
(bench_on 1 /tmp/dw_rows.jsonl dw_bwd_weight_old_r "$old"; bench_on 1 /tmp/dw_rows.jsonl dw_bwd_weight_new_r) > "$res/log1.txt" &
(CUDA_VISIBLE_DEVICES=2 timeout "${TEST_S:-200}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py \
  -k "(grouped_conv_bwd_weight and cl) or window_backward_weight" 2>&1 | tail -4) > "$res/gpu_tests.txt" &
(export BENCH_S=$((2 * BENCH_S)); bench_on 3 benchmarks/suites/conv.jsonl conv_bwd_weight_new) > "$res/log3.txt" &
wait
cat "$res"/log*.txt "$res/gpu_tests.txt"
nvidia-smi --query-gpu=name --format=csv > "$res/gpu.txt" 2>&1
rm -f "$res"/*.lock
tar czf "$OUT/bw.tgz" -C /tmp bw
