#!/usr/bin/env bash
# Issue 6's two lightgbm benches with this tree's gemm plugins against another commit's, on a
# 2-GPU machine in one call (repository root; results under OUT): GPU 0 runs this tree, GPU 1
# the gemm and stream-K plugins carried in .old/ (PYTHONPATH), each the bf16 rows of
# benchmarks/suites/gemm.jsonl with M >= 1024, then benchmarks/suites/gemm_bias_gelu.jsonl.
# Prepare .old/ here: `git archive REV plugins/gemm plugins/stream_k | tar -x -C .old`, carry it.
# usage: OUT=DIR [BENCH_S=200] bash benchmarks/run_gemm_ab_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
PYTHONPATH=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
export BENCH_S=${BENCH_S:-200}
run() {  # GPU NAME [PYTHONPATH]
  bench_gemm_on "$1" /tmp/gemm_bf16_m1024.jsonl "gemm_bf16_m1024_$2" "${3:-}"
  bench_gemm_on "$1" benchmarks/suites/gemm_bias_gelu.jsonl "gemm_bias_gelu_$2" "${3:-}"
}
run 0 new &
run 1 old "$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k" &
wait
