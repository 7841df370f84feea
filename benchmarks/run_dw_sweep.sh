#!/usr/bin/env bash
# The depthwise sweep (benchmarks/sweep_dw.json, from make_dw_sweep_set.py): `ckcore tune` of every
# swept instance on the depthwise rows (C/G = 1) of the public conv suite, forward and
# backward-data (SWEEP_OPS=grouped_conv_bwd_weight: benchmarks/sweep_dw_bwd_weight.json), each row
# validated against a float64 recomputation; one dataset per direction.
# usage (device machine, repository root): [SWEEP_OPS=...] bash benchmarks/run_dw_sweep.sh OUTDIR [MAX_SECONDS_PER_OP]
set -u
out=${1:-benchmarks/results}
mkdir -p "$out"
[ -z "${SETUP_DONE:-}" ] && source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckdw/ck TRITON_CACHE_DIR=/tmp/ckdw/triton
python3 -c "
import json
with open('/tmp/dw_suite.jsonl', 'w') as f:
    for line in open('benchmarks/suites/conv.jsonl'):
        if line.strip() and json.loads(line)['C'] == json.loads(line)['G']:
            f.write(line)"
for op in ${SWEEP_OPS:-grouped_conv_fwd grouped_conv_bwd_data}; do
  kset=benchmarks/sweep_dw.json
  [ $op = grouped_conv_bwd_weight ] && kset=benchmarks/sweep_dw_bwd_weight.json
  ckcore tune $op --suite /tmp/dw_suite.jsonl --kernel-set-file $kset \
    --out "$out/dw_sweep_${op#grouped_conv_}_h200.jsonl.gz" --max-seconds "${2:-240}" 2>/tmp/dw_sweep_$op.log | tail -1
done
rm -f "$out"/*.lock
