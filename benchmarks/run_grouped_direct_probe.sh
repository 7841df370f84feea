#!/usr/bin/env bash
# Device call for benchmarks/grouped_direct_probe.py (repository root): the tensor-core sliding-window
# probe on the bf16 ResNeXt-50 grouped rows of the conv suite, then `ckcore bench grouped_conv_fwd`
# of the same rows (ckcore's selection and cuDNN in one run).
# usage: OUT=DIR [PROBE_S=400] [BENCH_S=150] [PROBE_ARGS="--bh 32,64,128 --bw 4,8 --warps 4 --bc 32,64"] bash benchmarks/run_grouped_direct_probe.sh
set -u
: "${OUT:?OUT: where results go}"
mkdir -p "$OUT"
source benchmarks/device_setup.sh > /dev/null 2>&1
export CKCORE_CACHE_DIR=/tmp/ckg/ck TRITON_CACHE_DIR=/tmp/ckg/triton
rows=resnext50.l1.g32,resnext50.l2.g32s2,resnext50.l2.g32,resnext50.l3.g32,resnext50.l4.g32,resnext50.l2.g32.b1
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c "
import json, sys
want = set(sys.argv[1].split(','))
rows = [json.loads(l) for l in open('benchmarks/suites/conv.jsonl') if l.strip()]
open('/tmp/resnext.jsonl', 'w').writelines(json.dumps(r) + '\n' for r in rows if r['name'] in want)" "$rows"
timeout "${PROBE_S:-400}" python3 benchmarks/grouped_direct_probe.py --dot --max-cg 32 --rows "$rows" \
  ${PROBE_ARGS:---bh 32,64,128 --gb 1,2,4,8,16 --bw 4,8 --warps 4 --bc 32,64} --out "$OUT/grouped_direct_dot.jsonl" 2>&1 | grep -v -i warning
timeout "${BENCH_S:-150}" ckcore bench grouped_conv_fwd --suite /tmp/resnext.jsonl --out "$OUT/bench_resnext_fwd.jsonl" 2>&1 | tail -1 | cut -c1-200
python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if 'name' in r:
        print(r['name'], r.get('instance'), round(r['ckcore_ms'] * 1e3, 1), round(r['torch_ms'] * 1e3, 1), round(r['speedup'], 3))" "$OUT/bench_resnext_fwd.jsonl"
