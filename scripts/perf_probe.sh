#!/usr/bin/env bash
# Performance probe for the GPU machine (run after device_run.sh has built, e.g. through its
# TC_EXTRA): cluster shapes and block sizes on the dense anchor shapes, and Nsight Compute's view
# of the default 8192^3 kernel. Prints everything to stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
bench=build/tools/bench/tilecast-bench
shapes=(--shape 8192,8192,8192 --shape 4096,7168,2048 --shape 4096,2112,7168)
run() {  # compile the variants in parallel first, then time them
  "$bench" --warm-jit "$(nproc)" "$@" | tail -1
  TILECAST_PLAN_DEBUG=1 "$bench" --warmup 5 --iters 20 "$@" 2>&1 | grep -E "^(dense|m4096|shape|tilecast:|suite)|x cuBLAS" | grep -v "^tilecast-bench"
}
echo "== cluster shapes (heuristic's blocks)"; run "${shapes[@]}" --cluster-compare
for cfg in block=128x128x64 block=128x192x64 block=64x256x64 block=128x256x64,stages=3 block=128x256x64,cluster=1x1 \
           block=128x256x64,cluster=2x1,multicast_b=0 block=128x256x64,swizzle=1 block=128x256x64,swizzle=16; do
  echo "== $cfg"; run "${shapes[@]}" --config "$cfg"
done
if command -v ncu >/dev/null; then
  echo "== ncu, default config, 8192^3"
  ncu --clock-control none --kernel-name regex:gemm_sm90 --launch-count 1 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis \
      "$bench" --shape 8192,8192,8192 --warmup 0 --iters 1 2>&1 | grep -vE "^==PROF==|^tilecast-bench" | tail -120
fi
