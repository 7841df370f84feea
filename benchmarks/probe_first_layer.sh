#!/usr/bin/env bash
# First-layer convolutions (C = 3) on the GPU, in one device call: build the three conv ops'
# default sets, run the GPU tests of the first-layer case, `ckcore profile` every supporting
# instance on resnet50.conv1 (bf16, fp16) in each direction, then measure the datasets' missing
# pairs (benchmarks/collect_datasets.sh) until DEADLINE_S seconds after the start.
# usage (device machine, repository root): DEADLINE_S=560 bash benchmarks/probe_first_layer.sh OUTDIR
set -u
out=${1:?OUTDIR}
start=$(date +%s)
mkdir -p "$out"
source benchmarks/device_setup.sh
export SETUP_DONE=1
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
ops="grouped_conv_fwd grouped_conv_bwd_data grouped_conv_bwd_weight"
for op in $ops; do
  /usr/bin/time -f "$op build %e s" ckcore build "$op" --workers 16 2>&1 | tail -2 | tee -a "$out/build.txt"
done
timeout 150 python3 -m pytest -q -m gpu plugins/grouped_conv/tests/test_conv_gpu.py -k first_layer 2>&1 | tail -6 \
  | tee "$out/gpu_tests_first_layer.txt"
for dtype in bf16 fp16; do
  python3 -c "import json,sys; r=json.loads(open('benchmarks/suites/conv.jsonl').readline()); r['dtype']='$dtype'; \
[r.pop(k) for k in ('op','name')]; print(json.dumps(r))" > "/tmp/conv1_$dtype.json"
  for op in $ops; do
    # One file for all six profiles: the device tool returns a limited number of files.
    { echo "== $op $dtype"; timeout 60 ckcore profile "$op" --problem "@/tmp/conv1_$dtype.json" 2>&1; } >> "$out/profile_conv1.txt"
  done
done
DEADLINE=$(( start + ${DEADLINE_S:-560} )) DEST="$out/datasets" LOGS="$out" bash benchmarks/collect_datasets.sh $ops
