#!/usr/bin/env bash
# GEMM GPU tests (fused epilogues and batched included), then in one session: `ckcore bench gemm`
# on the public suite (plain), on its M >= 1024 rows with a fused column bias + gelu
# (benchmarks/suites/gemm_bias_gelu.jsonl; torch: matmul, add, gelu) and on batched shapes
# (benchmarks/suites/gemm_batched.jsonl; torch.matmul on 3-D tensors).
# usage (device machine, repository root): bash benchmarks/run_gemm_epilogue_gpu.sh OUTDIR [tests|bench|all]
set -u
out=${1:-benchmarks/results}
what=${2:-all}
mkdir -p "$out"
[ -n "${SETUP_DONE:-}" ] || source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckepi/ck TRITON_CACHE_DIR=/tmp/ckepi/triton
ckcore build gemm --workers 16 --json | cut -c1-200
if [ "$what" != bench ]; then
  timeout 420 python3 -m pytest -q -m gpu plugins/gemm/tests 2>&1 | tail -4 | tee "$out/gpu_tests_gemm.txt"
fi
if [ "$what" != tests ]; then
  timeout 200 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out "$out/bench_gemm_h200.jsonl" 2>&1 | tail -1
  timeout 200 ckcore bench gemm --suite benchmarks/suites/gemm_bias_gelu.jsonl --out "$out/bench_gemm_bias_gelu_h200.jsonl" 2>&1 | tail -1
  timeout 120 ckcore bench gemm --suite benchmarks/suites/gemm_batched.jsonl --out "$out/bench_gemm_batched_h200.jsonl" 2>&1 | tail -1
fi
