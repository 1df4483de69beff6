#!/usr/bin/env bash
# Issue #14's multicast measurement, the whole device part in one run of at most 8 minutes:
#
#   run: scripts/multicast_device.sh          (timeout_s 600; carrying a .jit-cache that
#                                               `tilecast-warm` filled here saves ~10 s of NVRTC)
#
# Steps, each under its own time limit cut from the budget left (a step that fails or runs out
# keeps the files the others wrote):
#   build     tilecast-bench (Release, no tests) with the device's cmake and nvcc, in build-mcast
#   bench     tilecast-bench --suite mcast: flushed time, sustained clock, W and mJ per GEMM, the
#             traffic model (mcast.json, mcast.md; both rewritten after every problem)
#   counters  scripts/multicast_counters.sh: ncu's counts of one call per config and cuBLAS
#             (profile.json, counters.csv; the metric list goes into log.txt)
#   sections  4096x576x7168, our 128x144 tiles in clusters of 2 against cuBLAS: ncu's full set of
#             sections (MemoryWorkloadAnalysis_Tables, SpeedOfLight, WarpStateStats, ...) for
#             "why does cuBLAS request 40% fewer L2 sectors" (l2_576.ncu-rep, l2_576.txt)
#   report    scripts/multicast_report.py: multicast.png, and the table printed last
#   tests     (only when named in TC_MCAST_STEPS) GemmMulticastWorth.*, the GPU tests of the same
#             kernel configs; needs GoogleTest carried in .deps and NCCL
# $OUT gets at most 8 files: log.txt, mcast.json, mcast.md, profile.json, counters.csv,
# l2_576.ncu-rep, l2_576.txt, multicast.png. Knobs: TC_MCAST_BUDGET_S (480), TC_MCAST_STEPS
# ("build bench counters sections report"), TC_MCAST_ENERGY_S (2: seconds of each energy loop),
# TC_MCAST_BUILD_DIR (build-mcast), TC_MCAST_SECTIONS_CONFIG (block=128x144x64,cluster=2x1).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
log=$OUT/log.txt
: >"$log"
budget=${TC_MCAST_BUDGET_S:-480}
steps=" ${TC_MCAST_STEPS:-build bench counters sections report} "
build_dir=${TC_MCAST_BUILD_DIR:-build-mcast}
bench=$build_dir/tools/bench/tilecast-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/env.sh
export TILECAST_CACHE_DIR=${TILECAST_CACHE_DIR:-$PWD/.jit-cache}
# What later steps need at least (seconds), so that an earlier one cannot eat their time.
reserve_counters=90 reserve_sections=60 reserve_report=15

t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
left() { echo $((budget - $(elapsed))); }
say() { echo "$*" | tee -a "$log"; }
step() { say "== [$(elapsed) s of $budget, $(left) s left] $*"; }
wanted() { [[ "$steps" == *" $1 "* ]]; }
# limit WANT RESERVE: at most WANT seconds, leaving RESERVE for what follows (never below 1:
# `timeout 0` would mean no limit at all).
limit() {
  local l=$(($(left) - $2))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 1 ] && l=1
  echo "$l"
}
# bounded NAME SECONDS CMD...: runs CMD under a time limit, its output into the log.
bounded() {
  local name=$1 secs=$2
  shift 2
  if [ "$secs" -lt 10 ]; then
    say "$name: skipped, ${secs} s left for it"
    return 124
  fi
  timeout --kill-after=15 "$secs" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] && say "$name: stopped at its limit of $secs s"
  say "$name: exit $rc after $(elapsed) s"
  return "$rc"
}

step "machine"
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,power.draw,temperature.gpu --format=csv
  nvcc --version | tail -1
  command -v ncu && ncu --version | tail -1
  echo "cores: $(nproc)"
} >>"$log" 2>&1

