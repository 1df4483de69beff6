#!/usr/bin/env bash
# Performance probe for the GPU machine (run after device_run.sh has built, e.g. through its
# TC_EXTRA): cluster shapes and block sizes on dense anchor shapes, Nsight Compute's view of the
# default 8192^3 kernel, and the SASS around its HGMMAs. Prints everything to stdout. Knobs:
# TC_PROBE_SHAPES, TC_PROBE_CONFIGS, TC_PROBE_COMPARE=0 (no cluster-shape rows), TC_PROBE_NCU_SHAPE,
# TC_PROBE_NCU_LINES, TC_PROBE_CUBLAS_NAMES (shapes whose cuBLAS kernel to name), TC_PROBE_SASS=0.
set -uo pipefail
cd "$(dirname "$0")/.."
bench=build/tools/bench/tilecast-bench
warm=build/tools/warm/tilecast-warm
shapes=(${TC_PROBE_SHAPES:---shape 8192,8192,8192 --shape 4096,7168,2048})
run() {  # compile the variants in parallel first, then time them
  "$warm" --threads "$(nproc)" "$@" 2>/dev/null | tail -1
  TILECAST_PLAN_DEBUG=1 "$bench" --warmup 5 --iters 20 "$@" 2>&1 |
    grep -vE "^(command|timing|problems|tilecast library|tilecast-bench:)" | grep -vE "^ +(FAIL|rel_fro)" | head -40
}
[ "${TC_PROBE_COMPARE:-1}" = 1 ] && { echo "== cluster shapes"; run "${shapes[@]}" --cluster-compare; }
for cfg in ${TC_PROBE_CONFIGS:-block=128x128x64,cluster=2x1 block=128x256x64,cluster=1x1 block=128x256x64,cluster=2x1,stages=3}; do
  echo "== $cfg"; run "${shapes[@]}" --config "$cfg"
done
if command -v ncu >/dev/null; then
  # Both kernels of one shape: ours (gemm_sm90) and cuBLAS's (its reference FP32 run and its timed
  # BF16 run), so the two can be read side by side.
  ncu_shape=${TC_PROBE_NCU_SHAPE:-8192,8192,8192}
  echo "== ncu, default config and cuBLAS, $ncu_shape"
  ncu --clock-control none --kernel-name regex:"${TC_PROBE_NCU_KERNELS:-gemm|xmma|cutlass|sm90}" --launch-count ${TC_PROBE_NCU_COUNT:-4} \
      --section SpeedOfLight --section LaunchStats \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_wait,smsp__average_warp_latency_issue_stalled_math_pipe_throttle,smsp__average_warp_latency_issue_stalled_membar,smsp__average_warp_latency_issue_stalled_sleeping,lts__t_bytes.sum.per_second,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,lts__t_sector_hit_rate.pct,dram__bytes_read.sum \
      "$bench" --shape "$ncu_shape" --warmup 0 --iters 1 ${TC_PROBE_NCU_ARGS:-} 2>&1 | grep -vE "^==PROF==|^tilecast-bench" |
      grep -vE "^ +-+ +-+|^ *$|OPT |INF |WRN " | head -${TC_PROBE_NCU_LINES:-160}
fi
# The kernel cuBLAS picks for each of these shapes (its name carries tile, stages and cluster).
for shape in ${TC_PROBE_CUBLAS_NAMES:-}; do
  echo "== cuBLAS kernel for $shape"
  ncu --clock-control none --kernel-name regex:'nvjet|xmma|cutlass' --launch-skip 1 --launch-count 1 --section LaunchStats \
      "$bench" --shape "$shape" --warmup 0 --iters 1 2>&1 | grep -E "^  [a-z_]+.*\(|Grid Size|Cluster Size|Dynamic Shared" | head -4
done
[ "${TC_PROBE_SASS:-1}" = 1 ] || exit 0
if command -v cuobjdump >/dev/null; then
  # The kernel the planner picks for TC_PROBE_SASS_SHAPE (TC_PROBE_SASS_CONFIG overrides it),
  # compiled into a fresh cache with its cubin kept; TC_PROBE_SASS_FILE: where to keep the whole
  # listing (otherwise only the lines around the mainloop are printed).
  sass_cache=$(mktemp -d)
  TILECAST_CACHE_DIR=$sass_cache TILECAST_JIT_DEBUG=2 "$warm" --shape "${TC_PROBE_SASS_SHAPE:-8192,8192,8192}" \
    ${TC_PROBE_SASS_CONFIG:+--config "$TC_PROBE_SASS_CONFIG"} 2>/dev/null | grep -E "^(compiled|cached)"
  cubin=$(ls "$sass_cache"/v1/*.cubin | head -1)
  echo "== SASS around the mainloop ($(grep -h 'name expression' "$sass_cache"/v1/*.cu | head -1))"
  cuobjdump -sass "$cubin" >/tmp/probe.sass && grep -nE "HGMMA|WARPGROUP|SYNCS|BAR|DEPBAR|WARPSYNC|BRA" /tmp/probe.sass | head -80
  [ -n "${TC_PROBE_SASS_FILE:-}" ] && cp /tmp/probe.sass "$TC_PROBE_SASS_FILE"
fi
