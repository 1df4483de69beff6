#!/usr/bin/env python3
"""scripts/timeline_summary.py on made-up timeline lines: CTA stamps and tile starts.

    python3 tests/cpu/bench/test_timeline_summary.py scripts/timeline_summary.py
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "timeline_summary.py")
spec = importlib.util.spec_from_file_location("timeline_summary", SCRIPT)
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

LOG = """problems: 1; tilecast config: auto
TL cta 0 ready 700 first_load 2900 first_stage 4500 mainloop 15000 stored 15100 drained 15200 tail 15300 exit 15400
TLP cta 0 ready 700 in 1100 built 1500 seek 2000 slot 2300 work 2500 stage 2800 load 2900
TL cta 16 ready 800 first_load 3000 first_stage 4700 mainloop 15500 stored 15600 drained 15700 tail 15800 exit 15900
TLP cta 16 ready 800 in 1200 built 1600 seek 2100 slot 2400 work 2600 stage 2900 load 3000
TL cta 32 ready 1300 first_load 2800 first_stage 4300 mainloop 14500 stored 14600 drained 14700 tail 14800 exit 14900
TLP cta 32 ready 1300 in 1000 built 1400 seek 1900 slot 2200 work 2400 stage 2700 load 2800
custom    1000x1000x1000  auto  12.6
"""


def tile_lines(offsets):
    """One launch of 8 tiles, 2 x 4 in bands of two rows, on 4 CTAs of 100 ns tiles: CTA c takes
    tile c of each wave and starts it offsets[c] ns late."""
    walk = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    return [f"TLU cta {u % 4} group 0 m {m} n {n} ns {1000 + 100 * (u // 4) + offsets[u % 4]}"
            for u, (m, n) in enumerate(walk)]


LOCKSTEP = tile_lines([0, 1, 2, 3])
SPREAD = tile_lines([0, 30, 60, 90])


class Tiles(unittest.TestCase):
    def test_a_tile_seen_again_opens_the_next_launch(self):
        launches = summary.tile_launches(["problems: 1"] + LOCKSTEP + ["custom 64x64x64"] + SPREAD)
        self.assertEqual([len(l) for l in launches], [8, 8])
        self.assertEqual(launches[1][1], (1, 0, 1, 0, 1030))

    def test_lockstep_waves_start_together(self):
        s = summary.tile_spread(summary.tile_launches(LOCKSTEP)[0])
        self.assertEqual((s["tiles"], s["ctas"], s["tile_ns"]), (8, 4, 100))
        self.assertEqual([round(w, 2) for w in s["widths"]], [0.03, 0.03])
        # Columns are read by the two CTAs of a band together; rows by the band's next column
        # (0.02 later, in the same wave) or by the next wave.
        self.assertEqual(s["binned"]["columns"], [1.0, 0.0, 0.0, 0.0])
        self.assertEqual([round(g, 2) for g in s["gaps"]["rows"]], [0.02, 0.02, 0.98, 0.98, 0.02, 0.02])

    def test_spread_shows_in_the_widths_and_the_gaps(self):
        s = summary.tile_spread(summary.tile_launches(SPREAD)[0])
        self.assertEqual([round(w, 2) for w in s["widths"]], [0.9, 0.9])
        self.assertEqual(s["binned"]["columns"], [0.0, 0.0, 1.0, 0.0])  # 0.3 tile times each
        self.assertEqual([round(g, 2) for g in s["gaps"]["rows"]], [0.6, 0.6, 0.4, 0.4, 0.6, 0.6])

    def test_one_tile_a_cta_is_an_error(self):
        with self.assertRaises(ValueError):
            summary.tile_spread(summary.tile_launches(LOCKSTEP[:4])[0])

    def test_the_command_line_reads_the_last_launch(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("\n".join(LOCKSTEP + SPREAD) + "\n")
        try:
            out = subprocess.run([sys.executable, SCRIPT, "--tiles", f.name], capture_output=True, text=True,
                                 check=True).stdout
            self.assertIn("TLU (the last of 2 launches): 8 tiles on 4 CTAs, tile 0.1 us; "
                          "wave width in tile times: first 0.90", out)
            self.assertIn("same columns: median 0.30", out)
        finally:
            os.unlink(f.name)


class Summary(unittest.TestCase):
    def test_median_and_range_of_every_stamp_in_order(self):
        out = summary.summarise(LOG.splitlines(), 200)
        self.assertEqual(sorted(out), ["TL", "TLP"])
        n, stamps = out["TLP"]
        self.assertEqual(n, 3)
        self.assertEqual([s[0] for s in stamps], ["ready", "in", "built", "seek", "slot", "work", "stage", "load"])
        self.assertEqual(stamps[0][1:], (800, 700, 1300))  # the median, not the mean (933)
        self.assertEqual(stamps[-1][1:], (2900, 2800, 3000))

    def test_only_the_last_lines_count(self):
        n, stamps = summary.summarise(LOG.splitlines(), 1)["TL"]
        self.assertEqual(n, 1)
        self.assertEqual(dict((s[0], s[1]) for s in stamps)["first_stage"], 4300)

    def test_a_broken_line_is_an_error(self):
        with self.assertRaises(ValueError):
            summary.summarise(["TL cta 0 ready 700 first_load"], 200)

    def test_the_command_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(LOG)
        try:
            out = subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True, check=True).stdout
            self.assertIn("TLP (3 CTAs): ready 800 [700-1300] in 1100 [1000-1200]", out)
        finally:
            os.unlink(f.name)

    def test_a_log_without_timelines_says_so(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("problems: 1\n")
        try:
            out = subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True, check=True).stdout
            self.assertIn("no timeline lines", out)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
