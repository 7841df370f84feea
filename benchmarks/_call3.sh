source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/keep/ck TRITON_CACHE_DIR=/tmp/keep/triton
ckcore build gemm --set full --arch sm_90 --workers 16 --json | tee $OUT/build_full.json | cut -c1-300
timeout 150 python3 benchmarks/profile_gemm.py benchmarks/suites/gemm.jsonl $OUT/profile_tma.jsonl --family gemm_tma --every 3 --rep 10 2>&1 | tail -50
timeout 120 ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --out $OUT/bench_default.jsonl --warmup 10 --rep 40 2>&1 | tail -2
