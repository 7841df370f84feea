#!/usr/bin/env bash
# Sweep of sliding-window depthwise instances (SWEEP, default benchmarks/sweep_dw_window.json; OP
# fwd, bwd_data or bwd_weight, default fwd) on the bf16 depthwise rows of the public conv suite, each row
# validated against a float64 recomputation, after the depthwise GPU tests of the op (every default
# dw_* instance that supports each case, against the reference; backward-weight also the window
# kernels' own test of instances beyond the set's; TEST_S=0 skips them). Prints per
# row the best swept instance and the best of the default set's dw_win_OP instances measured in the
# same run (backward-weight: its channels-last tap-by-tap dw_bwd_weight instances).
# usage (device machine, repository root): OUT=/path [TEST_S=280] [SWEEP=FILE] [OP=fwd|bwd_data|bwd_weight]
#        bash benchmarks/run_dw_window_sweep.sh
set -u
[ -n "${CKCORE_DEVICE_READY:-}" ] || source benchmarks/device_setup.sh >/dev/null 2>&1
set +e
op=${OP:-fwd}
sweep_file=${SWEEP:-benchmarks/sweep_dw_window.json}
export CKCORE_CACHE_DIR=/tmp/ckwin/ck TRITON_CACHE_DIR=/tmp/ckwin/triton
if [ "${TEST_S:-280}" -gt 0 ]; then
  timeout "${TEST_S:-280}" python3 -m pytest -q -m gpu plugins/depthwise/tests/test_dw_gpu.py -k "(grouped_conv_$op and cl)$([ "$op" = bwd_weight ] && echo ' or window_backward_weight')" 2>&1 \
    | tail -4 > "$OUT/gpu_tests_dw_$op.txt"
  cat "$OUT/gpu_tests_dw_$op.txt"
fi
python3 - "$op" "$sweep_file" <<'PY'
import json
import sys
from ckcore import Registry
op, sweep_file = sys.argv[1], sys.argv[2]
with open("/tmp/dw_bf16_suite.jsonl", "w") as f:
    for line in open("benchmarks/suites/conv.jsonl"):
        r = json.loads(line)
        if r["C"] == r["G"] and r["dtype"] == "bf16":
            f.write(line)
sweep = json.load(open(sweep_file))
reg = Registry("sm_90")
reg.declare(f"grouped_conv_{op}", "default")
seen = {json.dumps(i["key"], sort_keys=True) for i in sweep["instances"]}
for i in reg.of_op(f"grouped_conv_{op}"):
    k = i.key.to_dict()
    # Backward-weight: the set's windows and the tap-by-tap family's instances.
    fams = (f"dw_win_{op}", "dw_bwd_weight") if op == "bwd_weight" else (f"dw_win_{op}",)
    if (i.family in fams and i.key.dtype.value == "bf16" and i.key.channels_last
            and json.dumps(k, sort_keys=True) not in seen):
        sweep["instances"].append({"family": i.family, "key": k})
json.dump(sweep, open(f"/tmp/sweep_dw_window_all_{op}.json", "w"))
print("instances", len(sweep["instances"]))
PY
name=$(basename "$sweep_file" .json)
ckcore tune grouped_conv_$op --suite /tmp/dw_bf16_suite.jsonl --kernel-set-file /tmp/sweep_dw_window_all_$op.json \
  --out "$OUT/$name.jsonl.gz" --max-seconds "${TUNE_S:-240}" 2>/tmp/sweep.log | tail -1
python3 benchmarks/dw_window_sweep_summary.py "$OUT/$name.jsonl.gz" "grouped_conv_$op" | tee "$OUT/$name.txt"
rm -f "$OUT"/*.lock
