source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckc TRITON_CACHE_DIR=/tmp/tc
ckcore build gemm --arch sm_90 --workers 16 --json | tee $OUT/build_default.json
ckcore run gemm --problem '{"M":1000,"N":1000,"K":1000,"dtype":"bf16","layout":"rcr"}' --validate --json
ckcore run gemm --problem '{"M":37,"N":45,"K":70,"dtype":"fp32","layout":"crr"}' --validate --json
timeout 200 python3 -m pytest -q -m gpu plugins/gemm/tests/test_gemm_gpu.py -x 2>&1 | tail -15
ckcore bench gemm --suite benchmarks/suites/gemm.jsonl --limit 200 --out $OUT/bench_smoke.jsonl --warmup 5 --rep 20 2>&1 | tail -140
