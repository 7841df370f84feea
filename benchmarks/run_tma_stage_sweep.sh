#!/usr/bin/env bash
# Pipeline depth of the TMA forward convolution on this GPU: `ckcore tune` of the instances of
# benchmarks/sweep_tma_stages_fwd.json (benchmarks/make_tma_stage_sweep.py: 3-6 stages) on the
# stride-1 bf16 suite rows the TMA family serves with one group per program (dense 3x3, 3-D,
# RegNet's 40-channel groups), each pair validated against the reference; then the best instance
# per row and per stage count (benchmarks/tma_stage_summary.py).
# usage (device machine, repository root): OUT=DIR bash benchmarks/run_tma_stage_sweep.sh [TAG]
set -u
source benchmarks/device_prologue.sh
python3 -c "
import json
keep = {'resnet50.l1.3x3', 'resnet50.l2.3x3', 'resnet50.l3.3x3', 'resnet50.l4.3x3', 'resnet50.l3.3x3.b1', 'r3d18.c64',
        'r3d18.c256', 'unet3d.c32', 'regnetx4.s1.g2', 'regnetx4.s2.g6'}
with open('$out/tma_stage_rows.jsonl', 'w') as f:
    f.writelines(l for l in open('benchmarks/suites/conv.jsonl') if json.loads(l)['name'] in keep)"
ckcore build grouped_conv_fwd --kernel-set-file benchmarks/sweep_tma_stages_fwd.json --workers 16 --json 2>&1 | cut -c1-160
ckcore tune grouped_conv_fwd --suite "$out/tma_stage_rows.jsonl" --kernel-set-file benchmarks/sweep_tma_stages_fwd.json \
  --out "$out/tma_stage_sweep_fwd_$tag.jsonl.gz" --max-seconds ${MAX_S:-330} 2>"$out/tune_stages.log" | tail -1
python3 benchmarks/tma_stage_summary.py "$out/tma_stage_sweep_fwd_$tag.jsonl.gz" | tee "$out/tma_stage_summary_$tag.txt"
