#!/usr/bin/env bash
# Fused-epilogue GEMM (issue 6) on the device, repository root; results go to OUT. Steps, each
# skipped when its variable is 0 or empty, all bounded by SECONDS_LEFT (default 540) from the start:
#   TEST_S=150   GPU tests of the two-program persistent tiles, plain and with fused epilogues
#   MAX=150      the gemm tune dataset's missing pairs (benchmarks/collect_datasets.sh: new default
#                tiles on the generated and suite problems), at most MAX s
#   EPI=1        every default instance on the epilogue training suite
#                (benchmarks/suites/gemm_epilogue_train.jsonl)
#   TRAIN=1      the gemm model retrained on OUT's dataset (into the plugin's models folder; copied to OUT)
#   SUITES="gemm_bias_gelu gemm"   `ckcore bench gemm` of benchmarks/suites/<suite>.jsonl
# The dataset is resumable: commit OUT/datasets/gemm_h200.jsonl.gz into benchmarks/datasets/, rerun.
# usage: OUT=/path [TEST_S=..] [MAX=..] [EPI=1] [TRAIN=1] [SUITES=..] bash benchmarks/run_gemm_epilogue_gpu.sh
set -u
out=${OUT:?OUT: where results go}
deadline=$(( $(date +%s) + ${SECONDS_LEFT:-540} ))
left() { echo $(( deadline - $(date +%s) )); }
mkdir -p "$out/datasets" "$out/models"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/cktune/ck TRITON_CACHE_DIR=/tmp/cktune/triton
ds=$out/datasets/gemm_h200.jsonl.gz
[ -f "$ds" ] || cp benchmarks/datasets/gemm_h200.jsonl.gz "$ds"
if [ "${TEST_S:-0}" -gt 1 ]; then
  timeout "$TEST_S" python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k two_program 2>&1 \
    | grep -E "^E .*(Error|assert)|passed|failed" | tail -8 | tee "$out/gpu_tests_gemm_two_program.txt"
fi
if [ "${MAX:-0}" -gt 0 ]; then
  DEST="$out/datasets" LOGS="$out" MAX="$MAX" SETUP_DONE=1 bash benchmarks/collect_datasets.sh gemm
fi
if [ "${EPI:-0}" = 1 ] && [ "$(left)" -gt 30 ]; then
  ckcore tune gemm --suite benchmarks/suites/gemm_epilogue_train.jsonl --out "$ds" --max-seconds "$(left)" \
    2>"$out/gemm_tune_epilogue.log" | tail -1
fi
rm -f "$out"/datasets/*.lock
if [ "${TRAIN:-0}" = 1 ]; then
  ckcore train gemm --data "$ds" --out plugins/gemm/ck_plugin_gemm/models 2>&1 | tail -4 | tee "$out/train_gemm.txt"
  cp plugins/gemm/ck_plugin_gemm/models/gemm_sm_90.* "$out/models/"
fi
for s in ${SUITES:-}; do
  [ "$(left)" -gt 30 ] && timeout "$(left)" ckcore bench gemm --suite "benchmarks/suites/$s.jsonl" \
    --out "$out/bench_${s}_h200.jsonl" 2>&1 | tail -1 | cut -c1-400
done
