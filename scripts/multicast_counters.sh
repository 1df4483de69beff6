#!/usr/bin/env bash
# Nsight Compute's counts for every config of `tilecast-bench --suite mcast` and cuBLASLt's kernel
# on the same shapes, on the GPU machine (after a build; scripts/multicast_device.sh runs it):
#
#   scripts/multicast_counters.sh OUTDIR [BENCH]        (BENCH: build/tools/bench/tilecast-bench)
#
# Writes into OUTDIR:
#   metrics.txt   the ncu metrics of this GPU whose names speak of L2, TMA or multicast (what the
#                 candidates below were filtered against), then the ones collected
#   profile.json  the bench's --ncu-pass rows: row with profile_index i is the i-th profiled call
#   counters.csv  ncu's raw page, one line per kernel: each call is a copy_convert_kernel marker,
#                 then the call's kernels (tilecast: main and companion; cuBLAS: its own); one
#                 more marker closes each problem
# scripts/multicast_report.py joins these with the timed run's JSON. Knobs: TC_NCU (ncu binary),
# TC_COUNTERS_ARGS (more bench arguments, e.g. --shape 4096,576,7168 for a problem of its own).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:?usage: scripts/multicast_counters.sh OUTDIR [BENCH]}
bench=${2:-build/tools/bench/tilecast-bench}
ncu=${TC_NCU:-ncu}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What each candidate is for (all summed over a call's kernels by the report):
#   L2 side: sectors and requests the L2 slices served, by source unit (tex = the SMs' L1/TMA
#     path), by source node (gpc), over the fabric between the two L2 partitions, and in all;
#   SM side: bytes and sectors the crossbar delivered into L1/shared memory, all of them and those
#     of TMA loads, split by multicast destination where the chip counts it;
#   the tensor pipe's busy share (hmma on older ncu, gmma where wgmma is counted apart), executed
#     instructions, time and SM clock under ncu.
candidates=(
  gpu__time_duration.sum
  sm__cycles_elapsed.avg.per_second
  lts__t_sectors.sum
  lts__t_sectors_op_read.sum
  lts__t_requests_srcunit_tex.sum
  lts__t_requests_srcunit_tex_op_read.sum
  lts__t_sectors_srcunit_tex.sum
  lts__t_sectors_srcunit_tex_op_read.sum
  lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
  lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
  lts__t_sectors_srcnode_gpc.sum
  lts__t_sectors_srcnode_gpc_op_read.sum
  lts__t_sectors_srcunit_ltcfabric.sum
  lts__t_sectors_aperture_device_op_multicast.sum
  lts__d_sectors.sum
  lts__t_bytes.sum
  dram__bytes_read.sum
  l1tex__m_xbar2l1tex_read_bytes.sum
  l1tex__m_xbar2l1tex_read_sectors.sum
  l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum
  l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum
  l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld_dest_multicast.sum
  l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld_dest_self.sum
  l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld.sum
  l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum
  l1tex__m_l1tex2xbar_req_cycles_active_op_tma.sum
  smsp__sass_inst_executed_op_tma_ld.sum
  sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  smsp__inst_executed.sum
)
# More metrics whose names say TMA load or multicast, found in the list, up to this many (each
# adds replay passes; the fixed list above already holds the ones known to matter).
max_found=16

t0=$(date +%s)
if ! "$ncu" --query-metrics >"$tmp/query.txt" 2>&1; then
  "$ncu" --query-metrics --chip gh100 >"$tmp/query.txt" 2>&1 || true
fi
# The first word of each line that looks like a metric name (unit__counter).
sed -nE 's/^[[:space:]]*([a-z0-9]+__[A-Za-z0-9_]+).*/\1/p' "$tmp/query.txt" | sort -u >"$tmp/names.txt"
{
  echo "# ncu --query-metrics: $(wc -l <"$tmp/names.txt") metrics; those naming lts__t_, xbar, tma, multicast, dshared:"
  grep -E 'lts__t_(sectors|requests|bytes)|xbar2l1tex|l1tex2xbar|tma|multicast|dshared|pipe_tensor' "$tmp/names.txt"
} >"$out/metrics.txt"

# Those of a list that this GPU has (all of them when ncu could not list its metrics).
on_this_gpu() {
  local m
  for m in "$@"; do
    if [ ! -s "$tmp/names.txt" ] || grep -qx "${m%%.*}" "$tmp/names.txt"; then echo "$m"
    else echo "# not on this GPU: $m" >>"$out/metrics.txt"; fi
  done
}
mapfile -t metrics < <(on_this_gpu "${candidates[@]}")
found=0
while read -r base; do
  [ "$found" -ge "$max_found" ] && break
  case " ${metrics[*]} " in *" $base."*) continue ;; esac
  metrics+=("$base.sum")
  found=$((found + 1))
