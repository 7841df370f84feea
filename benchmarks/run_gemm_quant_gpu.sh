#!/usr/bin/env bash
# int8 / fp8 GEMM on the GPU: the gemm GPU tests of quantized problems, then `ckcore bench gemm`
# on the M >= 1024 shapes of the public suite as fp8 e4m3 with per-tensor scales, bf16 output
# (benchmarks/suites/gemm_fp8.jsonl, less the shapes torch._scaled_mm refuses: K or N not a multiple
# of 16; torch: torch._scaled_mm) and as int8 -> int32
# (benchmarks/suites/gemm_int8.jsonl; torch: torch._int_mm), in one session.
# usage (device machine, repository root): bash benchmarks/run_gemm_quant_gpu.sh OUTDIR
set -u
out=${1:-benchmarks/results}
mkdir -p "$out"
[ -n "${SETUP_DONE:-}" ] || source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckq/ck TRITON_CACHE_DIR=/tmp/ckq/triton
ckcore build gemm --workers 16 --json | cut -c1-200
timeout 240 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k quantized 2>&1 | grep -E "^E .*(assert|Validation)|passed|failed" | tail -12 | tee "$out/gpu_tests_gemm_quant.txt"
timeout 150 ckcore bench gemm --suite benchmarks/suites/gemm_fp8.jsonl --out "$out/bench_gemm_fp8_h200.jsonl" 2>&1 | tail -1
timeout 150 ckcore bench gemm --suite benchmarks/suites/gemm_int8.jsonl --out "$out/bench_gemm_int8_h200.jsonl" 2>&1 | tail -1
