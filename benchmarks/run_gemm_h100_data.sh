#!/usr/bin/env bash
# H100 measurements for the gemm selection model, and their effect on issue 6's two lightgbm
# benches, in one call on a 4-GPU machine (repository root; results under OUT):
#   1. build the gemm default set; tune benchmarks/suites/gemm_h100_train.jsonl (no bench row in
#      it: benchmarks/make_gemm_epilogue_suite.py) on the four GPUs, at most TUNE_S seconds;
#   2. `ckcore train gemm` on the committed dataset plus the new rows (into the plugin's models
#      folder; copied to OUT/models), the shipped plugin kept aside in /tmp/old_gemm;
#   3. four benches at once, one per GPU: the bf16 rows of benchmarks/suites/gemm.jsonl with
#      M >= 1024 and benchmarks/suites/gemm_bias_gelu.jsonl, with the retrained model (GPUs 0, 1:
#      "after") and with the shipped one (GPUs 2, 3, PYTHONPATH=/tmp/old_gemm: "before").
# usage: OUT=DIR [TUNE_S=260] [BENCH_S=170] bash benchmarks/run_gemm_h100_data.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/datasets" "$out/models"
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-160
new=$out/datasets/gemm_h100_new.jsonl.gz
ckcore tune gemm --suite benchmarks/suites/gemm_h100_train.jsonl --out "$new" --devices 0,1,2,3 \
  --max-seconds "${TUNE_S:-260}" 2> "$out/tune_gemm.log" | tail -1
rm -f "$out"/datasets/*.lock
rm -rf /tmp/old_gemm && cp -r plugins/gemm /tmp/old_gemm
ckcore train gemm --data benchmarks/datasets/gemm_h200.jsonl.gz --data "$new" \
  --out plugins/gemm/ck_plugin_gemm/models > "$out/train_gemm.txt" 2>&1
tail -12 "$out/train_gemm.txt"
cp plugins/gemm/ck_plugin_gemm/models/gemm_sm_90.* "$out/models/"
bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_after &
bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_after &
bench_gemm_on 2 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_before /tmp/old_gemm &
bench_gemm_on 3 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_before /tmp/old_gemm &
wait
