#!/usr/bin/env bash
# Measure every pair of a suite's problems for one conv op on the device (repository root), then
# optionally retrain the op's model on the result and bench the public conv suite with it, in one
# call. After a change to kernels whose rows the dataset holds (or to the instances a default set
# declares), their problems are measured again whole on one GPU: selection learns from the order
# within a problem, which times from two machines would distort. The dataset is OUT's copy of
# benchmarks/datasets/OP_h200.jsonl.gz, or a new one with FRESH=1; resumable: commit OUT's dataset
# into benchmarks/datasets/ and rerun without FRESH. TRAIN_S=0 / BENCH_S=0 skip those steps.
# DEVICES=0,1,2,3 (a multi-GPU kind) measures with one worker per GPU, a problem's pairs on one
# GPU (a whole dataset's 12-13 k pairs took 225-320 s on four H100s), WORKERS the build's
# processes. A call returns only a few files from $OUT: pack them (tar) at the end of the command.
# usage: OUT=/path SUITE=benchmarks/suites/tune_OP.jsonl [FRESH=1] [SECONDS_LEFT=570]
#        [TRAIN_S=100] [BENCH_S=160] [DEVICES=0,1,2,3] [WORKERS=60] bash benchmarks/remeasure_conv_op.sh OP
set -u
op=$1
out=${OUT:?OUT: where results go}
suite=${SUITE:?SUITE: the problems to measure}
train_s=${TRAIN_S:-100}
bench_s=${BENCH_S:-160}
deadline=$(( $(date +%s) + ${SECONDS_LEFT:-570} ))
mkdir -p "$out/datasets" "$out/models"
source benchmarks/device_setup.sh
set +e
export CKCORE_CACHE_DIR=/tmp/ckre/ck TRITON_CACHE_DIR=/tmp/ckre/triton
/usr/bin/time -f "$op build %e s" ckcore build "$op" --workers "${WORKERS:-16}" 2>&1 | tail -2 | tee "$out/build.txt"
data="$out/datasets/${op}_h200.jsonl.gz"
[ -z "${FRESH:-}" ] && cp "benchmarks/datasets/${op}_h200.jsonl.gz" "$data"
[ -n "${PROBE:-}" ] && eval "$PROBE" 2>&1 | tee "$out/probe.txt"
left=$(( deadline - $(date +%s) - train_s - bench_s ))
[ "$left" -gt 30 ] && ckcore tune "$op" --suite "$suite" --out "$data" --max-seconds "$left" --devices "${DEVICES:-0}" 2>"$out/tune.log" \
  | tail -1 | tee "$out/tune_summary.json"
rm -f "$out"/datasets/*.lock
if [ "$train_s" -gt 0 ]; then
  models=plugins/grouped_conv/ck_plugin_grouped_conv/models
  timeout "$train_s" ckcore train "$op" --data "$data" --out "$models" > "$out/train.txt" 2>&1
  tail -3 "$out/train.txt"
  cp "$models/${op}_sm_90".* "$out/models/"
fi
left=$(( deadline - $(date +%s) ))
[ "$bench_s" -gt 0 ] && timeout "$left" ckcore bench "$op" --suite benchmarks/suites/conv.jsonl \
  --out "$out/bench_conv_${op#grouped_conv_}.jsonl" 2>&1 | tail -3
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$out/gpu.txt" 2>&1
