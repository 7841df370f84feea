#!/usr/bin/env bash
# The sliding-window depthwise forward family (dw_win_fwd) against the tap-by-tap one (dw_fwd)
# and cuDNN, in one device call (repository root): `ckcore tune` of every default channels-last
# fp16 and bf16 instance of both families on the depthwise rows (C/G = 1) of the public conv suite (each row
# validated against a float64 recomputation), then `ckcore bench` of the same rows (cuDNN through
# torch, and the shipped model's pick), then a per-row table: cuDNN, the pick, the best dw_fwd and
# the best dw_win_fwd instance. Results go to OUT.
# usage: OUT=/path bash benchmarks/run_dw_window_gpu.sh
set -u
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckwin/ck TRITON_CACHE_DIR=/tmp/ckwin/triton
python3 - <<'PY'
import json
from ckcore import Registry
rows = [json.loads(l) for l in open("benchmarks/suites/conv.jsonl") if l.strip()]
with open("/tmp/dw_fwd_suite.jsonl", "w") as f:
    for r in rows:
        if r["C"] == r["G"]:
            f.write(json.dumps(r) + "\n")
reg = Registry("sm_90")
reg.declare("grouped_conv_fwd", "default")
inst = [{"family": i.family, "key": i.key.to_dict()} for i in reg.of_op("grouped_conv_fwd")
        if i.family in ("dw_fwd", "dw_win_fwd") and i.key.channels_last and i.key.dtype.value != "fp32"]
json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, open("/tmp/dw_window_set.json", "w"))
print("instances", len(inst))
PY
timeout "${TUNE_S:-330}" ckcore tune grouped_conv_fwd --suite /tmp/dw_fwd_suite.jsonl --kernel-set-file /tmp/dw_window_set.json \
  --out "$OUT/dw_window_tune.jsonl.gz" --max-seconds "${TUNE_MAX:-300}" 2>"$OUT/tune.log" | tail -1
timeout "${BENCH_S:-150}" ckcore bench grouped_conv_fwd --suite /tmp/dw_fwd_suite.jsonl --out "$OUT/bench_dw_fwd.jsonl" 2>&1 | tail -2
python3 benchmarks/dw_window_table.py "$OUT/dw_window_tune.jsonl.gz" "$OUT/bench_dw_fwd.jsonl" | tee "$OUT/table.txt"
rm -f "$OUT"/*.lock
