#!/usr/bin/env bash
# Tune datasets on the GPU (device machine, repository root), resumable across device calls:
# existing benchmarks/datasets/<op>_h200.jsonl.gz are copied to DEST and appended to there; each op
# measures GENERATE (300) generated problems (seed SEED, 0) plus its public suite, for at most MAX seconds, on every
# visible GPU (one worker each). Rerun (after committing DEST's files back into
# benchmarks/datasets/) until every summary says "remaining": 0.
# Progress logs go to LOGS (default DEST); lock files are removed at the end. DEVICES overrides
# the GPU list; DEADLINE (epoch seconds) caps every op at the time left before it instead of MAX.
# usage: DEST=$OUT/datasets LOGS=/tmp MAX=100 bash benchmarks/collect_datasets.sh [OPS...]
set -u
dest=${DEST:-benchmarks/datasets}
mkdir -p "$dest" benchmarks/datasets
[ -z "${SETUP_DONE:-}" ] && source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
devices=${DEVICES:-$(python3 -c "import torch; print(','.join(map(str, range(torch.cuda.device_count()))))")}
ops=${*:-gemm grouped_conv_fwd grouped_conv_bwd_data grouped_conv_bwd_weight softmax}
for op in $ops; do
  case $op in gemm) suite=benchmarks/suites/gemm.jsonl ;; softmax) suite=examples/softmax/suite.jsonl ;;
              *) suite=benchmarks/suites/conv.jsonl ;; esac
  out="$dest/${op}_h200.jsonl.gz"
  [ "$dest" != benchmarks/datasets ] && [ -f "benchmarks/datasets/${op}_h200.jsonl.gz" ] && cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$out"
  max=${MAX:-100}
  [ -n "${DEADLINE:-}" ] && max=$(( DEADLINE - $(date +%s) ))
  [ "$max" -le 0 ] && break
  ckcore tune $op --generate "${GENERATE:-300}" --seed "${SEED:-0}" --suite $suite --out "$out" --devices "$devices" \
    --max-seconds $max 2>"${LOGS:-$dest}/${op}_tune.log" | tail -1
done
rm -f "$dest"/*.lock
