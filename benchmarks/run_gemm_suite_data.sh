#!/usr/bin/env bash
# Issue 6's bf16 suite measured whole on one 4-GPU machine (repository root; results under OUT):
#   GPU 0: `ckcore bench gemm` of the bf16 rows of benchmarks/suites/gemm.jsonl with M >= 1024 with
#          this tree (cuBLAS's times on this machine, next to the tune below), then the split-tail
#          GPU tests;
#   GPUs 1, 2: every default-set pair of the same 78 problems (`ckcore tune gemm`), into
#          OUT/tune_gemm_bf16_m1024_TAG.jsonl.gz: each row's oracle against cuBLAS, and data for the
#          gemm model measured on the bench's GPU model;
#   GPU 3: the register-cap sweep of the depthwise window tiles (SWEEP, default
#          benchmarks/sweep_dw_window_mr_fwd.json; benchmarks/run_dw_window_sweep.sh, no GPU tests).
# usage: OUT=DIR [TUNE_S=330] [BENCH_S=170] bash benchmarks/run_gemm_suite_data.sh [TAG]
# (the split-tail GPU tests after the bench stop at 150 s)
set -u
source benchmarks/device_prologue.sh
set +e
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
(CUDA_VISIBLE_DEVICES=3 OUT=$out TEST_S=0 TUNE_S=${TUNE_S:-330} SWEEP=${SWEEP:-benchmarks/sweep_dw_window_mr_fwd.json} \
  bash benchmarks/run_dw_window_sweep.sh > /tmp/dw_sweep.out 2>&1) &
sweep=$!
ckcore build gemm --workers 48 --json 2>&1 | cut -c1-200
(bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_suite
 CUDA_VISIBLE_DEVICES=0 timeout 150 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k tail_split 2>&1 \
   | grep -E "^E .*(Error|assert)|passed|failed" | tail -6 | sed "s/^/tail-split GPU tests: /") > "$out/gpu_0_$tag.txt" 2>&1 &
bench=$!
ckcore tune gemm --suite /tmp/gemm_bf16_m1024.jsonl --out "$out/tune_gemm_bf16_m1024_$tag.jsonl.gz" --devices 1,2 \
  --max-seconds "${TUNE_S:-330}" 2> /tmp/tune_gemm_suite.log | tail -1 | cut -c1-300
wait $bench; cat "$out/gpu_0_$tag.txt"
wait $sweep; tail -30 /tmp/dw_sweep.out
rm -f "$out"/*.lock
