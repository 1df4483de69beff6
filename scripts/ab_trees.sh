#!/usr/bin/env bash
# A/B of two trees on the GPU machine: A an earlier revision, exported into the ignored folder
# .ab/old, B this tree. Each is built in its own build folder (the bench and the warm tool only)
# with its own JIT cache; tilecast-bench runs the same arguments in alternating processes,
# A B A B ..., TC_AB_ROUNDS times each (default 3), and scripts/ab_compare.py prints per row each
# side's median time, B / A and each side's x cuBLAS (cuBLAS timed in every process).
#   here:     scripts/ab_trees.sh --export <rev>        (writes .ab/old and .ab/REV)
#   device:   scripts/ab_trees.sh --shape 1000,1000,1000 --shape 512,512,512
#             (run with carry [".ab", ".deps"]; B's build/ is reused when it is there)
# Knobs: TC_AB_ROUNDS; TC_AB_WARM_ARGS, the tilecast-warm arguments that fill both caches first
# (default: the bench arguments, which suits --suite, --shape, --config, --out and --with-c);
# TC_AB_BENCH, the bench of both sides (tests only: a stand-in that writes JSON). JSON files and
# logs land in $OUT (or ./out): ab_A1.json, ab_B1.json, ...
set -uo pipefail
cd "$(dirname "$0")/.."
old=.ab/old

if [ "${1:-}" = "--export" ]; then
  rev=${2:?--export takes a revision}
  rm -rf "$old" && mkdir -p "$old" && git archive "$rev" | tar -x -C "$old" || exit 1
  git rev-parse --short=12 "$rev" >.ab/REV
  echo "A = $(cat .ab/REV) in $old"
  exit 0
fi
[ -d "$old" ] || { echo "ab_trees: no $old: run scripts/ab_trees.sh --export <rev> first" >&2; exit 2; }
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
a_rev=$(cat .ab/REV 2>/dev/null || echo "the exported tree")

bench_of() { echo "${TC_AB_BENCH:-$1/build/tools/bench/tilecast-bench}"; }
if [ -z "${TC_AB_BENCH:-}" ]; then
  source scripts/env.sh
  for side in A B; do
    tree=.; [ "$side" = A ] && tree=$old
    { [ -f "$tree/build/CMakeCache.txt" ] ||
        cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILECAST_BUILD_TESTS=OFF;
      cmake --build "$tree/build" --target tilecast-bench tilecast-warm; } >"$OUT/ab_build_$side.log" 2>&1 ||
      { echo "ab_trees: the build of side $side ($tree) failed: $OUT/ab_build_$side.log" >&2; exit 1; }
  done
  for tree in "$old" .; do
    # shellcheck disable=SC2086
    TILECAST_CACHE_DIR="$PWD/$tree/.jit-cache" "$tree/build/tools/warm/tilecast-warm" --threads "$(nproc)" \
      ${TC_AB_WARM_ARGS:-"$@"} 2>/dev/null | tail -1
  done
fi

source scripts/ab_rounds.sh
ab_side() {
  local tree=.
  [ "$1" = A ] && tree=$old
  TILECAST_CACHE_DIR="$PWD/$tree/.jit-cache" "$(bench_of "$tree")" "${args[@]}" --json "$2"
}
args=("$@")
ab_rounds "${TC_AB_ROUNDS:-3}" "this tree against A = $a_rev"
