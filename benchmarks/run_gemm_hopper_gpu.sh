#!/usr/bin/env bash
# GEMM on Hopper (issue 6), one device session: the gemm GPU tests (fused epilogues, batches,
# int8/fp8 included), then `ckcore bench gemm` against torch on
#   benchmarks/suites/gemm.jsonl            plain (torch.matmul / cuBLAS)
#   benchmarks/suites/gemm_bias_gelu.jsonl  M >= 1024 rows + column bias + gelu (torch: matmul, add, gelu)
#   benchmarks/suites/gemm_batched.jsonl    batched shapes (torch.matmul on 3-D tensors)
#   benchmarks/suites/gemm_fp8.jsonl        M >= 1024 shapes in fp8 e4m3, per-tensor scales, bf16 out (torch._scaled_mm)
#   benchmarks/suites/gemm_fp8_fastacc.jsonl  the same with fast accumulation (use_fast_accum=True)
#   benchmarks/suites/gemm_int8.jsonl       M >= 1024 shapes in int8 -> int32 (torch._int_mm)
# usage (device machine, repository root): bash benchmarks/run_gemm_hopper_gpu.sh OUTDIR [tests|bench|all]
set -u
out=${1:-benchmarks/results}
what=${2:-all}
mkdir -p "$out"
[ -n "${SETUP_DONE:-}" ] || source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckh/ck TRITON_CACHE_DIR=/tmp/ckh/triton
ckcore build gemm --workers 16 --json | cut -c1-200
if [ "$what" != bench ]; then
  timeout 400 python3 -m pytest -q -m gpu plugins/gemm/tests 2>&1 | grep -E "^E .*(Error|assert|Validation)|passed|failed" | tail -12 | tee "$out/gpu_tests_gemm.txt"
fi
if [ "$what" != tests ]; then
  for s in gemm gemm_bias_gelu gemm_batched gemm_fp8 gemm_fp8_fastacc gemm_int8; do
    timeout 200 ckcore bench gemm --suite benchmarks/suites/$s.jsonl --out "$out/bench_${s}_h200.jsonl" 2>&1 | tail -1 | cut -c1-330
  done
fi
