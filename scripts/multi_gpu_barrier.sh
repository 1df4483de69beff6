#!/usr/bin/env bash
# The cross-GPU barrier's runs on whatever GPUs are visible, results under $OUT.
#
#   scripts/multi_gpu_barrier.sh [build] [single] [multi]      (default: all three)
#
#   build   configures and builds the comm targets only (build dir: $TILECAST_BUILD_DIR or build)
#   single  the one-GPU proofs: the comm gpu ctests (emulated ranks, grid sync, co-residency,
#           several processes per GPU), compute-sanitizer racecheck/synccheck/memcheck on a short
#           run, and tilecast-barrier-bench (emulated-rank latency, launch boundary, NCCL)
#   multi   with N >= 2 GPUs: one process per GPU through tilecast-launch, NCCL carrying the
#           metadata: payload correctness (and across the counter wrap), the negative run (the
#           last rank leaves after 8 barriers; every other rank must time out naming it), and
#           latency (1 CTA and a full GPU of CTAs per rank, next to NCCL's one-int all-reduce)
#
# Writes at most 8 files to $OUT (the device tool's limit): summary.txt, build.log, ctest.log,
# sanitizer.log, bench.log, barrier_bench.md, multi.log, device.txt. Exit status: 0 if every run
# did what it should.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
source scripts/env.sh
B="${TILECAST_BUILD_DIR:-build}"
# This library never uses NVLink multicast; keep NCCL from trying it (a shared-host policy too).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build single multi)
summary="$OUT/summary.txt"
touch "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
fail() { note "FAIL: $*"; status=1; }
has() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -20
  nvcc --version | tail -1
} >"$OUT/device.txt" 2>&1
note "gpus: $ngpu ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1))"

launch="$B/tools/launch/tilecast-launch"
worker="$B/tests/gpu/comm/tilecast_comm_barrier_worker"

# The comm targets alone, for when the whole project does not configure (other layers mid-change):
# the same folders, a minimal top level.
standalone_cmake() {
  local dir=$1 root=$PWD
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.24)
project(tilecast_comm_only LANGUAGES CXX CUDA)
set(CMAKE_CXX_STANDARD 20)
find_package(CUDAToolkit 13.0 REQUIRED)
find_package(Threads REQUIRED)
set(PROJECT_SOURCE_DIR $root)
set(TILECAST_GTEST_SOURCE_DIR $root/.deps/googletest)
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory(\${TILECAST_GTEST_SOURCE_DIR} googletest EXCLUDE_FROM_ALL)
  add_library(GTest::gtest ALIAS gtest)
  add_library(GTest::gtest_main ALIAS gtest_main)
endif()
find_path(TILECAST_CCCL_INCLUDE_DIR cuda/ptx PATHS \${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl NO_DEFAULT_PATH REQUIRED)
include($root/cmake/tilecast_tests.cmake)
enable_testing()
add_library(tilecast_device INTERFACE)
target_include_directories(tilecast_device INTERFACE $root/include \${TILECAST_CCCL_INCLUDE_DIR})
add_library(tilecast_gpu_test_main STATIC $root/tests/common/gpu_test_main.cpp)
target_link_libraries(tilecast_gpu_test_main PUBLIC GTest::gtest CUDA::cudart_static)
target_compile_definitions(tilecast_gpu_test_main PRIVATE TILECAST_SKIP_CODE=77)
add_subdirectory($root/src/comm src/comm)
add_subdirectory($root/tools/launch tools/launch)
add_subdirectory($root/tests/gpu/comm tests/gpu/comm)
CMAKE
}

if has build; then
  t0=$(date +%s)
  targets=(tilecast-launch tilecast_comm_barrier_worker tilecast-barrier-bench test_comm_gpu_grid_sync
           test_comm_gpu_emulated_ranks)
  if cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1; then
    note "configure: the whole project"
  else
    note "configure: the whole project failed (build.log); building the comm targets on their own"
    standalone_cmake "$B-src"
    cmake -S "$B-src" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release >>"$OUT/build.log" 2>&1 || {
      fail "configure (build.log)"; tail -30 "$OUT/build.log"; exit 1; }
  fi
  note "$(grep -m1 'tilecast_comm: NCCL' "$OUT/build.log")"
  if cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" >>"$OUT/build.log" 2>&1; then
    note "build: ok in $(( $(date +%s) - t0 )) s"
  else
    fail "build (build.log)"; tail -30 "$OUT/build.log"; exit 1
  fi
fi

