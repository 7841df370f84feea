#!/usr/bin/env bash
# Staged GEMMs (ckcore.staging), one device session: build the gemm default set, the staging GPU
# tests, then `ckcore bench gemm` against torch on
#   benchmarks/suites/gemm_unaligned.jsonl  unaligned leading dimensions (odd cubes, LM heads with
#                                           odd vocabularies), staged and with CKCORE_STAGING=0
#   benchmarks/suites/gemm.jsonl            the plain suite (its one unaligned row, odd.4095^3, stages)
#   benchmarks/suites/gemm_bias_gelu.jsonl  M >= 1024 rows + column bias + gelu
# usage (device machine, repository root): OUT=DIR bash benchmarks/run_staging_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
/usr/bin/time -f "build %e s" ckcore build gemm --workers 16 --json 2>&1 | cut -c1-200
timeout 150 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k "staged or stages" 2>&1 \
  | grep -E "^E .*(Error|assert|Validation)|passed|failed" | tail -8 | tee "$out/gpu_tests_staging.txt"
timeout 120 ckcore bench gemm --suite benchmarks/suites/gemm_unaligned.jsonl --out "$out/bench_gemm_unaligned_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
CKCORE_STAGING=0 timeout 150 ckcore bench gemm --suite benchmarks/suites/gemm_unaligned.jsonl --out "$out/bench_gemm_unaligned_unstaged_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
for s in gemm gemm_bias_gelu; do
  timeout 200 ckcore bench gemm --suite benchmarks/suites/$s.jsonl --out "$out/bench_${s}_staged_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
done
