#!/usr/bin/env bash
# A/B of a device-header experiment with one build, on the GPU machine: tilecast-bench runs the
# same arguments in alternating processes, A as the headers stand and B with
# TILECAST_JIT_OPTIONS="$TC_AB_OPTIONS" (a -D that switches the experiment on), TC_AB_ROUNDS
# times each (default 2: A B A B), then scripts/ab_compare.py prints per row the median
# tilecast time of each side, B / A, and each side's x cuBLAS (cuBLAS timed in every process).
#   TC_AB_OPTIONS=-DTC_EXPERIMENT_X scripts/ab_jit.sh --shape 128,4096,7168 --config block=64x64x64
# Fill the JIT cache for both sides first (tilecast-warm with and without the variable).
# JSON files land in $OUT (or ./out): ab_A1.json, ab_B1.json, ...
set -uo pipefail
cd "$(dirname "$0")/.."
: "${TC_AB_OPTIONS:?TC_AB_OPTIONS names the NVRTC options of side B}"
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
bench=build/tools/bench/tilecast-bench
source scripts/ab_rounds.sh
ab_side() {
  if [ "$1" = A ]; then
    env -u TILECAST_JIT_OPTIONS "$bench" "${args[@]}" --json "$2"
  else
    TILECAST_JIT_OPTIONS="$TC_AB_OPTIONS" "$bench" "${args[@]}" --json "$2"
  fi
}
args=("$@")
ab_rounds "${TC_AB_ROUNDS:-2}" "TILECAST_JIT_OPTIONS='$TC_AB_OPTIONS'"
