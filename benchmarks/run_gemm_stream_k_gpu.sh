#!/usr/bin/env bash
# The persistent family's stream-K tails (gemm_persistent ..._sk) on a 4-GPU machine, one call
# (repository root; results under OUT):
#   1. build the gemm default set; GPU 0: the stream-K GPU tests (every default _sk instance and
#      its bias + gelu variant against the float64 reference, four shapes, run twice each);
#      GPUs 1-3 meanwhile: the dataset's missing pairs (the new instances) on its problems
#      (300 generated, seed 0, and the gemm, epilogue-training and H100-training suites);
#   2. `ckcore train gemm` on the committed dataset plus the new rows (retrain here from the
#      returned rows: training is deterministic);
#   3. four benches at once, one per GPU: the bf16 rows of benchmarks/suites/gemm.jsonl with
#      M >= 1024 and benchmarks/suites/gemm_bias_gelu.jsonl, with this tree (GPUs 0, 1: "after")
#      and with the last commit's gemm and stream-K plugins (GPUs 2, 3: "before"; carried in
#      .old/ by `git archive HEAD plugins/gemm plugins/stream_k | tar -x -C .old`).
# Run on 2026-11-26 with the three _sk tiles in the default set (they moved to `full` after it, so
# on the current tree step 1 finds no missing pair and the benches compare equal sets).
# usage: OUT=DIR [TUNE_S=240] [BENCH_S=170] bash benchmarks/run_gemm_stream_k_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/datasets"
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
cat benchmarks/suites/gemm.jsonl benchmarks/suites/gemm_epilogue_train.jsonl benchmarks/suites/gemm_h100_train.jsonl \
  > /tmp/tune_problems.jsonl
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-160
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -k stream_k 2>&1 \
  | grep -E "^E .*(Error|assert)|passed|failed" | tail -8 > /tmp/gpu_tests_stream_k.txt &
tests=$!
new=$out/datasets/gemm_sk_new.jsonl.gz
cp benchmarks/datasets/gemm_h200.jsonl.gz "$new.base"
# Tune appends to the dataset it is given and skips pairs already in it: give it the committed
# one (a copy), then keep only what it added.
ckcore tune gemm --generate 300 --seed 0 --suite /tmp/tune_problems.jsonl --out "$new.base" --devices 1,2,3 \
  --max-seconds "${TUNE_S:-240}" 2> /tmp/tune_gemm.log | tail -1
wait $tests; echo "GPU tests:"; cat /tmp/gpu_tests_stream_k.txt
rm -f "$out"/datasets/*.lock
ckcore train gemm --data "$new.base" --out plugins/gemm/ck_plugin_gemm/models 2>&1 | grep -v -i warn | tail -4
python3 -c "
import gzip
old = gzip.open('benchmarks/datasets/gemm_h200.jsonl.gz', 'rt').read()
full = gzip.open('$new.base', 'rt').read()
if full.startswith(old):
    with gzip.open('$new', 'wt') as f:
        f.write(full[len(old):])
    print('new rows', full[len(old):].count(chr(10)))
else:
    print('the tuned dataset does not extend the committed one: kept whole as', '$new.base')" && [ -f "$new" ] && rm -f "$new.base"
bench_gemm_four sk nosk
