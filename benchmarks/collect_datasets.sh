#!/usr/bin/env bash
# Tune datasets on the GPU (device machine, repository root), resumable across device calls:
# existing benchmarks/datasets/*.jsonl.gz are copied to DEST and appended to there; each op runs
# for at most MAX seconds per source; rerun (after committing DEST's files back into
# benchmarks/datasets/) until every summary says "remaining": 0.
# usage: DEST=$OUT MAX=120 bash benchmarks/collect_datasets.sh [OPS...]
set -u
dest=${DEST:-benchmarks/datasets}
mkdir -p "$dest" benchmarks/datasets
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
[ "$dest" != benchmarks/datasets ] && cp benchmarks/datasets/*.jsonl.gz "$dest"/ 2>/dev/null
ops=${*:-gemm grouped_conv_fwd grouped_conv_bwd_data grouped_conv_bwd_weight}
for op in $ops; do
  case $op in gemm) suite=benchmarks/suites/gemm.jsonl ;; *) suite=benchmarks/suites/conv.jsonl ;; esac
  out="$dest/${op}_h200.jsonl.gz"
  ckcore tune $op --generate 300 --seed 0 --out "$out" --max-seconds ${MAX:-120} 2>&1 | tail -1
  ckcore tune $op --suite $suite --out "$out" --max-seconds ${MAX:-120} 2>&1 | tail -1
done
