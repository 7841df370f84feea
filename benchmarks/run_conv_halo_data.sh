#!/usr/bin/env bash
# The halo families (conv_halo_fwd / conv_halo_bwd_data) on a 4-GPU machine (repository root;
# results under OUT, packed into OUT/r.tgz), in two calls:
#   data:  build both ops' default sets; GPUs 0-1: every pair of the forward problems the new
#          instances serve (benchmarks/suites/tune_halo_fwd.jsonl, from
#          benchmarks/new_instance_problems.py; SUITE=halo_merged: tune_halo_merged_OP.jsonl) into a new dataset, GPUs 2-3 the same for
#          backward-data; the served problems' rows of the committed datasets replaced by the new
#          ones (benchmarks/replace_problems.py) and both models retrained (`ckcore train`, into
#          the plugin; copies of datasets and models under OUT);
#   bench: the conv suite for both ops with this tree (GPUs 0-1) and with the plugins of .old.tgz
#          (GPUs 2-3; `git archive REV plugins/grouped_conv plugins/depthwise | gzip`), at once.
# usage: OUT=DIR [TUNE_S=200] [BENCH_S=240] bash benchmarks/run_conv_halo_data.sh data|bench [TAG]
set -u
step=$1
shift
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/models" "$out/datasets"
for op in fwd bwd_data; do ckcore build grouped_conv_$op --workers 60 --json 2>&1 | tail -1 | cut -c1-200; done
if [ "$step" = data ]; then
  pids=()
  for pair in "fwd 0,1" "bwd_data 2,3"; do
    set -- $pair
    ckcore tune grouped_conv_$1 --suite benchmarks/suites/tune_${SUITE:-halo}_$1.jsonl --out "$out/datasets/new_$1.jsonl.gz" \
      --devices $2 --max-seconds "${TUNE_S:-200}" 2> "$out/tune_$1.log" | tail -1 | cut -c1-300 &
    pids+=($!)
  done
  wait "${pids[@]}"
  rm -f "$out"/datasets/*.lock
  pids=()
  for op in fwd bwd_data; do
    d=benchmarks/datasets/grouped_conv_${op}_h200.jsonl.gz
    python3 benchmarks/replace_problems.py $d "$out/datasets/new_$op.jsonl.gz" --out /tmp/merged_$op.jsonl.gz | tail -1
    cp /tmp/merged_$op.jsonl.gz $d
    cp $d "$out/datasets/"
    (ckcore train grouped_conv_$op --data $d --out plugins/grouped_conv/ck_plugin_grouped_conv/models 2>&1 \
      | grep -v -i warn | tail -6 > "$out/train_$op.txt") &
    pids+=($!)
  done
  wait "${pids[@]}"
  cp plugins/grouped_conv/ck_plugin_grouped_conv/models/grouped_conv_{fwd,bwd_data}_sm_90.* "$out/models/"
  cat "$out"/train_*.txt
else
  mkdir -p .old
  tar xzf .old.tgz -C .old
  old=$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise
  s=benchmarks/suites/conv.jsonl
  export BENCH_S=${BENCH_S:-240}
  bench_op_on 0 grouped_conv_fwd $s "$out/bench_conv_fwd_halo_$tag.jsonl" new_fwd &
  bench_op_on 1 grouped_conv_bwd_data $s "$out/bench_conv_bwd_data_halo_$tag.jsonl" new_bwd_data &
  bench_op_on 2 grouped_conv_fwd $s "$out/bench_conv_fwd_base_$tag.jsonl" old_fwd "$old" &
  bench_op_on 3 grouped_conv_bwd_data $s "$out/bench_conv_bwd_data_base_$tag.jsonl" old_bwd_data "$old" &
  wait
fi
cd "$out" && tar czf r.tgz --remove-files models datasets $(ls *.jsonl *.txt *.log 2>/dev/null)
