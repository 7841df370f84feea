#!/usr/bin/env bash
# The halo families (conv_halo_fwd / conv_halo_bwd_data / conv_halo_bwd_weight) on a 4-GPU machine (2 for one op)
# (repository root; results under OUT, packed into OUT/r.tgz), in two calls:
#   data:  build the ops' default sets; for each op of OPS (default "fwd bwd_data"; the four GPUs
#          shared out among them: two each, or every GPU of the machine for one op) every pair of the problems the
#          new instances serve (benchmarks/suites/tune_${SUITE:-halo}_OP.jsonl, from
#          benchmarks/new_instance_problems.py) into a new dataset, for at most TUNE_S seconds; the
#          served problems' rows of the committed datasets replaced by the new ones
#          (benchmarks/replace_problems.py) and the models retrained (`ckcore train`, into the
#          plugin; copies of datasets and models under OUT);
#   bench: the conv suite for each op with this tree and with the plugins of .old.tgz
#          (`git archive REV plugins/grouped_conv plugins/depthwise | gzip`), all at once (two ops:
#          this tree on GPUs 0-1, the old on 2-3; one op: GPU 0 and GPU 1).
# usage: OUT=DIR [OPS="fwd bwd_data"] [SUITE=halo] [TUNE_S=200] [BENCH_S=240] [BENCH_SUITE=benchmarks/suites/conv.jsonl] bash benchmarks/run_conv_halo_data.sh data|bench [TAG]
set -u
step=$1
shift
source benchmarks/device_prologue.sh
set +e
mkdir -p "$out/models" "$out/datasets"
ops=(${OPS:-fwd bwd_data})
for op in "${ops[@]}"; do ckcore build grouped_conv_$op --workers 60 --json 2>&1 | tail -1 | cut -c1-200; done
if [ "${#ops[@]}" = 1 ]; then gpus=("$(seq -s, 0 $(($(nvidia-smi -L | wc -l) - 1)))"); else gpus=("0,1" "2,3"); fi
if [ "$step" = data ]; then
  pids=()
  for i in "${!ops[@]}"; do
    op=${ops[$i]}
    ckcore tune grouped_conv_$op --suite benchmarks/suites/tune_${SUITE:-halo}_$op.jsonl --out "$out/datasets/new_$op.jsonl.gz" \
      --devices ${gpus[$i]} --max-seconds "${TUNE_S:-200}" 2> "$out/tune_$op.log" | tail -1 | cut -c1-300 &
    pids+=($!)
  done
  wait "${pids[@]}"
  rm -f "$out"/datasets/*.lock
  pids=()
  for op in "${ops[@]}"; do
    d=benchmarks/datasets/grouped_conv_${op}_h200.jsonl.gz
    merged=$(mktemp -u --suffix=.jsonl.gz)  # a fresh name: a warm machine keeps the last call's files
    if ! python3 benchmarks/replace_problems.py $d "$out/datasets/new_$op.jsonl.gz" --out "$merged" | tail -1 \
        || [ ! -s "$merged" ]; then
      echo "$op: merging the new rows failed: no training, the model stays the committed one"
      continue
    fi
    cp "$merged" $d
    cp $d "$out/datasets/"
    (ckcore train grouped_conv_$op --data $d --out plugins/grouped_conv/ck_plugin_grouped_conv/models 2>&1 \
      | grep -v -i warn | tail -6 > "$out/train_$op.txt") &
    pids+=($!)
  done
  wait "${pids[@]}"
  for op in "${ops[@]}"; do cp plugins/grouped_conv/ck_plugin_grouped_conv/models/grouped_conv_${op}_sm_90.* "$out/models/"; done
  cat "$out"/train_*.txt
else
  mkdir -p .old
  tar xzf .old.tgz -C .old
  old=$PWD/.old/plugins/grouped_conv:$PWD/.old/plugins/depthwise
  s=${BENCH_SUITE:-benchmarks/suites/conv.jsonl}
  export BENCH_S=${BENCH_S:-240}
  n=${#ops[@]}
  for i in "${!ops[@]}"; do
    op=${ops[$i]}
    bench_op_on $i grouped_conv_$op $s "$out/bench_conv_${op}_halo_$tag.jsonl" new_$op &
    bench_op_on $((i + n)) grouped_conv_$op $s "$out/bench_conv_${op}_base_$tag.jsonl" old_$op "$old" &
  done
  wait
fi
cd "$out" && tar czf r.tgz --remove-files models datasets $(ls *.jsonl *.txt *.log 2>/dev/null)
