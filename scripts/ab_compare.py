#!/usr/bin/env python3
"""Joins tilecast-bench --json files of an A/B run (scripts/ab_jit.sh) by row and prints, per
row, the median over processes of each side's tilecast time, B / A, and each side's x cuBLAS
(every process timed cuBLAS in its own loop). File names say the side: ab_A1.json, ab_B1.json."""
import argparse
import json
import os
import statistics
import sys


def rows_of(path, by_problem):
    with open(path) as f:
        doc = json.load(f)
    for r in doc["rows"]:
        t = r["tilecast"]["timing"]
        c = r["cublas"]["timing"]
        if not t.get("ran") or not c.get("ran"):
            continue
        config = "" if by_problem else r["tilecast_config"]
        key = (r["suite"], r["label"], config, r.get("baseline_role", ""))
        passed = r["tilecast"]["verify"].get("pass", True)
        yield key, t["median_us"], c["median_us"], passed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--b-label", default="", help="what side B is, for the table's title")
    ap.add_argument("--by-problem", action="store_true",
                    help="join rows by problem alone (the two sides ran different --config values)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    sides = {"A": {}, "B": {}}
    failed = 0
    for path in args.files:
        side = os.path.basename(path)[3]
        if side not in sides or not os.path.exists(path):
            continue
        for key, tc, cb, passed in rows_of(path, args.by_problem):
            if key[3]:
                continue  # the odd rows' extra cuBLAS baselines repeat the same tilecast time
            failed += not passed
            sides[side].setdefault(key, []).append((tc, cb))
    print(f"B = {args.b_label}; times: median over processes of each process's median (us)")
    print(f"{'suite':9} {'problem':22} {'config':44} {'A us':>8} {'B us':>8} {'B/A':>6} "
          f"{'A x cuBLAS':>10} {'B x cuBLAS':>10}")
    for key in sides["A"]:
        if key not in sides["B"]:
            continue
        a, b = sides["A"][key], sides["B"][key]
        a_us = statistics.median(t for t, _ in a)
        b_us = statistics.median(t for t, _ in b)
        a_x = statistics.median(c / t for t, c in a)
        b_x = statistics.median(c / t for t, c in b)
        print(f"{key[0]:9} {key[1]:22} {key[2][:44]:44} {a_us:8.1f} {b_us:8.1f} {b_us / a_us:6.3f} "
              f"{a_x:10.3f} {b_x:10.3f}")
    if failed:
        print(f"check FAILED on {failed} row(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
