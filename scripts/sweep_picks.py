#!/usr/bin/env python3
"""A planner's picks judged against sweeps already timed, without a GPU.

    scripts/sweep_picks.py [--bench build/tools/bench/tilecast-bench] SWEEP.json [SWEEP.json ...]

For every suite problem in the sweep files (`tilecast-bench --suite S --sweep --json SWEEP.json`),
the pick of the planner that `--bench` was built with (its `--sweep --plan-only` listing, which
names each config as the sweep's rows do) is looked up among the configs the sweep timed: its time
against the best timed there (auto's row included). Run it on a tree with a planner change to see
which picks move where the sweep already measured them, and which new picks it never timed.
`--shape` problems (suite "custom") are left out: their suite cannot be listed again.
"""
import argparse
import json
import subprocess
import sys

# Pick time over best time, minus one, above which a pick misses (issue #14: within 5%).
MISS_GAP = 0.05


def timed_configs(paths):
    """{(suite, problem): {config: median us}} over every timed row of the files."""
    timed = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["rows"]:
                timing = row["tilecast"]["timing"]
                if not timing.get("ran") or row["suite"] == "custom":
                    continue
                configs = timed.setdefault((row["suite"], row["label"]), {})
                us = timing["median_us"]
                configs[row["tilecast_config"]] = min(us, configs.get(row["tilecast_config"], us))
    return timed


def parse_picks(listing):
    """{(suite, problem): config} from a `--sweep --plan-only` listing: each problem's "== suite
    problem" header, then its configs, the planner's own marked "(pick)"."""
    picks, problem = {}, None
    for line in listing.splitlines():
        if line.startswith("== "):
            suite, _, label = line[3:].strip().partition(" ")
            problem = (suite, label)
        elif line.rstrip().endswith("(pick)") and problem:
            picks[problem] = line.split()[-2]
    return picks


def planner_picks(bench, suites):
    picks = {}
    for suite in suites:
        out = subprocess.run([bench, "--suite", suite, "--sweep", "--sweep-limit", "1", "--plan-only"],
                             capture_output=True, text=True, check=True).stdout
        picks.update(parse_picks(out))
    return picks


def judge(timed, picks):
    """One line a problem (suite, problem, pick, pick us or None, best us, best config), in the
    sweep files' order."""
    rows = []
    for problem, configs in timed.items():
        pick = picks.get(problem)
        best_config = min(configs, key=configs.get)
        rows.append((problem[0], problem[1], pick, configs.get(pick), configs[best_config], best_config))
    return rows


def report(rows, out=sys.stdout):
    within = over = untimed = 0
    for suite, problem, pick, pick_us, best_us, best_config in rows:
        if pick is None:
            print(f"{suite:12s} {problem:28s} no pick listed for this problem", file=out)
            continue
        if pick_us is None:
            untimed += 1
            print(f"{suite:12s} {problem:28s} not timed   pick {pick}", file=out)
            continue
        gap = pick_us / best_us - 1
        miss = gap > MISS_GAP
        within += not miss
        over += miss
        flag = "MISS" if miss else "    "
        print(f"{suite:12s} {problem:28s} {flag} {gap * 100:+5.1f}%  pick {pick_us:9.1f} us  best {best_us:9.1f} us "
              f"({best_config})", file=out)
    print(f"pick within {MISS_GAP:.0%} of the best timed: {within}; over: {over}; not timed: {untimed}", file=out)
    return within, over, untimed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/tools/bench/tilecast-bench", help="tilecast-bench of the planner to judge")
    ap.add_argument("sweeps", nargs="+", help="tilecast-bench --sweep --json files")
    args = ap.parse_args()
    timed = timed_configs(args.sweeps)
    picks = planner_picks(args.bench, sorted({suite for suite, _ in timed}))
    report(judge(timed, picks))


if __name__ == "__main__":
    main()
