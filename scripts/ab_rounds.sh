# Sourced by scripts/ab_jit.sh and scripts/ab_trees.sh: the alternating rounds of an A/B and the
# comparison. The caller defines `ab_side SIDE JSON`, which runs the bench of side A or B with
# --json JSON; `ab_rounds ROUNDS LABEL` then runs A B A B ..., ROUNDS times each, with each
# process's stderr in $OUT/ab_<side><round>.err, and prints scripts/ab_compare.py's table (B is
# LABEL there).
ab_rounds() {
  local rounds=$1 label=$2 round side json
  local files=()
  for round in $(seq 1 "$rounds"); do
    for side in A B; do
      json="$OUT/ab_${side}${round}.json"
      ab_side "$side" "$json" >/dev/null 2>"$OUT/ab_${side}${round}.err"
      echo "side $side round $round: exit $?"
      files+=("$json")
    done
  done
  python3 scripts/ab_compare.py --b-label="$label" "${files[@]}"
}
