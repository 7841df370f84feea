#!/usr/bin/env bash
# Same-machine A/B of retrained selection models on a 4-GPU machine in one call (repository root;
# results under OUT, one archive ab_TAG.tgz): this tree against the plugins (and so the models)
# carried in .old/ (`git archive REV plugins/gemm plugins/stream_k plugins/grouped_conv
# plugins/depthwise | tar -x -C .old`), each pair on one GPU, this tree first:
#   GPU 0: `ckcore bench gemm` of the bf16 rows of benchmarks/suites/gemm.jsonl with M >= 1024;
#   GPU 1: `ckcore bench gemm` of benchmarks/suites/gemm_bias_gelu.jsonl;
#   GPU 2: `ckcore bench grouped_conv_fwd` of the depthwise rows (C/G = 1) of benchmarks/suites/conv.jsonl,
#          then the depthwise roofline of this tree's forward and backward-data files;
#   GPU 3: the same for grouped_conv_bwd_data, then, with SWEEP_OP set, benchmarks/run_dw_window_sweep.sh
#          for that op (SWEEP file; TEST_S, default 0, and SWEEP_S, its tune's seconds) into OUT.
# With GEMM_ONLY=1 (a 2-GPU machine; .old/ then needs only the gemm and stream-K plugins), GPUs 0
# and 1 only.
# usage: OUT=DIR [BENCH_S=140] [DW_BENCH_S=110] [SWEEP_OP=bwd_weight SWEEP=FILE SWEEP_S=180] [GEMM_ONLY=1]
#        bash benchmarks/run_models_ab_gpu.sh [TAG]
set -u
: "${OUT:?OUT is archived and emptied: never the committed results folder}"
source benchmarks/device_prologue.sh
set +e
gemm_bf16_m1024 /tmp/gemm_bf16_m1024.jsonl
dw_rows /tmp/dw_rows.jsonl
gemm_old=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k
conv_old=$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise
export BENCH_S=${BENCH_S:-140}
bench_conv_on() {  # GPU OP NAME [PYTHONPATH]: the depthwise rows, at most DW_BENCH_S s
  BENCH_S=${DW_BENCH_S:-110} bench_op_on "$1" "$2" /tmp/dw_rows.jsonl "$out/bench_$3_$tag.jsonl" "$3" "${4:-}"
}
ckcore build gemm --workers 24 --json > /dev/null 2>&1
PYTHONPATH=$gemm_old ckcore build gemm --workers 24 --json > /dev/null 2>&1
(bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_new
 bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl gemm_bf16_m1024_old "$gemm_old") > "$out/log_gpu0.txt" &
(bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_new
 bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl gemm_bias_gelu_old "$gemm_old") > "$out/log_gpu1.txt" &
[ -n "${GEMM_ONLY:-}" ] || (bench_conv_on 2 grouped_conv_fwd dw_fwd_new
 bench_conv_on 2 grouped_conv_fwd dw_fwd_old "$conv_old") > "$out/log_gpu2.txt" &
[ -n "${GEMM_ONLY:-}" ] || (bench_conv_on 3 grouped_conv_bwd_data dw_bwd_data_new
 bench_conv_on 3 grouped_conv_bwd_data dw_bwd_data_old "$conv_old"
 if [ -n "${SWEEP_OP:-}" ]; then
   CUDA_VISIBLE_DEVICES=3 OP=$SWEEP_OP TEST_S=${TEST_S:-0} TUNE_S=${SWEEP_S:-180} bash benchmarks/run_dw_window_sweep.sh
 fi) > "$out/log_gpu3.txt" 2>&1 &
wait
[ -n "${GEMM_ONLY:-}" ] || CUDA_VISIBLE_DEVICES=2 python3 benchmarks/dw_roofline.py "$out/dw_roofline_$tag.json" "$out/bench_dw_fwd_new_$tag.jsonl" \
  "$out/bench_dw_bwd_data_new_$tag.jsonl" > "$out/dw_roofline_$tag.txt" 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$out/gpu_$tag.txt" 2>&1
cat "$out"/log_gpu*.txt "$out/gpu_$tag.txt"
[ -n "${GEMM_ONLY:-}" ] || tail -22 "$out/dw_roofline_$tag.txt"
rm -f "$out"/*.lock
tar czf "$out/ab_$tag.tgz" -C "$out" --remove-files $(cd "$out" && ls | grep -v "\.tgz$")
