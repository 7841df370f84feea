# Sourced by the Nsight Compute scripts (benchmarks/*_ncu.sh) on the device: ckcore installed, a
# build cache, and the report sections they print.
source benchmarks/device_setup.sh >/dev/null 2>&1
export CKCORE_CACHE_DIR=/tmp/ckncu/ck TRITON_CACHE_DIR=/tmp/ckncu/triton
sections="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis"
