#!/usr/bin/env bash
# Everything measured on the GPU for docs/performance.md, in one device call:
# GPU tests, compile/load times, and `ckcore bench gemm` against torch.matmul.
# usage (device machine, repository root): bash benchmarks/run_gpu.sh OUTDIR
set -u
out=${1:-benchmarks/results}
mkdir -p "$out"
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckrun/ck TRITON_CACHE_DIR=/tmp/ckrun/triton
timeout 240 python3 -m pytest -q -m gpu plugins/gemm/tests 2>&1 | tail -5 | tee "$out/gpu_tests.txt"
timeout 200 python3 benchmarks/compile_and_load.py "$out/compile_load_h200.json" --keep /tmp/ckrun > /dev/null 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d[k] for k in ('one_worker','full_cold','full_warm_build','full_warm_load')}))" "$out/compile_load_h200.json"
export CKCORE_CACHE_DIR=/tmp/ckrun/ck TRITON_CACHE_DIR=/tmp/ckrun/triton
timeout 240 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out "$out/bench_gemm_h200.jsonl" 2>&1 | tail -1
