# Sourced by the device scripts (after `set -u`): $out (OUT, default benchmarks/results) and $tag
# (the script's first argument, default h100), the carried wheels and ckcore installed
# (device_setup.sh), and the kernel and Triton caches under /tmp/ckh.
out=${OUT:-benchmarks/results}
tag=${1:-h100}
mkdir -p "$out"
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckh/ck TRITON_CACHE_DIR=/tmp/ckh/triton

# Issue 6's bf16 suite: the bf16 rows of benchmarks/suites/gemm.jsonl with M >= 1024, written to FILE.
gemm_bf16_m1024() {  # FILE
  python3 -c "
import json, sys
rows = [json.loads(l) for l in open('benchmarks/suites/gemm.jsonl')]
open(sys.argv[1], 'w').writelines(json.dumps(r) + '\n' for r in rows if r['dtype'] == 'bf16' and r['M'] >= 1024)" "$1"
}

# The depthwise rows (C/G = 1) of benchmarks/suites/conv.jsonl, written to FILE.
dw_rows() {  # FILE
  python3 -c "
import json, sys
rows = [json.loads(l) for l in open('benchmarks/suites/conv.jsonl') if l.strip()]
open(sys.argv[1], 'w').writelines(json.dumps(r) + '\n' for r in rows if r['C'] == r['G'])" "$1"
}

# `ckcore bench OP` of SUITE on one GPU into FILE (at most BENCH_S s, default 170), its summary line
# printed after LABEL; PYTHONPATH, when given, chooses which plugin trees load.
bench_op_on() {  # GPU OP SUITE FILE LABEL [PYTHONPATH]
  PYTHONPATH=${6:-} CUDA_VISIBLE_DEVICES=$1 timeout "${BENCH_S:-170}" ckcore bench "$2" --suite "$3" \
    --out "$4" 2>&1 | tail -1 | cut -c1-300 | sed "s/^/$5: /"
}

# `ckcore bench gemm` of SUITE on one GPU into $out/bench_NAME_$tag.jsonl (bench_op_on).
bench_gemm_on() {  # GPU SUITE NAME [PYTHONPATH]
  bench_op_on "$1" gemm "$2" "$out/bench_$3_$tag.jsonl" "$3" "${4:-}"
}

# Issue 6's two suites with this tree (GPUs 0, 1: names ..._NEW) and with the gemm and stream-K
# plugins carried in .old/ (GPUs 2, 3: ..._OLD), four benches at once; needs /tmp/gemm_bf16_m1024.jsonl.
bench_gemm_four() {  # NEW OLD
  local old=$PWD/.old/plugins/gemm:$PWD/.old/plugins/stream_k
  bench_gemm_on 0 /tmp/gemm_bf16_m1024.jsonl "gemm_bf16_m1024_$1" &
  bench_gemm_on 1 benchmarks/suites/gemm_bias_gelu.jsonl "gemm_bias_gelu_$1" &
  bench_gemm_on 2 /tmp/gemm_bf16_m1024.jsonl "gemm_bf16_m1024_$2" "$old" &
  bench_gemm_on 3 benchmarks/suites/gemm_bias_gelu.jsonl "gemm_bias_gelu_$2" "$old" &
  wait
}
