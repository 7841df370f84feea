#!/usr/bin/env bash
# Sweep of the sliding-window depthwise forward instances (benchmarks/sweep_dw_window.json) on the
# bf16 depthwise rows of the public conv suite, each row validated against a float64 recomputation,
# after the depthwise GPU tests (every default dw_* instance that supports each case, against the
# reference; TEST_S=0 skips them). Prints per row the best swept instance and the best of the
# default set's dw_win_fwd instances measured in the same run.
# usage (device machine, repository root): OUT=/path [TEST_S=280] bash benchmarks/run_dw_window_sweep.sh
set -u
source benchmarks/device_setup.sh >/dev/null 2>&1
set +e
export CKCORE_CACHE_DIR=/tmp/ckwin/ck TRITON_CACHE_DIR=/tmp/ckwin/triton
if [ "${TEST_S:-280}" -gt 0 ]; then
  timeout "${TEST_S:-280}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py -k "grouped_conv_fwd and cl" 2>&1 \
    | tail -4 > "$OUT/gpu_tests_dw_fwd.txt"
  cat "$OUT/gpu_tests_dw_fwd.txt"
fi
python3 - <<'PY'
import json
from ckcore import Registry
with open("/tmp/dw_bf16_suite.jsonl", "w") as f:
    for line in open("benchmarks/suites/conv.jsonl"):
        r = json.loads(line)
        if r["C"] == r["G"] and r["dtype"] == "bf16":
            f.write(line)
sweep = json.load(open("benchmarks/sweep_dw_window.json"))
reg = Registry("sm_90")
reg.declare("grouped_conv_fwd", "default")
seen = {json.dumps(i["key"], sort_keys=True) for i in sweep["instances"]}
for i in reg.of_op("grouped_conv_fwd"):
    k = i.key.to_dict()
    if i.family == "dw_win_fwd" and i.key.dtype.value == "bf16" and json.dumps(k, sort_keys=True) not in seen:
        sweep["instances"].append({"family": i.family, "key": k})
json.dump(sweep, open("/tmp/sweep_dw_window_all.json", "w"))
print("instances", len(sweep["instances"]))
PY
ckcore tune grouped_conv_fwd --suite /tmp/dw_bf16_suite.jsonl --kernel-set-file /tmp/sweep_dw_window_all.json \
  --out "$OUT/dw_window_sweep.jsonl.gz" --max-seconds "${TUNE_S:-240}" 2>/tmp/sweep.log | tail -1
python3 benchmarks/dw_window_sweep_summary.py "$OUT/dw_window_sweep.jsonl.gz" | tee "$OUT/dw_window_sweep.txt"
rm -f "$OUT"/*.lock
