#!/usr/bin/env bash
# Issue 6's two lightgbm benches with this tree's gemm plugins against another commit's, on a
# 2-GPU machine in one call (repository root; results under OUT): GPU 0 runs this tree, GPU 1
# the gemm and stream-K plugins carried in .old/ (PYTHONPATH), each the bf16 rows of
# benchmarks/suites/gemm.jsonl with M >= 1024, then benchmarks/suites/gemm_bias_gelu.jsonl.
# Prepare .old/ here: `git archive REV plugins/gemm plugins/stream_k | tar -x -C .old`, carry it.
# usage: OUT=DIR [BENCH_S=200] bash benchmarks/run_gemm_ab_gpu.sh [TAG]
set -u
source benchmarks/device_prologue.sh
set +e
python3 -c "
import json
rows = [json.loads(l) for l in open('benchmarks/suites/gemm.jsonl')]
with open('/tmp/gemm_bf16_m1024.jsonl', 'w') as f:
    f.writelines(json.dumps(r) + '\n' for r in rows if r['dtype'] == 'bf16' and r['M'] >= 1024)"
ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
PYTHONPATH=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k ckcore build gemm --workers 16 --json 2>&1 | cut -c1-120
run() {  # GPU NAME [PYTHONPATH]
  for s in gemm_bf16_m1024 gemm_bias_gelu; do
    suite=/tmp/gemm_bf16_m1024.jsonl; [ "$s" = gemm_bias_gelu ] && suite=benchmarks/suites/gemm_bias_gelu.jsonl
    PYTHONPATH=${3:-} CUDA_VISIBLE_DEVICES=$1 timeout "${BENCH_S:-200}" ckcore bench gemm --suite "$suite" \
      --out "$out/bench_${s}_$2_$tag.jsonl" 2>&1 | tail -1 | cut -c1-220 | sed "s/^/${s} $2: /"
  done
}
run 0 new &
run 1 old "$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k" &
wait
