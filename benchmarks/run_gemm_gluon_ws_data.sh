#!/usr/bin/env bash
# The gemm_gluon_ws instances (warp-specialised Gluon fp8) on a 2-GPU machine (repository root;
# results under OUT), in two calls:
#   data:  build the gemm default set; GPU 0: the family's GPU tests; then on both GPUs: every pair of the fp8 problems the new instances serve (benchmarks/suites/tune_gemm_gws.jsonl,
#          whose old rows benchmarks/new_instance_problems.py dropped from the working tree's
#          dataset), appended to it; then `ckcore train gemm` on it (the model into the plugin,
#          copies under OUT);
#   bench: the fp8 suite and the bf16 rows of benchmarks/suites/gemm.jsonl with M >= 1024, with
#          this tree (GPU 0) and with the gemm and stream-K plugins of .old.tgz (GPU 1; `git archive
#          REV plugins/gemm plugins/stream_k | gzip`), one suite after the other.
#   gelu:  benchmarks/suites/gemm_bias_gelu.jsonl, this tree and the old one at once, twice (GPUs swapped).
# usage: OUT=DIR [TUNE_S=200] [BENCH_S=150] bash benchmarks/run_gemm_gluon_ws_data.sh data|bench|gelu [TAG]
set -u
step=$1
shift
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/models" .old
tar xzf .old.tgz -C .old
if [ "$step" = data ]; then
  ckcore build gemm --workers 32 --json 2>&1 | tail -1 | cut -c1-300
  CUDA_VISIBLE_DEVICES=0 timeout 150 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gluon_ws.py 2>&1 \
    | grep -E "^E .*(Error|assert)|passed|failed" | tail -8 > "$out/gpu_tests_gluon_ws_$tag.txt"
  echo "GPU tests:"; cat "$out/gpu_tests_gluon_ws_$tag.txt"
  ckcore tune gemm --suite benchmarks/suites/tune_gemm_gws.jsonl --out benchmarks/datasets/gemm_h200.jsonl.gz \
    --devices 0,1 --max-seconds "${TUNE_S:-200}" 2> "$out/tune_gws_$tag.log" | tail -1 | cut -c1-300
  rm -f benchmarks/datasets/*.lock
  cp benchmarks/datasets/gemm_h200.jsonl.gz "$out/"
  ckcore train gemm --data benchmarks/datasets/gemm_h200.jsonl.gz --out plugins/gemm/ck_plugin_gemm/models 2>&1 \
    | grep -v -i warn | tail -4 | tee "$out/train_gemm_$tag.txt"
  cp plugins/gemm/ck_plugin_gemm/models/gemm_sm_90.* "$out/models/"
elif [ "$step" = gelu ]; then
  # The bias-gelu suite (26 picks move with the retrained model, none priced by the dataset): this
  # tree and the old one at once, then again with the GPUs swapped.
  old=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k
  s=benchmarks/suites/gemm_bias_gelu.jsonl
  bench_gemm_on 0 $s gemm_bias_gelu_gws_r1 & bench_gemm_on 1 $s gemm_bias_gelu_base_r1 "$old" & wait
  bench_gemm_on 1 $s gemm_bias_gelu_gws_r2 & bench_gemm_on 0 $s gemm_bias_gelu_base_r2 "$old" & wait
else
  gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
  old=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k
  (bench_gemm_on 0 benchmarks/suites/gemm_fp8.jsonl gemm_fp8_gws; bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_gws) &
  (bench_gemm_on 1 benchmarks/suites/gemm_fp8.jsonl gemm_fp8_base "$old"; bench_gemm_on 1 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_base "$old") &
  wait
fi