done < <(grep -E '^(l1tex__m_|lts__t_).*(tma_ld|multicast)' "$tmp/names.txt")
list=$(IFS=,; echo "${metrics[*]}")
echo "# collected (${#metrics[@]}): $list" >>"$out/metrics.txt"
echo "counters: ${#metrics[@]} metrics ($(( $(date +%s) - t0 )) s to list them)"

# One call per config, each after a marker, inside the bench's NVTX range; kernel replay, caches
# flushed before each pass (as the timed run flushes L2), clocks left alone (METHOD.md).
nvtx_filter=(--nvtx --nvtx-include "tilecast_mcast_profile/")
# Without the NVTX filter: the markers, ours (gemm_sm90_kernel) and cuBLAS's (nvjet_*, *xmma*,
# cutlass*); the report drops what lies outside the markers (the check runs, cuBLAS's reference).
name_filter=(--kernel-name "regex:copy_convert|gemm|nvjet|xmma|cutlass")
profile() {  # $1: metric list, then the filter
  local list=$1
  shift
  "$ncu" "$@" --replay-mode kernel --cache-control all --clock-control none --metrics "$list" -f -o "$tmp/counters" \
    "$bench" --suite mcast --ncu-pass --flush-mb 0 --json "$out/profile.json" ${TC_COUNTERS_ARGS:-} \
    >"$tmp/ncu.log" 2>&1
}
export_csv() {
  "$ncu" --import "$tmp/counters.ncu-rep" --csv --page raw --print-units base >"$out/counters.csv" 2>"$tmp/import.log" ||
    { echo "counters: import failed"; cat "$tmp/import.log"; }
}
# Data lines of the CSV: the header and the units line are not kernels.
kernels() {
  local n=0
  [ -f "$out/counters.csv" ] && n=$(($(grep -c . "$out/counters.csv") - 2))
  echo $((n > 0 ? n : 0))
}

profile "$list" "${nvtx_filter[@]}"
rc=$?
# ncu passes on the bench's exit code (1 when a check failed): only a missing report means that
# the list itself was refused.
if [ ! -s "$tmp/counters.ncu-rep" ]; then
  echo "counters: no report from ncu (exit $rc) with the full list; retrying with the core metrics"
  tail -20 "$tmp/ncu.log"
  mapfile -t core_metrics < <(on_this_gpu gpu__time_duration.sum lts__t_sectors_srcunit_tex_op_read.sum \
    lts__t_requests_srcunit_tex_op_read.sum lts__t_sectors.sum l1tex__m_xbar2l1tex_read_bytes.sum \
    l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum \
    sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active)
  list=$(IFS=,; echo "${core_metrics[*]}")
  echo "# retried with: $list" >>"$out/metrics.txt"
  profile "$list" "${nvtx_filter[@]}"
  rc=$?
fi
grep -E "^(mcast:|==ERROR==|==WARNING==)" "$tmp/ncu.log" | head -20
export_csv
if [ "$(kernels)" -le 0 ]; then
  echo "counters: the NVTX filter let no kernel through; again with a kernel-name filter"
  echo "# NVTX filter matched nothing; profiled by kernel name instead" >>"$out/metrics.txt"
  profile "$list" "${name_filter[@]}"
  rc=$?
  grep -E "^(==ERROR==|==WARNING==)" "$tmp/ncu.log" | head -10
  export_csv
fi
echo "counters: exit $rc, $(kernels) kernels profiled in $(( $(date +%s) - t0 )) s"
exit $rc
