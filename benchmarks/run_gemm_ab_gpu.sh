#!/usr/bin/env bash
# Issue 6's two lightgbm benches with this tree's gemm plugins against another commit's, on a
# 2-GPU machine in one call (repository root; results under OUT): GPU 0 runs this tree, GPU 1
# the gemm and stream-K plugins carried in .old/ (PYTHONPATH), each the bf16 rows of
# benchmarks/suites/gemm.jsonl with M >= 1024, then benchmarks/suites/gemm_bias_gelu.jsonl.
# With PER_SUITE=1 each GPU runs one suite instead, this tree then .old/, so that each ratio
# compares runs on one GPU (GPU 0: the bf16 rows, GPU 1: bias-gelu). GPU_TESTS=EXPR first runs
# `pytest -m gpu plugins/gemm/tests/test_gemm_gpu.py -k EXPR` on GPU 0.
# Prepare .old/ here: `git archive REV plugins/gemm plugins/stream_k | tar -x -C .old`, carry it.
# usage: OUT=DIR [BENCH_S=200] [PER_SUITE=1] [GPU_TESTS=EXPR] bash benchmarks/run_gemm_ab_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
PYTHONPATH=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
export BENCH_S=${BENCH_S:-200}
old="$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k"
if [ -n "${GPU_TESTS:-}" ]; then
  CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k "$GPU_TESTS" 2>&1 \
    | grep -E "^E .*(Error|assert)|passed|failed|error" | tail -6 | tee "$out/gpu_tests_gemm_$tag.txt"
fi
if [ "${PER_SUITE:-0}" = 1 ]; then
  (bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_new
   bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_old "$old") &
  (bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_new
   bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_old "$old") &
  wait
  exit 0
fi
run() {  # GPU NAME [PYTHONPATH]
  bench_gemm_on "$1" /tmp/gemm_bf16_m1024.jsonl "gemm_bf16_m1024_$2" "${3:-}"
  bench_gemm_on "$1" benchmarks/suites/gemm_bias_gelu.jsonl "gemm_bias_gelu_$2" "${3:-}"
}
run 0 new &
run 1 old "$old" &
wait
