# Sourced by the device scripts (after `set -u`): $out (OUT, default benchmarks/results) and $tag
# (the script's first argument, default h100), the carried wheels and ckcore installed
# (device_setup.sh), and the kernel and Triton caches under /tmp/ckh.
out=${OUT:-benchmarks/results}
tag=${1:-h100}
mkdir -p "$out"
source benchmarks/device_setup.sh
export CKCORE_CACHE_DIR=/tmp/ckh/ck TRITON_CACHE_DIR=/tmp/ckh/triton
