#!/usr/bin/env bash
# The planner's band height (src/plan/band_height.cpp) against the old fixed band of 8, on the GPU
# machine, on the rows whose band it moves: alternating processes (auto, then --config swizzle=8),
# each the flushed median and a sustained loop at the power cap (NVML joules per GEMM) beside
# cuBLASLt (`tilecast-bench --sustained`), then Nsight Compute's HBM bytes of one call of each side.
#
#   OUT=dir scripts/band_height_device.sh [ROUNDS]     (after a build of tilecast-bench)
#
# Writes $OUT/band/{e_<side>_<shape>_<round>.{txt,json},ncu_<side>_<shape>.csv} and prints each
# process's rows and the ncu counts. TC_BAND_SHAPES overrides the shapes (space-separated m,n,k);
# TC_BAND_SIDES the sides, space-separated label:config (default "new: old:swizzle=8"; e.g.
# "b16: c2x1:cluster=2x1 c2x1b16:cluster=2x1,swizzle=16" asks whether B's multicast pays on top of
# the band at the cap). TC_BAND_SUITES (default "mgrouped masked kgrouped"; "" for none) adds
# grouped suites, whose bands are the model's alone so far: per side and round the suite's rows
# measured the same way (--sustained; cuBLAS's fastest variant), then ncu's HBM bytes of each of
# our kernels in one pass of the suite (s_<side>_<suite>_<round>.{txt,json}, ncu_<side>_<suite>.csv).
# TC_BAND_SHAPES="" skips the dense part, TC_BAND_NCU=0 every ncu pass. Timing, roughly: a dense
# shape 8 s a side and round, a grouped suite 30-60 s, an ncu pass 10-20 s (dense) or a minute (a
# suite): split a run longer than a device call's 10 minutes by these.
set -u
cd "$(dirname "$0")/.." || exit 1
rounds=${1:-2}
out=${OUT:?set OUT}/band
mkdir -p "$out"
bench=build/tools/bench/tilecast-bench
shapes=${TC_BAND_SHAPES-"4096,7168,16384 4096,4096,7168 4096,2112,7168 4096,24576,1536 4096,4096,4096 16384,16384,16384 8192,8192,8192 4097,4097,4097"}
sides=${TC_BAND_SIDES:-"new: old:swizzle=8"}
# The --config words of side `label:config` (none for an empty config: the planner's own plan).
side_config() { local config=${1#*:}; [ -n "$config" ] && echo "--config $config"; }
for round in $(seq 1 "$rounds"); do
  for s in $shapes; do
    for entry in $sides; do
      side=${entry%%:*}
      # shellcheck disable=SC2046
      "$bench" --sustained --shape "$s" $(side_config "$entry") --energy-s 2 --warmup 5 --iters 20 \
        --json "$out/e_${side}_${s}_$round.json" >"$out/e_${side}_${s}_$round.txt" 2>&1
      echo "$side $s round $round: $(grep -h '^[0-9]*x[0-9]*x[0-9]* ' "$out/e_${side}_${s}_$round.txt" | tr -s ' ' | tr '\n' '#')"
    done
  done
done
suites=${TC_BAND_SUITES-"mgrouped masked kgrouped"}
for round in $(seq 1 "$rounds"); do
  for s in $suites; do
    for entry in $sides; do
      side=${entry%%:*}
      # shellcheck disable=SC2046
      "$bench" --sustained --suite "$s" $(side_config "$entry") --energy-s 2 --warmup 5 --iters 20 \
        --json "$out/s_${side}_${s}_$round.json" >"$out/s_${side}_${s}_$round.txt" 2>&1
      echo "$side $s round $round:"
      grep -h ' | ' "$out/s_${side}_${s}_$round.txt" | grep -v '^problem' | tr -s ' ' | cut -c1-200
    done
  done
done
[ "${TC_BAND_NCU:-1}" = 0 ] && suites="" && shapes=""  # no ncu pass
for s in $suites; do
  for entry in $sides; do
    side=${entry%%:*}
    # shellcheck disable=SC2046
    timeout 300 "${TC_NCU:-ncu}" --kernel-name regex:gemm_sm90_kernel --replay-mode kernel --cache-control all \
      --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --page raw \
      "$bench" --suite "$s" $(side_config "$entry") --warmup 0 --iters 1 --flush-mb 0 \
      >"$out/ncu_${side}_$s.csv" 2>"$out/ncu_${side}_$s.err"
  done
done
for s in $shapes; do
  for entry in $sides; do
    side=${entry%%:*}
    # shellcheck disable=SC2046
    timeout 120 "${TC_NCU:-ncu}" --nvtx --nvtx-include "tilecast_mcast_profile/" --replay-mode kernel --cache-control all \
      --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --page raw \
      "$bench" --ncu-pass --shape "$s" $(side_config "$entry") --flush-mb 0 >"$out/ncu_${side}_$s.csv" 2>"$out/ncu_${side}_$s.err"
  done
done
python3 - "$out" <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    rows = list(csv.reader(l for l in open(f) if l.startswith('"')))
    if not rows:
        print(os.path.basename(f), "no rows")
        continue
    for r in rows[2:]:
        d = dict(zip(rows[0], r))
        if d.get("launch__grid_size") == "1":
            continue  # the bench's marker kernels
        print(os.path.basename(f), (d.get("Kernel Name") or "")[:48], "duration ns", d.get("gpu__time_duration.sum"),
              "DRAM read", d.get("dram__bytes_read.sum"))
PY