if wanted build; then
  step "build"
  # env.sh's generator choice: Ninja where installed (a folder keeps the one it was made with).
  generator=()
  [ -f "$build_dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
  if cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTILECAST_BUILD_TESTS=OFF \
       -DTILECAST_BUILD_COMM=OFF >"$tmp/build.log" 2>&1 &&
     timeout "$(limit 330 $((reserve_counters + reserve_sections + reserve_report + 60)))" \
       cmake --build "$build_dir" -j "$(nproc)" --target tilecast-bench >>"$tmp/build.log" 2>&1; then
    say "build: ok after $(elapsed) s"
  else
    say "build: FAILED"
    tail -40 "$tmp/build.log" | tee -a "$log"
  fi
fi
[ -x "$bench" ] || { say "no $bench: nothing to run"; exit 1; }

if wanted bench; then
  step "bench --suite mcast"
  bounded bench "$(limit 330 $((reserve_counters + reserve_sections + reserve_report)))" \
    "$bench" --suite mcast --energy-s "${TC_MCAST_ENERGY_S:-2}" --json "$OUT/mcast.json" --results-md "$OUT/mcast.md"
fi

if wanted counters; then
  step "counters (ncu, one call per config)"
  bounded counters "$(limit 200 $((reserve_sections + reserve_report)))" \
    scripts/multicast_counters.sh "$tmp/counters" "$bench"
  for f in profile.json counters.csv; do [ -f "$tmp/counters/$f" ] && cp "$tmp/counters/$f" "$OUT/"; done
  [ -f "$tmp/counters/metrics.txt" ] && cat "$tmp/counters/metrics.txt" >>"$log"
fi

if wanted sections; then
  step "sections (ncu full set, 4096x576x7168: ours and cuBLAS's)"
  sections_run() {
    local rc
    profile_sections() {
      ncu "$@" --replay-mode kernel --clock-control none --set full -f -o "$tmp/l2_576" \
        "$bench" --ncu-pass --shape 4096,576,7168 --config "${TC_MCAST_SECTIONS_CONFIG:-block=128x144x64,cluster=2x1}" \
          --flush-mb 0 --json "$tmp/l2_576.json" >"$tmp/sections.log" 2>&1
    }
    profile_sections --nvtx --nvtx-include "tilecast_mcast_profile/"
    rc=$?
    if ! ncu --import "$tmp/l2_576.ncu-rep" --page raw --csv 2>/dev/null | grep -q gemm; then
      # As multicast_counters.sh falls back: by kernel name (cuBLAS's FP32 reference and our check
      # run come along; the markers say which two are the timed calls).
      echo "sections: the NVTX filter let no GEMM through; again with a kernel-name filter"
      profile_sections --kernel-name "regex:copy_convert|gemm|nvjet|xmma|cutlass"
      rc=$?
    fi
    grep -E "^(mcast:|==ERROR==|==WARNING==|custom)" "$tmp/sections.log" | head -20
    [ -s "$tmp/l2_576.ncu-rep" ] || return $rc
    {
      ncu --import "$tmp/l2_576.ncu-rep" --page details --print-details all
      echo "===== raw page (every metric collected, one line per kernel) ====="
      ncu --import "$tmp/l2_576.ncu-rep" --page raw --csv
    } >"$OUT/l2_576.txt" 2>&1
    # At most 16 MiB a file comes back.
    if [ "$(stat -c %s "$tmp/l2_576.ncu-rep")" -lt $((15 << 20)) ]; then
      cp "$tmp/l2_576.ncu-rep" "$OUT/"
    else
      echo "l2_576.ncu-rep is $(stat -c %s "$tmp/l2_576.ncu-rep") bytes: left out (the text export has it all)"
    fi
    return $rc
  }
  export -f sections_run
  export bench tmp OUT
  bounded sections "$(limit 150 "$reserve_report")" bash -c sections_run
fi

if wanted report; then
  step "report"
  if [ -f "$OUT/mcast.json" ]; then
    args=(--bench "$OUT/mcast.json" --png "$OUT/multicast.png" --md "$tmp/table.md" --summary)
    [ -f "$OUT/profile.json" ] && [ -f "$OUT/counters.csv" ] && args+=(--profile "$OUT/profile.json" --csv "$OUT/counters.csv")
    timeout 60 python3 scripts/multicast_report.py "${args[@]}" >"$tmp/summary.md" 2>&1
    say "report: exit $?"
    [ -f "$tmp/table.md" ] && cat "$tmp/table.md" >>"$log"
  else
    say "report: no mcast.json"
  fi
fi
if wanted tests; then
  # Optional (not in the default steps): the GPU tests of the same kernel configs. Needs
  # GoogleTest (carry .deps after `mkdir -p .deps && cp -r /usr/src/googletest .deps/` here)
  # and NCCL (the tests cover comm).
  step "tests (GemmMulticastWorth: the suite's configs on a ragged problem)"
  if cmake -S . -B "$build_dir" -DTILECAST_BUILD_TESTS=ON -DTILECAST_BUILD_COMM=ON >>"$tmp/build.log" 2>&1 &&
     timeout "$(limit 240 0)" cmake --build "$build_dir" -j "$(nproc)" --target test_gemm_correctness \
       >>"$tmp/build.log" 2>&1; then
    bounded tests "$(limit 120 0)" "$build_dir/tests/gpu/gemm/test_gemm_correctness" \
      --gtest_filter='McastConfigs/GemmMulticastWorth.*'
  else
    say "tests: build FAILED (GoogleTest carried in .deps? NCCL found?)"
    tail -20 "$tmp/build.log" | tee -a "$log"
  fi
fi
step "done; files: $(cd "$OUT" && ls | tr '\n' ' ')"
# The main table last, where the run's output tail shows it (the whole page is in log.txt).
[ -f "$tmp/summary.md" ] && cat "$tmp/summary.md"
exit 0
