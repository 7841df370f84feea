#!/usr/bin/env bash
# Every instance of the gemm `full` set (all installed plugins: split-K, stream-K included) timed
# on the bf16 rows issue 6's suite loses most on, against torch.matmul: is a faster kernel
# already in the full set (a default-set question) or in none (a kernel question)?
# usage (device machine, repository root): OUT=DIR bash benchmarks/profile_full_gemm.sh [TAG]
set -u
source benchmarks/device_prologue.sh
ckcore build gemm --set full --workers 16 --json 2>&1 | cut -c1-200
: > "$out/profile_full_gemm_$tag.jsonl"
for shape in "3000 2000 1000" "1024 6144 4096" "1024 10240 8192" "2048 2048 2048" "1024 1024 1024" "4096 14336 512"; do
  set -- $shape
  layout=rcr; [ "$3" = 512 ] && layout=crr
  timeout 100 ckcore profile gemm --set full --json --warmup 10 --rep 40 \
    --problem "{\"M\": $1, \"N\": $2, \"K\": $3, \"dtype\": \"bf16\", \"layout\": \"$layout\"}" >> "$out/profile_full_gemm_$tag.jsonl"
  python3 -c "
import json
r = [json.loads(l) for l in open('$out/profile_full_gemm_$tag.jsonl')][-1]
print(r['problem'], 'torch', round(r['torch_ms'] * 1e3, 1), 'selected', r['selected'])
for i in r['instances'][:4]: print('   ', round(i['time_ms'] * 1e3, 1), i['instance'])"
done
