#!/usr/bin/env bash
# Pre-packing (ckcore.prepack), one device session: build the gemm default set, the staging and
# pre-packing GPU tests, then benchmarks/prepack_bench.py.
# usage (device machine, repository root): OUT=DIR bash benchmarks/run_prepack_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-160
timeout 150 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k "staged or stages or prepacked" 2>&1 \
  | grep -E "^E .*(Error|assert|Validation)|passed|failed" | tail -8 | tee "$out/gpu_tests_prepack.txt"
timeout 300 python3 benchmarks/prepack_bench.py "$out/prepack_$tag.jsonl" 2>&1 | tail -30
