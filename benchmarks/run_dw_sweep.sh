#!/usr/bin/env bash
# The depthwise sweep (benchmarks/sweep_dw.json, from make_dw_sweep_set.py): `ckcore tune` of every
# swept instance on the depthwise rows (C/G = 1) of the public conv suite, forward and
# backward-data, each row validated against a float64 recomputation; one dataset per direction.
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
# Backward-weight (SWEEP_OPS=grouped_conv_bwd_weight) is not in the sweep file: its default
# depthwise instances are measured instead.
python3 -c "
from ckcore import Registry
r = Registry()
for i in r.declare('grouped_conv_bwd_weight', 'default'):
    if i.family != 'dw_bwd_weight':
        r.instances.pop(i.name)
r.export_json('/tmp/dw_bwd_weight_default.json')"
for op in ${SWEEP_OPS:-grouped_conv_fwd grouped_conv_bwd_data}; do
  kset=benchmarks/sweep_dw.json
  [ $op = grouped_conv_bwd_weight ] && kset=/tmp/dw_bwd_weight_default.json
  ckcore tune $op --suite /tmp/dw_suite.jsonl --kernel-set-file $kset \
    --out "$out/dw_sweep_${op#grouped_conv_}_h200.jsonl.gz" --max-seconds "${2:-240}" 2>/tmp/dw_sweep_$op.log | tail -1
done
rm -f "$out"/*.lock
