source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/keep/ck TRITON_CACHE_DIR=/tmp/keep/triton
timeout 240 python3 benchmarks/compile_and_load.py $OUT/compile_load.json --keep /tmp/keep 2>&1 | tail -40
export CKCORE_CACHE_DIR=/tmp/keep/ck TRITON_CACHE_DIR=/tmp/keep/triton
timeout 200 python3 benchmarks/profile_gemm.py benchmarks/suites/gemm.jsonl $OUT/profile_full.jsonl --every 2 --rep 12 2>&1 | tail -70
timeout 100 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out $OUT/bench_default.jsonl --warmup 10 --rep 40 2>&1 | tail -3
