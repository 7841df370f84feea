#!/usr/bin/env bash
# Every `full`-set instance on a few fp8 and int8 problems (ckcore profile, one table each), GPU.
# usage (device machine, repository root): bash benchmarks/profile_fp8.sh OUTDIR
set -u
out=${1:-benchmarks/results}
mkdir -p "$out"
[ -n "${SETUP_DONE:-}" ] || source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckq/ck TRITON_CACHE_DIR=/tmp/ckq/triton
for p in '{"M":4096,"N":4096,"K":4096,"dtype":"fp8e4m3","layout":"rcr","scale":"tensor"}' \
         '{"M":8192,"N":8192,"K":8192,"dtype":"fp8e4m3","layout":"rcr","scale":"tensor"}' \
         '{"M":4096,"N":28672,"K":4096,"dtype":"fp8e4m3","layout":"rcr","scale":"tensor"}' \
         '{"M":2048,"N":4096,"K":14336,"dtype":"fp8e4m3","layout":"rcr","scale":"tensor"}' \
         '{"M":4096,"N":4096,"K":4096,"dtype":"int8","layout":"rcr"}'; do
  timeout 200 ckcore profile gemm --set full --problem "$p" --json >> "$out/profile_quant_h200.jsonl" 2>>"$out/profile_quant.log"
  python3 - "$out/profile_quant_h200.jsonl" <<'PY'
import json, sys
r = [json.loads(line) for line in open(sys.argv[1])][-1]
print(r["problem"], "torch", round(r["torch_ms"], 4), "selected", r["selected"])
for row in r["instances"][:8]:
    print("  ", row["instance"], round(row["time_ms"], 4), round(r["torch_ms"] / row["time_ms"], 3))
PY
done
