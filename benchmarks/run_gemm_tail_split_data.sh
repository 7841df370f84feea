#!/usr/bin/env bash
# The split-tail persistent instances (gemm_persistent ..._ts) on a 4-GPU machine, one call
# (repository root; results under OUT):
#   1. build the gemm default set; GPU 0: the split-tail GPU tests; GPUs 1-3 meanwhile: every pair
#      of the problems the new instances serve (benchmarks/suites/tune_gemm_ts.jsonl, whose old rows
#      benchmarks/new_instance_problems.py dropped from the working tree's dataset), appended to it;
#   2. `ckcore train gemm` on it (the model into the plugin, copies under OUT);
#   3. four benches at once, one per GPU: the bf16 rows of benchmarks/suites/gemm.jsonl with
#      M >= 1024 and benchmarks/suites/gemm_bias_gelu.jsonl, with this tree ("ts") and with the gemm
#      and stream-K plugins carried in .old/ ("base": `git archive REV plugins/gemm plugins/stream_k`).
# usage: OUT=DIR [TUNE_S=200] [BENCH_S=150] bash benchmarks/run_gemm_tail_split_data.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/models"
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
ckcore build gemm --workers 32 --json 2>&1 | cut -c1-200
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k tail_split 2>&1 \
  | grep -E "^E .*(Error|assert)|passed|failed" | tail -6 > "$out/gpu_tests_tail_split_$tag.txt" &
tests=$!
ckcore tune gemm --suite benchmarks/suites/tune_gemm_ts.jsonl --out benchmarks/datasets/gemm_h200.jsonl.gz --devices 1,2,3 \
  --max-seconds "${TUNE_S:-200}" 2> /tmp/tune_gemm_ts.log | tail -1 | cut -c1-300
rm -f benchmarks/datasets/*.lock
cp benchmarks/datasets/gemm_h200.jsonl.gz "$out/"
ckcore train gemm --data benchmarks/datasets/gemm_h200.jsonl.gz --out plugins/gemm/ck_plugin_gemm/models 2>&1 \
  | grep -v -i warn | tail -4 | tee "$out/train_gemm_$tag.txt"
cp plugins/gemm/ck_plugin_gemm/models/gemm_sm_90.* "$out/models/"
wait $tests; echo "GPU tests:"; cat "$out/gpu_tests_tail_split_$tag.txt"
bench_gemm_four ts base
