#!/usr/bin/env bash
# The filter-row families (conv_row_fwd, conv_row_bwd_weight) on first layers, in one device call
# (repository root): build the two ops' default sets, run the first-layer GPU tests (every
# supporting instance against the reference), then `ckcore profile` every supporting instance
# of resnet50.conv1 (bf16, fp16) in both directions against cuDNN. Logs go to OUTDIR.
# usage: bash benchmarks/probe_row_window.sh OUTDIR
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
ops="grouped_conv_fwd grouped_conv_bwd_weight"
for op in $ops; do
  /usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee -a "$out/build.txt"
done
timeout "${TEST_S:-150}" python3 -m pytest -q -m gpu plugins/grouped_conv/tests/test_conv_gpu.py -k "first_layer and (fwd or weight)" 2>&1 \
  | tail -6 | tee "$out/gpu_tests_row.txt"
for dtype in bf16 fp16; do
  python3 -c "import json,sys; r=json.loads(open('benchmarks/suites/conv.jsonl').readline()); r['dtype']='$dtype'; \
[r.pop(k) for k in ('op','name')]; print(json.dumps(r))" > "/tmp/conv1_$dtype.json"
  for op in $ops; do
    { echo "== $op $dtype"; timeout 90 ckcore profile "$op" --problem "@/tmp/conv1_$dtype.json" 2>&1; } >> "$out/profile_conv1_row.txt"
  done
done
