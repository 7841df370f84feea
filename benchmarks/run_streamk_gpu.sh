#!/usr/bin/env bash
# Split-K, stream-K and GEMV GPU tests, the probe of stream-K and GEMV against the default
# selection (benchmarks/family_probe.py), then `ckcore bench gemm` twice in one session: with every installed gemm
# plugin, and with ck-plugin-gemm alone (CKCORE_PLUGINS=gemm), for the per-row comparison.
# usage (device machine, repository root): bash benchmarks/run_streamk_gpu.sh OUTDIR
set -u
out=${1:-benchmarks/results}
mkdir -p "$out"
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/cksk/ck TRITON_CACHE_DIR=/tmp/cksk/triton
ckcore build gemm --workers 16 --json | cut -c1-200
timeout 240 python3 -m pytest -q -m gpu plugins/stream_k/tests 2>&1 | tail -2 | tee "$out/gpu_tests_stream_k.txt"
CKCORE_HEURISTIC=lightgbm timeout 300 python3 benchmarks/family_probe.py "$out/family_probe_h200.jsonl" | tail -1
timeout 150 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out "$out/bench_gemm_all_plugins_h200.jsonl" 2>&1 | tail -1
CKCORE_PLUGINS=gemm timeout 150 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out "$out/bench_gemm_gemm_only_h200.jsonl" 2>&1 | tail -1
