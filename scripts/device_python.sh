#!/usr/bin/env bash
# The Python package on the GPU machine (no network): builds and installs it from this tree with
# the environment's scikit-build-core, nanobind, CMake and Ninja (pip install --no-build-isolation
# --no-deps, into build-python/site), times the JIT warm-up, runs the pytest suite (python/tests)
# and the benchmark against torch (python/bench/bench_torch.py). Writes two files under $OUT:
# python.log (versions, build, JIT timings, pytest) and bench_torch.md (the benchmark's table).
#
#   run: scripts/device_python.sh        carry: nothing needed (optionally ".jit-cache")
# Knobs: TC_PYTEST_ARGS (e.g. "-k graph"), TC_BENCH_ARGS (e.g. "--suite m4096 --iters 20"),
#        TC_SKIP_BENCH=1, TC_SKIP_JIT_TIMING=1.
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
  problems=$("$PY" - <<'PYEOF'
import tilecast
nk = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048),
      (4096, 4096), (4097, 4097), (2003, 3001)]
chosen, names = [], set()  # problems until 60 distinct kernels (60 for the H200 model)
for m in (4096, 128, 1024, 256, 8192, 64, 2048, 512, 4097, 1009, 32):
    for out, with_c in (("bfloat16", False), ("float32", True), ("float32", False), ("bfloat16", True)):
        for n, k in nk:
            p = dict(m=m, n=n, k=k, out_dtype=out, with_c=with_c)
            new = {x["name"] for x in tilecast.warm([p], dry_run=True)} - names
            if new and len(names) < 60:
                chosen.append(f"{m},{n},{k}:{out}:{int(with_c)}")
                names |= new
print(" ".join(chosen))
PYEOF
)
  # In-process threads with and without PCH, then one worker process per core (each with its own
  # NVRTC and PCH): whichever scales on 16 cores.
  for run in "1 threads" "0 threads" "1 processes"; do
    set -- $run
    TILECAST_JIT_PCH=$1 CUDA_CACHE_DISABLE=1 "$PY" - "$1" "$2" $problems >>"$log" 2>&1 <<'PYEOF'
import os, sys, tempfile, time
import tilecast
if __name__ == "__main__":
    pch, mode, items = sys.argv[1], sys.argv[2], sys.argv[3:]
    problems = []
    for it in items:
        shape, out, c = it.split(":")
        m, n, k = map(int, shape.split(","))
        problems.append(dict(m=m, n=n, k=k, out_dtype=out, with_c=c == "1"))
    t0 = time.time()
    parallel = dict(processes=os.cpu_count()) if mode == "processes" else {}
    kernels = tilecast.warm(problems, cache_dir=tempfile.mkdtemp(), progress=False, **parallel)
    wall = time.time() - t0
    each = sorted(k["compile_seconds"] for k in kernels)
    print(f"warm-up PCH={pch} {mode}: {len(kernels)} kernels, {os.cpu_count()} {mode}: {wall:.1f} s wall; "
          f"per kernel min {each[0]:.2f} median {each[len(each) // 2]:.2f} max {each[-1]:.2f} s")
PYEOF
    tail -1 "$log"
  done
fi

note "== pytest"
"$PY" -m pytest -q -rs python/tests ${TC_PYTEST_ARGS:-} >>"$log" 2>&1
rc=$?
[ $rc -eq 0 ] || status=1
note "pytest: exit $rc, $(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1)"

if [ "${TC_SKIP_BENCH:-0}" != 1 ]; then
  # shellcheck disable=SC2086
  "$PY" python/bench/bench_torch.py ${TC_BENCH_ARGS:-} --out "$OUT/bench_torch.md" >>"$log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  note "bench: exit $rc (bench_torch.md)"
  tail -4 "$OUT/bench_torch.md" 2>/dev/null
fi
note "status: $status"
exit $status
