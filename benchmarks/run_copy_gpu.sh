#!/usr/bin/env bash
# Staging's copy kernels on the GPU, one device session: benchmarks/copy_bench.py (ckcore's copy
# kernels against torch's copy_), the staging and pre-packing GPU tests, then the benches whose
# staged rows they change: the unaligned gemm suite and the channels-first conv forward suite.
# usage (device machine, repository root): OUT=DIR bash benchmarks/run_copy_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
timeout 120 python3 benchmarks/copy_bench.py "$out/copy_bench_$tag.jsonl" 2>&1 | tail -20 | cut -c1-300
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-100
timeout 100 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k "staged or stages or prepacked" 2>&1 \
  | grep -E "^E .*(Error|assert|Validation)|passed|failed" | tail -8 | tee "$out/gpu_tests_copy.txt"
timeout 100 ckcore bench gemm --suite benchmarks/suites/gemm_unaligned.jsonl --out "$out/bench_gemm_unaligned_copy_$tag.jsonl" 2>&1 | tail -1 | cut -c1-300
ckcore build grouped_conv_fwd --workers 16 --json 2>&1 | cut -c1-100
timeout 150 ckcore bench grouped_conv_fwd --suite benchmarks/suites/conv_nchw.jsonl --out "$out/bench_conv_nchw_fwd_copy_$tag.jsonl" 2>&1 | tail -1 | cut -c1-400
