#!/usr/bin/env bash
# The Python package on the GPU machine (no network): builds and installs it from this tree with
# the environment's scikit-build-core, nanobind, CMake and Ninja (pip install --no-build-isolation
# --no-deps, into build-python/site), times the JIT warm-up, runs the pytest suite (python/tests:
# the CPU argument checks, the torch-trace tests, and the GPU tests of gemm_nt, its epilogue and the
# grouped GEMMs) and the benchmark against torch (python/bench/bench_torch.py: torch.matmul for the
# dense suites, torch._grouped_mm and per-expert loops for the grouped ones). Writes two files under
# $OUT: python.log (versions, build, JIT timings, pytest with its slowest tests, section times) and
# bench_torch.md (the benchmark's tables).
#
#   run: scripts/device_python.sh        carry: nothing needed (optionally ".jit-cache")
# Knobs: TC_PYTEST_ARGS (e.g. "-k graph"), TC_BENCH_ARGS (e.g. "--suite m4096,mgrouped --iters 20"),
#        TC_SKIP_BENCH=1, TC_SKIP_JIT_TIMING=1, TC_JIT_KERNELS (default 60), PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
source scripts/env.sh
log="$OUT/python.log"
: >"$log"
note() { echo "$*" | tee -a "$log"; }
status=0
PY=${PYTHON:-python3}
site="$PWD/build-python/site"

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version | tail -2
  echo "cores: $(nproc)"
  "$PY" -c "import sys, torch, nanobind, scikit_build_core; print('python', sys.version.split()[0], '| torch', torch.__version__, '| nanobind', nanobind.__version__, '| scikit-build-core', scikit_build_core.__version__)" 2>&1
  "$PY" -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
  cmake --version | head -1; ninja --version 2>&1 | sed 's/^/ninja /'
} >>"$log" 2>&1
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

t0=$(date +%s)
rm -rf "$site"
if "$PY" -m pip install --no-build-isolation --no-deps --no-index --target "$site" . >>"$log" 2>&1; then
  note "pip install: ok in $(( $(date +%s) - t0 )) s (into $site)"
else
  note "pip install: FAILED (python.log)"; tail -40 "$log"; exit 1
fi
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import tilecast; print('tilecast', tilecast.__version__, 'from', tilecast.__file__)" 2>&1 | tee -a "$log"

if [ "${TC_SKIP_JIT_TIMING:-0}" != 1 ]; then
  # NVRTC time, in fresh cache folders, with the driver's compute cache off (it would answer
  # repeated compiles without ptxas): one kernel alone, then 60 distinct kernels on every core.
  note "== JIT timing"
  CUDA_CACHE_DISABLE=1 "$PY" -m tilecast.warm --shape 4096,576,7168 --threads 1 --no-progress \
    --cache-dir "$(mktemp -d)" 2>&1 | tail -2 | tee -a "$log"
  for run in "1" "0" "1 --processes"; do
    set -- $run
    TILECAST_JIT_PCH=$1 CUDA_CACHE_DISABLE=1 "$PY" python/bench/bench_jit.py --kernels "${TC_JIT_KERNELS:-60}" \
      ${2:-} 2>&1 | tail -3 | tee -a "$log"
  done
fi

note "== pytest"
t0=$(date +%s)
"$PY" -m pytest -q -rs --durations=15 python/tests ${TC_PYTEST_ARGS:-} >>"$log" 2>&1
rc=$?
[ $rc -eq 0 ] || status=1
note "pytest: exit $rc, $(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1) ($(( $(date +%s) - t0 )) s)"

if [ "${TC_SKIP_BENCH:-0}" != 1 ]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  "$PY" python/bench/bench_torch.py ${TC_BENCH_ARGS:-} --out "$OUT/bench_torch.md" >>"$log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  note "bench: exit $rc (bench_torch.md, $(( $(date +%s) - t0 )) s)"
  grep -E "^(geomean|grouped:|note:|host time)" "$OUT/bench_torch.md" 2>/dev/null
fi
note "status: $status"
exit $status
