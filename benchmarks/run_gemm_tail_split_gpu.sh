#!/usr/bin/env bash
# The persistent family's split tails (gemm_persistent ..._ts) against the same tiles without one,
# on one GPU (repository root; results under OUT): the split-tail GPU tests, then `ckcore tune` of
# benchmarks/make_tail_split_set.py's instances on the bf16 rows of benchmarks/suites/gemm.jsonl
# with M >= 1024 and on benchmarks/suites/gemm_bias_gelu.jsonl (each measurement validated against
# the float64 reference), summarised per row by benchmarks/tail_split_summary.py.
# usage: OUT=DIR [TUNE_S=300] bash benchmarks/run_gemm_tail_split_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
timeout 150 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k tail_split 2>&1 \
  | grep -E "^E .*(Error|assert)|passed|failed" | tail -6 | tee "$out/gpu_tests_tail_split_$tag.txt"
gemm_bf16_m1024 /tmp/suite.jsonl
cat benchmarks/suites/gemm_bias_gelu.jsonl >> /tmp/suite.jsonl
python3 benchmarks/make_tail_split_set.py /tmp/tail_split_set.json
ckcore tune gemm --suite /tmp/suite.jsonl --kernel-set-file /tmp/tail_split_set.json \
  --out "$out/tail_split_$tag.jsonl.gz" --max-seconds "${TUNE_S:-300}" 2>/tmp/tune_ts.log | tail -1 | cut -c1-300
rm -f "$out"/*.lock
python3 benchmarks/tail_split_summary.py "$out/tail_split_$tag.jsonl.gz" | tee "$out/tail_split_$tag.txt" | tail -80
