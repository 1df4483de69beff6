#!/usr/bin/env python3
"""scripts/l2_replay.py on made-up tile starts.

    python3 tests/cpu/bench/test_l2_replay.py scripts/l2_replay.py
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "l2_replay.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(SCRIPT)))  # it imports timeline_summary beside it
spec = importlib.util.spec_from_file_location("l2_replay", SCRIPT)
l2_replay = importlib.util.module_from_spec(spec)
spec.loader.exec_module(l2_replay)

K, BLOCK = 512, 128  # 8 k-steps of 64; 128x128 tiles
SLICE = BLOCK * 64 * 2  # one block's bytes over one k-step


def launch(offsets):
    """Two waves on 4 CTAs: row 0's four column tiles, then row 1's; 1000 ns tiles, CTA c starting
    offsets[c] ns late."""
    return [(c, 0, w, c, 5000 + 1000 * w + offsets[c]) for w in range(2) for c in range(4)]


def replay(offsets, capacity):
    times, _, _ = l2_replay.tile_times(launch(offsets))
    return l2_replay.replay(times, K, BLOCK, BLOCK, 64, capacity, 8)


def run_script(log, *args):
    """The script on a log holding `log`, as a finished process."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(log)
    try:
        return subprocess.run([sys.executable, SCRIPT, f.name, *args], capture_output=True, text=True)
    finally:
        os.unlink(f.name)


class Replay(unittest.TestCase):
    def test_an_l2_that_holds_all_reads_each_operand_once(self):
        self.assertEqual(replay([0, 1, 2, 3], 1 << 40), (2 + 4) * 8 * SLICE)

    def test_an_l2_that_holds_nothing_reads_every_tile_its_own(self):
        self.assertEqual(replay([0, 1, 2, 3], 0), 8 * 2 * 8 * SLICE)

    def test_tiles_that_start_together_share_their_row(self):
        # Room for five blocks: a k-step's row and four columns. Each wave reads its row once a
        # k-step, and the columns again (the next wave comes after L2 let them go).
        self.assertEqual(replay([0, 1, 2, 3], 5 * SLICE), 2 * (1 + 4) * 8 * SLICE)

    def test_tiles_that_start_apart_read_their_row_again(self):
        spread = replay([0, 250, 500, 750], 5 * SLICE)
        self.assertGreater(spread, 2 * (1 + 4) * 8 * SLICE)
        self.assertLessEqual(spread, 8 * 2 * 8 * SLICE)

    def test_lockstep_rebuilds_waves_from_the_start_order(self):
        times, median, ctas = l2_replay.tile_times(launch([0, 250, 500, 750]))
        self.assertEqual((median, ctas), (1000, 4))
        waves = l2_replay.lockstep(times, median, ctas)
        self.assertEqual(sorted({start for start, _ in waves.values()}), [0, 1000])
        self.assertEqual(l2_replay.replay(waves, K, BLOCK, BLOCK, 64, 5 * SLICE, 8), replay([0, 1, 2, 3], 5 * SLICE))

    def test_a_ctas_last_tile_runs_the_median_time(self):
        times, _, _ = l2_replay.tile_times(launch([0, 250, 500, 750]))
        self.assertEqual(times[(0, 0, 1)], (5250, 1000))
        self.assertEqual(times[(0, 1, 1)], (6250, 1000))

    def test_one_tile_a_cta_is_an_error(self):
        with self.assertRaises(ValueError):
            l2_replay.tile_times(launch([0, 1, 2, 3])[:4])

    def test_the_command_line(self):
        log = "".join(f"TLU cta {c} group {g} m {m} n {n} ns {ns}\n" for c, g, m, n, ns in launch([0, 1, 2, 3]))
        run = run_script(log, "--k", str(K), "--block", "128x128")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("8 tiles on 4 CTAs, tile 1.0 us", run.stdout)
        self.assertIn("(x1.00)", run.stdout)

    def test_a_log_without_tile_starts_says_so(self):
        run = run_script("problems: 1\n", "--k", "64", "--block", "64x64")
        self.assertEqual(run.returncode, 1)
        self.assertIn("no TLU lines", run.stdout)


if __name__ == "__main__":
    unittest.main()
