#!/usr/bin/env bash
# Sweep of the TMA forward / backward-data instances with merged groups
# (benchmarks/sweep_tma_gpb_{fwd,bwd_data}.json, from benchmarks/make_tma_gpb_sweep_set.py): `ckcore
# tune` on the bf16 grouped rows (G > 1, C/G > 1) of the public conv suite, each pair validated
# against the reference, then per row the best TMA merged-group instance, the best pointer
# merged-group instance and cuDNN (timed in the same call, benchmarks/tma_gpb_summary.py).
# usage (device machine, repository root): OUT=/path bash benchmarks/run_tma_gpb_sweep.sh
set -u
source benchmarks/device_setup.sh >/dev/null 2>&1
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
python3 -c "
import json
with open('/tmp/grouped_bf16_suite.jsonl', 'w') as f:
    for line in open('benchmarks/suites/conv.jsonl'):
        r = json.loads(line)
        if r['G'] > 1 and r['C'] > r['G'] and r['dtype'] == 'bf16':
            f.write(line)"
for d in fwd bwd_data; do
  ckcore tune grouped_conv_$d --suite /tmp/grouped_bf16_suite.jsonl --kernel-set-file benchmarks/sweep_tma_gpb_$d.json \
    --out "$OUT/tma_gpb_sweep_${d}_h200.jsonl.gz" --max-seconds ${MAX_S:-220} 2>"$OUT/tune_$d.log" | tail -1
done
python3 benchmarks/tma_gpb_summary.py "$OUT"/tma_gpb_sweep_{fwd,bwd_data}_h200.jsonl.gz | tee "$OUT/tma_gpb_summary.txt"
