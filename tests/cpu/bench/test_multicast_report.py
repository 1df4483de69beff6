#!/usr/bin/env python3
"""scripts/multicast_report.py on a fake bench JSON, --ncu-pass JSON and ncu CSV.

    python3 tests/cpu/bench/test_multicast_report.py scripts/multicast_report.py

The fake run has two problems: the first with five calls profiled in another order than the bench
lists them (the join must go by profile_index), one call of two kernels (a companion launch), a
number with digit-grouping commas and one row whose model is 25% off its counter; the second with
two calls. Between the problems, and before the first, lie kernels of no call (what ncu profiles
without its NVTX filter: the check runs, cuBLAS's reference), which the closing markers fence off.
The plot test skips without matplotlib.
"""
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "multicast_report.py")
spec = importlib.util.spec_from_file_location("multicast_report", SCRIPT)
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

PROBLEM = "4096x2112x7168"
SECOND = "8192x8192x8192"
MARKER = "copy_convert_kernel(const void *, bool, Walk, void *, bool, Walk, long)"
GB = 1e9
READ = "lts__t_sectors_srcunit_tex_op_read.sum"
DELIVERED = "l1tex__m_xbar2l1tex_read_bytes.sum"
BUSY = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
TIME = "gpu__time_duration.sum"


def bench_row(label, model_gb=None, median_us=100.0, mj=70.0, is_cublas=False, profile_index=-1, problem=PROBLEM):
    return {
        "problem": problem, "label": label, "is_cublas": is_cublas, "config": label, "status": "ok",
        "profile_index": profile_index,
        "flushed": {"timed": True, "median_us": median_us, "tflops": 1240.0 / median_us, "sm_clock_mhz": 1755},
        "sustained": {"valid": True, "us_per_gemm": median_us * 0.95, "mean_sm_mhz": 1620.0, "avg_w": 690.0,
                      "mj_per_gemm": mj},
        "model": ({"ok": True, "l2_to_sm_bytes": int(model_gb * GB), "l2_to_sm_bytes_unicast": int(3.0 * GB)}
                  if model_gb else {"ok": False}),
    }


# (label, model GB, counted GB, kernels); profiled in this order, listed by the bench in another.
CALLS = [
    ("2x1", 2.0, 2.0, 1),
    ("cuBLAS", None, 1.8, 1),
    ("1x1", 3.0, 2.4, 1),        # model 25% above the counter: flagged
    ("2x1 mc off", 3.0, 2.9, 1),
    ("4x1+comp", 1.5, 1.5, 2),   # main and companion kernels, summed
]
BENCH_ORDER = ["cuBLAS", "1x1", "2x1", "2x1 mc off", "4x1+comp"]


# The second problem: cuBLAS and 1x1, profiled in that order after the first's five.
SECOND_CALLS = [("cuBLAS", None, 9.0, 1), ("1x1", 12.9, 12.0, 1)]


