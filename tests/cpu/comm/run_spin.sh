#!/usr/bin/env bash
# Model-checks models/barrier.pml with spin for each configuration given, exhaustively (safety:
# assertions and invalid end states, i.e. deadlocks).
#   run_spin.sh MODEL pass|fail "DEFINES" ["DEFINES" ...]
# `pass`: every configuration must verify with 0 errors and a complete search.
# `fail`: every configuration (a planted bug) must be rejected; proves the checks can fail.
# Exits 77 (skipped) if spin or a C compiler is missing (scripts/setup.sh installs spin).
set -uo pipefail
model=$1 expect=$2
shift 2
command -v spin >/dev/null || { echo "SKIPPED: spin not installed (scripts/setup.sh installs it)"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIPPED: no C compiler for spin's verifier"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/model.pml"
cd "$work" || exit 1
status=0
for defines in "$@"; do
  # shellcheck disable=SC2086
  if ! spin -a $defines model.pml >spin.log 2>&1; then
    echo "FAIL [$defines]: spin could not generate the verifier"; cat spin.log; status=1; continue
  fi
  rm -f pan
  "$cc" -O1 -DSAFETY -DCOLLAPSE -DVECTORSZ=4096 -o pan pan.c 2>cc.log || { echo "FAIL [$defines]: compiling pan"; cat cc.log; status=1; continue; }
  ./pan -m200000 -n >pan.log 2>&1
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' pan.log | head -1)
  truncated=$(grep -c "max search depth too small" pan.log)
  what=$(grep -E "assertion violated|invalid end state|acceptance cycle" pan.log | head -1)
  if [ "$expect" = pass ]; then
    if [ "${errors:-x}" = 0 ] && [ "$truncated" = 0 ]; then
      echo "ok   [$defines]: 0 errors, $states states"
    else
      echo "FAIL [$defines]: errors=${errors:-?} truncated=$truncated ${what}"; sed -n '1,30p' pan.log; status=1
    fi
  else
    if [ -n "$errors" ] && [ "$errors" != 0 ]; then
      echo "ok   [$defines]: rejected as expected (${what:-errors: $errors})"
    else
      echo "FAIL [$defines]: the planted bug went undetected"; sed -n '1,30p' pan.log; status=1
    fi
  fi
done
exit $status
