#!/usr/bin/env bash
# The filter-row kernels' pair loads on the GPU, in one device call (repository root): GPU tests
# of the first-layer cases whose windows load in pairs (every supporting instance of every family,
# both directions), `ckcore profile` of resnet50.conv1 (bf16) in both directions, then `ckcore
# bench` of the first-layer suite and of the public suite's two resnet50.conv1 rows (ROWS_SUITE)
# in both directions against cuDNN. Kernels compile on first use (no full build). Logs go to OUT.
# usage: OUT=/path ROWS_SUITE=/tmp/conv1_rows.jsonl bash benchmarks/probe_row_pairs.sh
set -u
out=${OUT:?OUT}
mkdir -p "$out"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
timeout "${TEST_S:-150}" python3 -m pytest -q -m gpu plugins/grouped_conv/tests/test_conv_gpu.py \
  -k "(first_layer_pairs or first_layer_3d) and (fwd or weight)" 2>&1 | tail -4 | tee "$out/gpu_tests_pairs.txt"
python3 -c "import json; r=json.loads(open('benchmarks/suites/conv.jsonl').readline()); \
[r.pop(k) for k in ('op','name')]; print(json.dumps(r))" > /tmp/conv1_bf16.json
for op in grouped_conv_fwd grouped_conv_bwd_weight; do
  { echo "== $op bf16"; timeout 100 ckcore profile "$op" --problem @/tmp/conv1_bf16.json 2>&1 | grep -v "^  rejected"; } >> "$out/profile_conv1_pairs.txt"
done
for op in grouped_conv_fwd grouped_conv_bwd_weight; do
  d=${op#grouped_conv_}
  timeout 100 ckcore bench "$op" --suite benchmarks/suites/first_layers.jsonl --out "$out/bench_first_layers_pairs_$d.jsonl" 2>&1 | tail -1
  timeout 60 ckcore bench "$op" --suite "${ROWS_SUITE:?}" --out "$out/bench_conv1_pairs_$d.jsonl" 2>&1 | tail -3
done
