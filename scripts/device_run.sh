#!/usr/bin/env bash
# Hand this to the GPU machine (the device tool), with `.deps` carried:
#   mkdir -p .deps && cp -r /usr/src/googletest .deps/     (once, here)
#   run: scripts/device_run.sh          carry: [".deps"]
# It configures and builds there, fills the JIT cache (carry `.jit-cache` filled here with
# `tilecast-warm-gemm-tests` and `tilecast-warm` to skip most NVRTC time there),
# runs the cpu and gpu tests and the benchmark, and writes logs and a summary under $OUT (at most
# 8 files come back). Knobs, all optional:
#   TC_CTEST_REGEX   only the tests matching this regex        TC_SKIP_TESTS=1  no tests
#   TC_CTEST_EXCLUDE not the tests matching this regex         TC_CTEST_LABELS  default "cpu gpu"
#   TC_BENCH_ARGS    arguments for tilecast-bench               TC_SKIP_BENCH=1  no benchmark
#   TC_WARM_ARGS     arguments for tilecast-warm (the bench's kernels; default: its default suite)
#   TC_EXTRA         a command run last, output in extra.log (sanitizers, ncu, ...)
#   TC_BUILD_TARGETS build only these targets (space-separated); default: everything
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
source scripts/env.sh
export TILECAST_CACHE_DIR="${TILECAST_CACHE_DIR:-$PWD/.jit-cache}"
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
  nvidia-smi -q -d CLOCK | sed -n '1,40p'
  nvcc --version | tail -2
  nproc
} >"$summary" 2>&1
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

t0=$(date +%s)
if cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
   cmake --build build -j "$(nproc)" ${TC_BUILD_TARGETS:+--target $TC_BUILD_TARGETS} >>"$OUT/build.log" 2>&1; then
  note "build: ok in $(( $(date +%s) - t0 )) s"
else
  note "build: FAILED (see build.log)"; tail -40 "$OUT/build.log"; exit 1
fi

t0=$(date +%s)
# The test kernels only when tests run (about 70 s of NVRTC on 16 cores).
{ if [ "${TC_SKIP_TESTS:-0}" != 1 ]; then build/tests/gpu/gemm/tilecast-warm-gemm-tests "$(nproc)" | tail -3; fi
  build/tools/warm/tilecast-warm --threads "$(nproc)" ${TC_WARM_ARGS:-} 2>/dev/null | tail -1; } >"$OUT/warm.log" 2>&1
note "jit warm-up: $(( $(date +%s) - t0 )) s; $(grep -h 'kernels' "$OUT/warm.log" | tr '\n' ' ')"

if [ "${TC_SKIP_TESTS:-0}" != 1 ]; then
  regex=()
  [ -n "${TC_CTEST_REGEX:-}" ] && regex=(-R "$TC_CTEST_REGEX")
  [ -n "${TC_CTEST_EXCLUDE:-}" ] && regex+=(-E "$TC_CTEST_EXCLUDE")
  for label in ${TC_CTEST_LABELS:-cpu gpu}; do
    # GPU tests one at a time: some measure co-residency or time, and all share one GPU.
    jobs=8; [ "$label" = gpu ] && jobs=1
    # The cpu tests choose their own JIT cache folders: keep the shared warm cache away from them.
    cache_env=(); [ "$label" = cpu ] && cache_env=(env -u TILECAST_CACHE_DIR)
    "${cache_env[@]}" ctest --test-dir build -L "^${label}\$" "${regex[@]}" --output-on-failure -j "$jobs" \
      >"$OUT/ctest_${label}.log" 2>&1
    note "ctest $label: $(grep -E 'tests passed|tests failed' "$OUT/ctest_${label}.log" | tail -1)"
    grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run|\*\*\*Skipped|Exception' "$OUT/ctest_${label}.log" | head -20 | tee -a "$summary"
  done
fi

if [ "${TC_SKIP_BENCH:-0}" != 1 ] && [ -x build/tools/bench/tilecast-bench ]; then
  # shellcheck disable=SC2086
  # At most 8 files come back: summary, build, warm, two ctest logs, bench log and table, extra.
  build/tools/bench/tilecast-bench ${TC_BENCH_ARGS:-} --results-md "$OUT/bench.md" \
    >"$OUT/bench.log" 2>&1
  note "bench: exit $? (bench.log)"
  tail -60 "$OUT/bench.log"
fi

if [ -n "${TC_EXTRA:-}" ]; then
  bash -c "$TC_EXTRA" >"$OUT/extra.log" 2>&1
  note "extra: exit $? (extra.log)"
fi
cat "$summary"
