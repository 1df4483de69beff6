#!/usr/bin/env python3
"""Where each timed run of a `tilecast-bench --json-rounds` loop sat, and what it cost there.

    scripts/bench_rounds.py RUN.json PROBLEM [--a CONFIG] [--b CONFIG]

For one problem (its label, e.g. 128x576x7168) prints every function of its timed loop (cuBLAS,
auto, the sweep's configs) with its median, then, for two of them (default: `auto` and the
heuristic's pick forced by its config, which run the same kernel), the mean time of their runs
by the function that ran just before, just after, by place in the round and by half of the loop.
A config that one of these splits puts well apart from its twin is being measured by its
surroundings (bench/results/2026-12-04-h200-sweep-rounds.md).

The loop's order is rebuilt as tools/bench/interleave.hpp builds it: the Williams design, and
each period's labels a permutation drawn from the loop's seed (splitmix64, Fisher-Yates).
"""
import argparse
import json
import statistics
import sys

MASK = (1 << 64) - 1


def splitmix64(state):
    """One step: (the new state, the value)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def period_label(slot, period, n, relabel):
    if relabel == 0:
        return slot
    state = relabel ^ ((0x5851F42D4C957F2D * (period + 1)) & MASK)
    labels = list(range(n))
    for i in range(n - 1, 0, -1):
        state, z = splitmix64(state)
        j = z % (i + 1)
        labels[i], labels[j] = labels[j], labels[i]
    return labels[slot]


def balanced_period(n):
    return 2 * n if n % 2 else n


MAX_RELABELED = 128  # interleave.hpp's kMaxRelabeled


def interleaved_function(rnd, pos, n, balanced=True, relabel=0):
    """The function at place `pos` of round `rnd` (interleave.hpp's interleaved_function)."""
    if not balanced or n < 2:
        return pos
    period = balanced_period(n)
    r = rnd % period
    p = n - 1 - pos if r >= n else pos
    first_row = 0 if p == 0 else ((p + 1) // 2 if p % 2 else n - p // 2)
    slot = (first_row + r % n) % n
    return period_label(slot, rnd // period, n, relabel) if n <= MAX_RELABELED else slot


class Loop:
    """One problem's timed loop: each function's runs, in round order."""

    def __init__(self, rows, label):
        rows = [r for r in rows if r.get("label") == label]
        if not rows:
            raise SystemExit(f"no row of problem {label!r}")
        self.names, self.runs = {}, {}
        self.auto = self.twin = None
        loop = None
        for r in rows:
            for side, name in (("tilecast", r.get("tilecast_config", "?")),
                               ("cublas", "cuBLAS " + r.get("cublas", {}).get("variant", ""))):
                t = r.get(side, {}).get("timing", {})
                if not t.get("ran") or "loop" not in t:
                    continue
                loop = t["loop"]
                self.names.setdefault(loop["index"], name)
                self.runs[loop["index"]] = loop["rounds_us"]
            if r.get("tilecast_config") == "auto":
                self.auto = r["tilecast"]["timing"].get("loop", {}).get("index")
            if r.get("sweep", {}).get("heuristic_pick"):
                self.twin = r["tilecast"]["timing"].get("loop", {}).get("index")
        if loop is None:
            raise SystemExit(f"problem {label!r} has no rounds: run the bench with --json-rounds")
        self.n = loop["functions"]
        self.balanced = loop["balanced"]
        self.relabel = int(loop.get("relabel", "0"))
        self.rounds = len(loop["rounds_us"])

    def order(self, rnd):
        return [interleaved_function(rnd, p, self.n, self.balanced, self.relabel) for p in range(self.n)]

    def surroundings(self, fn, rnd):
        """(place, function before, function after); across a round's edge the neighbour is the
        previous round's last or the next round's first (None past the loop's ends)."""
        order = self.order(rnd)
        pos = order.index(fn)
        before = order[pos - 1] if pos else (self.order(rnd - 1)[-1] if rnd else None)
        after = order[pos + 1] if pos + 1 < self.n else (self.order(rnd + 1)[0] if rnd + 1 < self.rounds else None)
        return pos, before, after


def find_function(loop, config):
    for index, name in loop.names.items():
        if name == config:
            return index
    raise SystemExit(f"no function with config {config!r}: {sorted(loop.names.values())}")


def report(loop, a, b, out=sys.stdout):
    print(f"{loop.n} functions, {loop.rounds} rounds, balanced {loop.balanced}, labels' seed {loop.relabel}", file=out)
    for index in sorted(loop.runs):
        print(f"  f{index:<3} median {statistics.median(loop.runs[index]):9.2f} us  {loop.names.get(index, '?')}",
              file=out)
    for what, key in (("before", 1), ("after", 2), ("place", 0)):
        for fn in (a, b):
            groups = {}
            for rnd, us in enumerate(loop.runs[fn]):
                groups.setdefault(loop.surroundings(fn, rnd)[key], []).append(us)
            cells = " ".join(f"{k}:{statistics.mean(v):.2f}({len(v)})"
                             for k, v in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))
            print(f"  f{fn} by function {what}: {cells}" if key else f"  f{fn} by place: {cells}", file=out)
    for fn in (a, b):
        runs = loop.runs[fn]
        half = len(runs) // 2
        if half:
            print(f"  f{fn} halves: {statistics.median(runs[:half]):.2f} then {statistics.median(runs[half:]):.2f} us",
                  file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("problem")
    ap.add_argument("--a", help="one config (default: auto)")
    ap.add_argument("--b", help="the other (default: the heuristic's pick, forced)")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        loop = Loop(json.load(f)["rows"], args.problem)
    a = find_function(loop, args.a) if args.a else loop.auto
    b = find_function(loop, args.b) if args.b else loop.twin
    if a is None or b is None:
        raise SystemExit("name both configs (--a, --b): this loop has no auto row or no forced pick")
    report(loop, a, b)


if __name__ == "__main__":
    main()
