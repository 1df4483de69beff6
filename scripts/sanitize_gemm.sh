#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over the GEMM's small problems (one per
# cluster shape and a companion launch: GemmSmall; one per grouped form and cluster shape:
# GroupedSmall) and, through TC_SANITIZE_FILTER, any correctness cases. Run on the GPU machine after a build (device_run.sh's TC_EXTRA); prints one
# summary line per tool and binary, and the first reported errors.
set -uo pipefail
cd "$(dirname "$0")/.."
filter=${TC_SANITIZE_FILTER:-*single_slab_buffer*bf16*}
runs=("build/tests/gpu/gemm/test_gemm_small --gtest_filter=GemmSmall.*"
      "build/tests/gpu/gemm/test_gemm_grouped --gtest_filter=GroupedSmall.*"
      "build/tests/gpu/gemm/test_gemm_correctness --gtest_filter=$filter")
status=0
for tool in memcheck racecheck synccheck; do
  for cmd in "${runs[@]}"; do
    log=$(mktemp)
    # shellcheck disable=SC2086
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 $cmd >"$log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && status=1
    echo "$tool $(basename "${cmd%% *}") rc=$rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" \
      "$(grep -E '^\[  PASSED|^\[  FAILED' "$log" | head -1)"
    [ $rc -ne 0 ] && grep -E "^=========" "$log" | head -20
    rm -f "$log"
  done
done
exit $status
