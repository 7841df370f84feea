#!/usr/bin/env bash
# Measure the noisy problems of the conv tune datasets again, on the device (repository root).
# Before the call, here: `python benchmarks/noisy_problems.py benchmarks/datasets/OP_h200.jsonl.gz
# --drop benchmarks/datasets/OP_h200.jsonl.gz --suite benchmarks/suites/noisy_OP_h200.jsonl` for
# each op (their rows leave the dataset; the suite lists them). This measures every default
# instance on each op's noisy suite into OUT/datasets/OP_h200.jsonl.gz, until SECONDS_LEFT (from
# the start) is spent; resumable (commit OUT's datasets into benchmarks/datasets/, rerun).
# usage: OUT=/path [SECONDS_LEFT=540] bash benchmarks/remeasure_noisy.sh OP...
set -u
out=${OUT:?OUT: where results go}
deadline=$(( $(date +%s) + ${SECONDS_LEFT:-540} ))
mkdir -p "$out/datasets"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/cknoisy/ck TRITON_CACHE_DIR=/tmp/cknoisy/triton
for op in "$@"; do
  cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$out/datasets/"
  left=$(( deadline - $(date +%s) ))
  [ "$left" -gt 30 ] && ckcore tune "$op" --suite "benchmarks/suites/noisy_${op}_h200.jsonl" \
    --out "$out/datasets/${op}_h200.jsonl.gz" --max-seconds "$left" 2>"$out/${op}_tune_noisy.log" | tail -1
done
rm -f "$out"/datasets/*.lock