def write_fixture(folder):
    index = {label: i for i, (label, *_rest) in enumerate(CALLS)}
    model = {label: m for label, m, _c, _k in CALLS}
    rows = [bench_row(l, model[l], median_us=120.0 if l == "1x1" else 100.0, mj=80.0 if l == "cuBLAS" else 70.0,
                      is_cublas=l == "cuBLAS") for l in BENCH_ORDER]
    for i, (label, m, _c, _k) in enumerate(SECOND_CALLS):
        rows.append(dict(bench_row(label, m, is_cublas=label == "cuBLAS", problem=SECOND), profile_index=0))
    second_index = {label: len(CALLS) + i for i, (label, *_rest) in enumerate(SECOND_CALLS)}
    bench = {"mode": "mcast", "machine": {"gpu_name": "NVIDIA H200", "sm_count": 132, "power_limit_w": 700},
             "options": {"iters": 50, "l2_flush_bytes": 256 << 20, "energy_s": 2.0}, "rows": rows}
    profile = {"mode": "mcast-ncu-pass", "rows": [
        dict(r, profile_index=(index if r["problem"] == PROBLEM else second_index)[r["label"]]) for r in rows]}
    paths = {k: os.path.join(folder, k) for k in ("bench.json", "profile.json", "counters.csv")}
    with open(paths["bench.json"], "w") as f:
        json.dump(bench, f)
    with open(paths["profile.json"], "w") as f:
        json.dump(profile, f)
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", TIME, READ, DELIVERED, BUSY]
    units = ["", "", "", "", "", "", "", "", "", "", "", "nsecond", "sector", "byte", "%"]
    lines, kid = [header, units], 0

    def kernel(name, time_ns, sectors, delivered, busy):
        nonlocal kid
        lines.append([str(kid), "1", "tilecast-bench", "h", name, "1", "13", "(384, 1, 1)", "(132, 1, 1)", "0",
                      "9.0", f"{time_ns:,.0f}", f"{sectors:.0f}", f"{delivered:.0f}", f"{busy}"])
        kid += 1

    def junk():  # a check run and cuBLAS's FP32 reference: no call's
        kernel("sm90_xmma_gemm_f32", 50000, 7e9 / 32, 1e9, 50)
        kernel("gemm_sm90_kernel<Cfg>", 50000, 7e9 / 32, 1e9, 50)

    for calls in (CALLS, SECOND_CALLS):
        junk()
        for label, _m, counted, kernels in calls:
            kernel(MARKER, 2000, 10, 4096, 0)
            name = "sm90_xmma_gemm_bf16" if label == "cuBLAS" else "gemm_sm90_kernel<Cfg>"
            if kernels == 1:
                kernel(name, 100000, counted * GB / 32, 3.0 * GB, 80)
            else:  # the main launch reads 3/4, the companion 1/4; busy 80% and 40%, weighted by time 3:1
                kernel(name, 90000, 0.75 * counted * GB / 32, 2.25 * GB, 80)
                kernel(name, 30000, 0.25 * counted * GB / 32, 0.75 * GB, 40)
        kernel(MARKER, 2000, 10, 4096, 0)  # closes the problem
    with open(paths["counters.csv"], "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(lines)
    return paths


class MulticastReport(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.paths = write_fixture(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def rows(self):
        segs = report.segments(report.read_counters(self.paths["counters.csv"]))
        return segs, report.join(report.load(self.paths["bench.json"]), report.load(self.paths["profile.json"]), segs)

    def test_markers_cut_the_kernels_into_calls(self):
        segs, _ = self.rows()
        # Each problem's calls, then its closing marker's segment (the next problem's setup, or the end).
        self.assertEqual([len(c) for c in segs], [k for *_x, k in CALLS] + [2] + [k for *_x, k in SECOND_CALLS] + [0])
        # The digit-grouped time parsed as a number.
        self.assertEqual(segs[0][0]["metrics"][TIME], 100000.0)

    def test_join_goes_by_profile_index_not_by_order(self):
        _, rows = self.rows()
        by = {(r["problem"], r["label"]): r for r in rows}
        for problem, calls in ((PROBLEM, CALLS), (SECOND, SECOND_CALLS)):
            for label, _m, counted, _k in calls:
                self.assertAlmostEqual(report.counted_bytes(by[(problem, label)]) / GB, counted, places=6,
                                       msg=f"{problem} {label}")

    def test_a_calls_kernels_sum_and_rates_weigh_by_time(self):
        _, rows = self.rows()
        comp = next(r for r in rows if r["label"] == "4x1+comp")["counters"]
        self.assertEqual(comp["kernels"], 2)
        self.assertAlmostEqual(comp[DELIVERED] / GB, 3.0)
        self.assertAlmostEqual(comp[TIME], 120000.0)
        self.assertAlmostEqual(comp[BUSY], (80 * 90000 + 40 * 30000) / 120000)

    def test_table_gives_model_over_counted_and_flags_more_than_ten_percent(self):
        _, rows = self.rows()
        table = report.main_table(rows)
        line = {l.split(" | ")[1]: l for l in table.splitlines()[2:] if l.startswith(f"| {PROBLEM} |")}
        self.assertIn("| 1.250 (off > 10%) |", line["1x1"])
        self.assertIn("| 1.000 |", line["2x1"])
        self.assertNotIn("off", line["2x1"])
        # Energy against cuBLAS: 80 / 70 mJ.
        self.assertIn("| 1.143 |", line["2x1"])
        # cuBLAS has no model: dashes, but its counter is there.
        self.assertIn("| - | 1.800 | - |", line["cuBLAS"])

    def test_ratio_table_shows_which_counter_sees_multicast(self):
        _, rows = self.rows()
        text = report.ratio_tables(rows)
        self.assertIn("2x1 / 2x1 mc off", text)
        model_line = next(l for l in text.splitlines() if l.startswith("| **model"))
        # model: 2.0 / 3.0 for multicast on/off, 2.0 / 3.0 against 1x1
        self.assertIn("| 0.667 | 0.667 |", model_line)
        read_line = next(l for l in text.splitlines() if l.startswith(f"| {READ}"))
        self.assertIn(f"| {2.0 / 2.9:.3f} | {2.0 / 2.4:.3f} |", read_line)
        # Its worst gap to the model's 0.667: |0.833 - 0.667|; the delivered bytes (3 GB in every
        # call) gap by |1 - 0.667|.
        self.assertIn(f"| {2.0 / 2.4 - 2.0 / 3.0:.3f} |", read_line)
        delivered_line = next(l for l in text.splitlines() if l.startswith(f"| {DELIVERED}"))
        self.assertIn(f"| 1.000 | 1.000 | {1 - 2.0 / 3.0:.3f} |", delivered_line)

    def test_command_line_writes_the_page(self):
        md = os.path.join(self.dir.name, "table.md")
        r = subprocess.run([sys.executable, SCRIPT, "--bench", self.paths["bench.json"], "--profile",
                            self.paths["profile.json"], "--csv", self.paths["counters.csv"], "--md", md],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(md) as f:
            page = f.read()
        self.assertIn("NVIDIA H200", page)
        self.assertEqual(sum(1 for l in page.splitlines() if l.startswith(f"| {PROBLEM} |")), len(CALLS))
        self.assertEqual(sum(1 for l in page.splitlines() if l.startswith(f"| {SECOND} |")), len(SECOND_CALLS))
        self.assertNotIn("markers in", r.stderr)  # the counts agree

    def test_without_counters_the_table_still_comes(self):
        r = subprocess.run([sys.executable, SCRIPT, "--bench", self.paths["bench.json"]], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| 4x1+comp |", r.stdout)

    def test_plot(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("no matplotlib")
        _, rows = self.rows()
        png = os.path.join(self.dir.name, "plot.png")
        self.assertTrue(report.plot(rows, png))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(png), 10000)


WRITER = os.environ.get("MCAST_SAMPLE_WRITER")


class WhatTheBenchWrites(unittest.TestCase):
    """The bench's own writer (tests/cpu/bench/write_sample_mcast.cpp, made-up timings, the suite's
    real configs and model) against the script's reader."""

    @unittest.skipUnless(WRITER, "MCAST_SAMPLE_WRITER not set (ctest sets it)")
    def test_report_reads_every_field_it_shows(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([WRITER, d], check=True, capture_output=True)
            bench = report.load(os.path.join(d, "mcast.json"))
            self.assertEqual(bench["mode"], "mcast")
            lines = report.main_table(report.join(bench)).splitlines()[2:]
            self.assertEqual(len(lines), len(bench["rows"]))
            self.assertGreaterEqual(len(lines), 3 * 13)  # three problems, cuBLAS and twelve configs each
            for r, line in zip(bench["rows"], lines):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                self.assertEqual(cells[:2], [r["problem"], r["label"]])
                f, e, m = r["flushed"], r["sustained"], r["model"]
                self.assertEqual(cells[2], f"{f['median_us']:.1f}" if f["timed"] else "-", line)
                self.assertEqual(cells[4], f"{f['sm_clock_mhz']:.0f}" if f["timed"] else "-", line)
                self.assertEqual(cells[5], f"{e['us_per_gemm']:.1f}" if e["valid"] else "-", line)
                self.assertEqual(cells[7], f"{e['avg_w']:.0f}" if e["valid"] else "-", line)
                self.assertEqual(cells[8], f"{e['mj_per_gemm']:.2f}" if e["valid"] else "-", line)
                self.assertEqual(cells[10], f"{m['l2_to_sm_bytes'] / GB:.3f}" if m["ok"] else "-", line)
                self.assertEqual(m["ok"], not r["is_cublas"], line)
            # The bench's own page has the same rows.
            with open(os.path.join(d, "mcast.md")) as md:
                page = md.read()
            for problem in {r["problem"] for r in bench["rows"]}:
                self.assertEqual(sum(1 for l in page.splitlines() if l.startswith(f"| {problem} | ") and "|--" not in l
                                     and l.count("|") > 10),
                                 sum(1 for r in bench["rows"] if r["problem"] == problem), problem)


if __name__ == "__main__":
    unittest.main()