if has single && [ "$ngpu" -ge 1 ]; then
  # In order of what matters most, each step bounded, so that a slow step cannot eat the rest.
  : >"$OUT/ctest.log"
  timeout 150 ctest --test-dir "$B" -L '^gpu$' -R 'test_comm_gpu' -V >>"$OUT/ctest.log" 2>&1 || status=1
  note "ctest gpu comm (one process): $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
  if grep -q 'test_comm_gpu_emulated_ranks .*Failed' "$OUT/ctest.log"; then
    # Tell apart a protocol bug from cooperative kernels that would not run side by side.
    echo "=== emulated ranks again, plain launches per rank" >>"$OUT/ctest.log"
    TILECAST_EMULATION_LAUNCH=plain timeout 60 "$B/tests/gpu/comm/test_comm_gpu_emulated_ranks" \
      --gtest_filter='CommEmulatedRanks.*' >>"$OUT/ctest.log" 2>&1
    note "emulated ranks with plain launches: exit $?"
  fi
  timeout 60 "$B/tests/gpu/comm/tilecast-barrier-bench" --out "$OUT/barrier_bench.md" >"$OUT/bench.log" 2>&1 ||
    fail "bench (bench.log)"
  note "bench: $(grep -c ' us ' "$OUT/bench.log") rows (barrier_bench.md)"
  : >"$OUT/sanitizer.log"
  for tool in racecheck synccheck memcheck; do
    # Short runs only: the sanitizer serialises kernels, so the ranks are played by one kernel.
    echo "=== $tool" >>"$OUT/sanitizer.log"
    timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/tests/gpu/comm/test_comm_gpu_emulated_ranks" --gtest_filter='CommEmulatedRanks.ShortRunForSanitizers' \
      >>"$OUT/sanitizer.log" 2>&1
    rc=$?
    note "compute-sanitizer $tool: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"
    [ $rc -eq 0 ] || status=1
  done
  # Several processes on one GPU: their kernels time-slice, so this tests the bootstrap and the
  # protocol across processes; its latency is the time slice's, not the barrier's.
  timeout 120 ctest --test-dir "$B" -L '^gpu$' -R 'CommGpuMultiProcess' --output-on-failure >>"$OUT/ctest.log" 2>&1 ||
    status=1
  note "ctest gpu comm (several processes): $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
  grep -E '\*\*\*Failed|Timeout|\*\*\*Skipped|Exception' "$OUT/ctest.log" | head -10 | tee -a "$summary"
  grep -hE '^(grid sync|[0-9] ranks x|cooperative launch)|worker: ' "$OUT/ctest.log" | sort -u | head -30 >>"$summary"
  timeout 40 "$launch" -n 2 --gpus 1 --procs-per-gpu 2 -- "$worker" --bench --ctas 1 --rounds 200 --timeout-ms 20000 \
    >"$OUT/multi.log" 2>&1 || fail "2 processes on one GPU, bench (multi.log)"
  grep -E '^BENCH' "$OUT/multi.log" | tee -a "$summary"
fi

if has multi; then
  if [ "$ngpu" -lt 2 ]; then
    note "multi: skipped, $ngpu GPU visible (needs 2 or more)"
  else
    ml="$OUT/multi.log"
    run() {  # run NAME launcher-args... -- worker-args...
      local name=$1; shift
      echo "=== $name: $*" >>"$ml"
      timeout 300 "$launch" --timeout 280 "$@" >>"$ml" 2>&1
    }
    run correct -n "$ngpu" -- "$worker" --rounds 100000 --ctas 4 --words 64 --meta nccl || fail "multi correctness"
    run wrap -n "$ngpu" -- "$worker" --rounds 1000 --ctas 4 --wrap --meta nccl --fd socket || fail "multi wrap"
    for form in epoch ps; do
      run "negative-$form" -n "$ngpu" -- "$worker" --rounds 64 --form "$form" --missing-rank $((ngpu - 1)) \
        --timeout-ms 2000 --meta nccl || fail "multi negative $form"
    done
    run bench-1cta -n "$ngpu" -- "$worker" --bench --ctas 1 --rounds 20000 --meta nccl --nccl-baseline || fail "multi bench"
    run bench-fullgpu -n "$ngpu" -- "$worker" --bench --ctas 0 --rounds 20000 --meta nccl || fail "multi bench full"
    grep -E '^(BENCH|worker:|rank [0-9]+: .*negative)' "$ml" | tee -a "$summary"
  fi
fi
note "status: $status"
exit $status
