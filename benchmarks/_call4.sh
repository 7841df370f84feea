source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/k2/ck TRITON_CACHE_DIR=/tmp/k2/triton
timeout 400 python3 benchmarks/sweep_rcr.py $OUT/sweep.jsonl 2>&1 | tail -20
