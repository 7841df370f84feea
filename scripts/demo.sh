#!/usr/bin/env bash
# The main job: set up, build the default gemm kernel set into the cache, then dispatch the
# problems of benchmarks/suites/gemm.jsonl (Llama-3 layer shapes) through ckcore and validate
# each against the NumPy float64 reference. On a GPU: real shapes, built for its arch. Without
# one: the same kernels in Triton's interpreter, on shapes scaled down (documented in the output).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ckcore build gemm
.venv/bin/python benchmarks/demo.py benchmarks/suites/gemm.jsonl "$@"
