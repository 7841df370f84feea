#!/usr/bin/env bash
# Channels-first (PyTorch's default memory format) convolutions staged on channels-last copies
# (ckcore.staging), one device session per call: for each op named, build its default set, then
# `ckcore bench` on benchmarks/suites/conv_nchw.jsonl (the conv suite in channels-first layouts;
# cuDNN on contiguous tensors), staged and, with UNSTAGED=1, again with CKCORE_STAGING=0.
# SUITE=benchmarks/suites/conv.jsonl benches the channels-last suite instead (results named after the suite).
# usage (device machine, repository root): OUT=DIR [UNSTAGED=1] [SUITE=FILE] bash benchmarks/run_conv_staging_gpu.sh TAG OP...
set -u
source benchmarks/device_prologue.sh
shift
suite=${SUITE:-benchmarks/suites/conv_nchw.jsonl}
stem=$(basename "$suite" .jsonl)
for op in "$@"; do
  d=${op#grouped_conv_}
  ckcore build "$op" --workers 16 --json 2>&1 | cut -c1-120
  timeout ${BENCH_S:-200} ckcore bench "$op" --suite "$suite" --out "$out/bench_${stem}_${d}_$tag.jsonl" 2>&1 | tail -1 | cut -c1-400
  if [ -n "${UNSTAGED:-}" ]; then
    CKCORE_STAGING=0 timeout ${BENCH_S:-200} ckcore bench "$op" --suite "$suite" \
      --out "$out/bench_${stem}_${d}_unstaged_$tag.jsonl" 2>&1 | tail -1 | cut -c1-400
  fi
done
