#!/usr/bin/env bash
# The measuring half of a conv op's refresh on the device (repository root; the caller has sourced
# benchmarks/device_setup.sh and set CKCORE_CACHE_DIR): the tune dataset's missing pairs
# (benchmarks/collect_datasets.sh), every default instance on EXTRA_SUITE when given, the op's
# model retrained on that dataset, then `ckcore bench` of BENCH_SUITE (default the public conv
# suite) against cuDNN with the new model. Dataset, model, logs and bench go to OUT.
# usage: OUT=/path [MAX=200] [EXTRA_SUITE=...] [BENCH_SUITE=...] [BENCH_S=200] bash benchmarks/measure_and_train.sh OP
set -u
op=$1
dir=${op#grouped_conv_}
out=${OUT:?OUT: where results go}
models=plugins/grouped_conv/ck_plugin_grouped_conv/models
mkdir -p "$out/models"
DEST="$out/datasets" LOGS="$out" MAX="${MAX:-200}" SETUP_DONE=1 bash benchmarks/collect_datasets.sh "$op"
if [ -n "${EXTRA_SUITE:-}" ]; then
  ckcore tune "$op" --suite "$EXTRA_SUITE" --out "$out/datasets/${op}_h200.jsonl.gz" --max-seconds "${MAX:-200}" \
    2>"$out/${op}_tune_extra.log" | tail -1
fi
ckcore train "$op" --data "$out/datasets/${op}_h200.jsonl.gz" --out "$models" 2>&1 | tee "$out/train_$op.txt"
cp "$models/${op}_sm_90".* "$out/models/"
timeout "${BENCH_S:-200}" ckcore bench "$op" --suite "${BENCH_SUITE:-benchmarks/suites/conv.jsonl}" \
  --out "$out/bench_conv_${dir}_h200.jsonl" 2>&1 | tail -3
rm -f "$out"/datasets/*.lock
