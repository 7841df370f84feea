#!/usr/bin/env bash
# Issue 6's bf16 and bias-gelu suites with the `autotune` heuristic (the lightgbm ranking's top
# CKCORE_AUTOTUNE_TOP_K candidates measured on first use, the fastest kept): how much of the gap
# to cuBLAS is selection. One device session: build, then `ckcore bench gemm` on
#   the bf16 rows of benchmarks/suites/gemm.jsonl with M >= 1024 (written to $out/gemm_bf16_m1024.jsonl)
#   benchmarks/suites/gemm_bias_gelu.jsonl
# usage (device machine, repository root): OUT=DIR bash benchmarks/run_autotune_gemm_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
export CKCORE_HEURISTIC=autotune
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-160
gemm_bf16_m1024 "$out/gemm_bf16_m1024.jsonl"
timeout 280 ckcore bench gemm --suite "$out/gemm_bf16_m1024.jsonl" --out "$out/bench_gemm_bf16_m1024_autotune_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
timeout 250 ckcore bench gemm --suite benchmarks/suites/gemm_bias_gelu.jsonl --out "$out/bench_gemm_bias_gelu_autotune_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
cp "$CKCORE_CACHE_DIR"/autotune/*.json "$out/" 2>/dev/null; ls "$out"
