#!/usr/bin/env python3
"""scripts/sweep_picks.py: the listing's picks, looked up among a sweep's timed configs.

    SWEEP_PICKS_BENCH=build/tools/bench/tilecast-bench \\
        python3 tests/cpu/bench/test_sweep_picks.py scripts/sweep_picks.py

The parser reads a listing as the bench prints it; the judgement runs on made-up sweep files whose
rows carry the bench's real pick for 8192^3 (from the bench binary, planned on the H200 model), so
a change in how either names a config breaks the lookup here, not silently in a report.
"""
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "sweep_picks.py")
spec = importlib.util.spec_from_file_location("sweep_picks", SCRIPT)
picks_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(picks_mod)

LISTING = """\
problems: 2; tilecast config: auto (sweep)
== m128 128x2112x7168
   sweep: 2 of 1894 configs, cheapest predicted first (the heuristic's pick first; "auto" is timed beside them)
      1      16.3 us  block_m=128,block_n=96,cluster=1x1,k_splits=4,swap_ab=0,cluster_reduce=1,split_columns=0,pingpong=0  (pick)
                       128x96x64 stages 5 cluster 1x1 mc AB clusters 22 split-K 4 in cluster est 16.3 us
      2      15.7 us  block_m=64,block_n=144,cluster=1x1,k_splits=4,swap_ab=0,cluster_reduce=1,split_columns=0,pingpong=0
== masked g32 m~192 n6144 k7168
      1     984.3 us  block_m=64,block_n=192,cluster=1x1,k_splits=1,swap_ab=0,split_columns=0,pingpong=0  (pick)
"""


def row(suite, label, config, us, ran=True):
    return {"suite": suite, "label": label, "tilecast_config": config,
            "tilecast": {"timing": {"ran": ran, "median_us": us}}}


class SweepPicks(unittest.TestCase):
    def test_listing_gives_each_problem_its_pick(self):
        got = picks_mod.parse_picks(LISTING)
        self.assertEqual(got, {
            ("m128", "128x2112x7168"):
                "block_m=128,block_n=96,cluster=1x1,k_splits=4,swap_ab=0,cluster_reduce=1,split_columns=0,pingpong=0",
            ("masked", "g32 m~192 n6144 k7168"):
                "block_m=64,block_n=192,cluster=1x1,k_splits=1,swap_ab=0,split_columns=0,pingpong=0",
        })

    def test_gap_miss_and_untimed(self):
        timed = {("s", "a"): {"pick": 106.0, "other": 100.0, "auto": 107.0},
                 ("s", "b"): {"pick": 50.0, "other": 51.0},
                 ("s", "c"): {"other": 10.0}}
        rows = picks_mod.judge(timed, {("s", "a"): "pick", ("s", "b"): "pick", ("s", "c"): "pick"})
        self.assertAlmostEqual(rows[0][3] / rows[0][4] - 1, 0.06)
        self.assertEqual(rows[1][5], "pick")  # the pick is the best timed
        self.assertIsNone(rows[2][3])
        out = io.StringIO()
        self.assertEqual(picks_mod.report(rows, out), (1, 1, 1))
        self.assertIn("MISS", out.getvalue().splitlines()[0])
        self.assertIn("not timed", out.getvalue())

    def test_timed_rows_skip_custom_and_unrun(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump({"rows": [row("dense", "8192x8192x8192", "x", 5.0), row("dense", "8192x8192x8192", "x", 4.0),
                                    row("dense", "8192x8192x8192", "y", 1.0, ran=False),
                                    row("custom", "64x64x64", "x", 1.0)]}, f)
            self.assertEqual(picks_mod.timed_configs([path]), {("dense", "8192x8192x8192"): {"x": 4.0}})

    def test_the_bench_pick_is_found_in_a_sweep(self):
        bench = os.environ.get("SWEEP_PICKS_BENCH")
        if not bench:
            self.skipTest("SWEEP_PICKS_BENCH not set (ctest sets it)")
        picks = picks_mod.planner_picks(bench, ["dense"])
        pick = picks[("dense", "8192x8192x8192")]
        self.assertTrue(pick.startswith("block_m="), pick)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "dense.json")
            with open(path, "w") as f:
                json.dump({"rows": [row("dense", "8192x8192x8192", "auto", 1001.0),
                                    row("dense", "8192x8192x8192", pick, 1000.0),
                                    row("dense", "8192x8192x8192", "block_m=64,block_n=64", 900.0)]}, f)
            timed = picks_mod.timed_configs([path])
        rows = picks_mod.judge(timed, picks)
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0][3], 1000.0)
        self.assertAlmostEqual(rows[0][3] / rows[0][4] - 1, 1000.0 / 900.0 - 1)


if __name__ == "__main__":
    unittest.main()
