#!/usr/bin/env python3
"""scripts/bench_rounds.py against the bench's own writer.

    ROUNDS_SAMPLE_WRITER=build/tests/cpu/bench/write_sample_rounds \
        python3 tests/cpu/bench/test_bench_rounds.py scripts/bench_rounds.py

write_sample_rounds lays out two loops (5 functions and 14, each period relabeled from its own
seed) with interleave.hpp and writes them through the bench's JSON writer, each run's time
encoding its place and the functions just before and after it. The script must rebuild the same
order from the JSON alone, and its report must split the runs by those neighbours.
"""
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "bench_rounds.py")
spec = importlib.util.spec_from_file_location("bench_rounds", SCRIPT)
rounds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rounds)


def decode(us):
    place, rest = divmod(int(round(us)), 1000000)
    before, after = divmod(rest, 1000)
    return place, before - 1 if before else None, after - 1 if after else None


class BenchRounds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        writer = os.environ.get("ROUNDS_SAMPLE_WRITER")
        if not writer:
            raise unittest.SkipTest("ROUNDS_SAMPLE_WRITER not set (ctest sets it)")
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.dir.name, "rounds.json")
        subprocess.run([writer, cls.path], check=True)
        with open(cls.path) as f:
            cls.rows = json.load(f)["rows"]

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_every_run_sits_where_the_bench_put_it(self):
        for label, n in (("128x576x7168", 5), ("333x2112x7168", 14)):
            loop = rounds.Loop(self.rows, label)
            self.assertEqual(loop.n, n)
            self.assertNotEqual(loop.relabel, 0, "the writer relabels every period")
            self.assertEqual(sorted(loop.runs), list(range(n)), "cuBLAS and every config")
            for fn, runs in loop.runs.items():
                for rnd, us in enumerate(runs):
                    self.assertEqual(loop.surroundings(fn, rnd), decode(us), f"{label} f{fn} round {rnd}")

    def test_the_labels_change_from_period_to_period(self):
        loop = rounds.Loop(self.rows, "333x2112x7168")
        period = rounds.balanced_period(loop.n)
        firsts = {tuple(loop.order(p * period)) for p in range(loop.rounds // period)}
        self.assertGreater(len(firsts), 1)
        for rnd in range(loop.rounds):
            self.assertEqual(sorted(loop.order(rnd)), list(range(loop.n)), "every round a permutation")

    def test_auto_and_the_pick_are_found_and_reported_by_neighbour(self):
        loop = rounds.Loop(self.rows, "128x576x7168")
        self.assertEqual((loop.auto, loop.twin), (1, 2))
        out = io.StringIO()
        rounds.report(loop, loop.auto, loop.twin, out)
        text = out.getvalue()
        self.assertIn("5 functions, 30 rounds", text)
        # Runs after function 0 (cuBLAS) encode before = 0: their mean is place * 1e6 + 1e3 + after.
        before = [line for line in text.splitlines() if line.startswith("  f1 by function before:")]
        self.assertEqual(len(before), 1)
        cells = dict(cell.split(":", 1) for cell in before[0].split(": ", 1)[1].split())
        runs_after_cublas = [us for rnd, us in enumerate(loop.runs[1]) if loop.surroundings(1, rnd)[1] == 0]
        mean = sum(runs_after_cublas) / len(runs_after_cublas)
        self.assertEqual(cells["0"], f"{mean:.2f}({len(runs_after_cublas)})")

    def test_a_json_without_rounds_is_refused_by_name(self):
        rows = [{"label": "1x2x3", "tilecast_config": "auto", "tilecast": {"timing": {"ran": True}}}]
        with self.assertRaises(SystemExit) as e:
            rounds.Loop(rows, "1x2x3")
        self.assertIn("--json-rounds", str(e.exception))
        with self.assertRaises(SystemExit) as e:
            rounds.Loop(rows, "9x9x9")
        self.assertIn("no row of problem", str(e.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
