#!/usr/bin/env bash
# Sweep of depthwise forward spatial tiles (benchmarks/sweep_dw_fwd_tiles.json: 36 bf16 tiles plus
# four consecutive-pixel default tiles for reference): `ckcore tune` on the bf16 depthwise rows of
# the public conv suite, each row validated against the float64 reference. Prints, per row, the
# best tile and the best reference instance.
# usage (device machine, repository root): OUT=/path bash benchmarks/run_dw_tile_sweep.sh
set -u
source benchmarks/device_setup.sh >/dev/null 2>&1
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
python3 -c "
import json
with open('/tmp/dw_bf16_suite.jsonl', 'w') as f:
    for line in open('benchmarks/suites/conv.jsonl'):
        r = json.loads(line)
        if r['C'] == r['G'] and r['dtype'] == 'bf16':
            f.write(line)"
ckcore tune grouped_conv_fwd --suite /tmp/dw_bf16_suite.jsonl --kernel-set-file benchmarks/sweep_dw_fwd_tiles.json \
  --out "$OUT/dw_sweep_fwd_tiles_h200.jsonl.gz" --max-seconds 400 2>/tmp/sweep.log | tail -1
python3 - "$OUT/dw_sweep_fwd_tiles_h200.jsonl.gz" <<'PY'
import collections, gzip, json, sys
by = collections.defaultdict(list)
for line in gzip.open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == "ok":
        by[r["problem_name"]].append(r)
for name, rs in by.items():
    tiles = [r for r in rs if r["key"].get("block_h")]
    ref = [r for r in rs if not r["key"].get("block_h")]
    bt, br = min(tiles, key=lambda r: r["time_ms"]), min(ref, key=lambda r: r["time_ms"])
    print(f"{name[17:70]:54s} tile {bt['time_ms']*1e3:7.1f} us {bt['instance'][20:]:34s} ref {br['time_ms']*1e3:7.1f} us  x{br['time_ms']/bt['time_ms']:.2f}")
PY
