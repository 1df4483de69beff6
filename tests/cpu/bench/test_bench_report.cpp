// tilecast-bench's report of a sweep (tools/bench/sweep_report.cpp, report.cpp) on made-up rows:
// the pick is the heuristic's own call, the best is the fastest row that passed its check (a
// faster FAIL never counts), the gap and the target line follow, and a sweep's forced configs
// and the odd-size diagnostics stay out of the suite summary and the page's main table.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "multicast_output.hpp"
#include "report.hpp"
#include "sweep_report.hpp"

namespace tilecast::bench {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Row row(const BenchProblem& p, size_t index, const std::string& config, double tc_us, bool pass = true) {
  Row r;
  r.problem = p;
  r.problem_index = index;
  r.config = config;
  r.tilecast_status = "ok";
  r.tilecast.ran = true;
  r.tilecast.t.median_us = tc_us;
  r.verified = true;
  r.verify_pass = pass;
  r.cublas.ran = true;
  r.cublas.t.median_us = 100;
  r.cublas_variant = "cublasLt";
  return r;
}

Row swept(const BenchProblem& p, size_t index, const std::string& config, double tc_us, size_t rank, bool pass = true) {
  Row r = row(p, index, config, tc_us, pass);
  r.sweep = true;
  r.sweep_rank = rank;
  r.heuristic_pick = rank == 1;
  r.predicted_us = 40.0 + static_cast<double>(rank);
  return r;
}

// Problem 0: the pick (110 us) loses to a passing config (95 us) by 15.8%; a faster config (90 us)
// failed its check and one config hit an error. Problem 1: the pick is the best. Problem 1 also
// has an odd-size baseline row, and problem 2 was not swept.
std::vector<Row> sample_rows() {
  const BenchProblem p0 = make_suite("m4096")[1], p1 = make_suite("m4096")[2], p2 = make_suite("dense")[0];
  std::vector<Row> rows;
  rows.push_back(row(p0, 0, "auto", 110));
  rows.push_back(swept(p0, 0, "block_m=128,block_n=144,cluster=2x1,k_splits=1", 100, 1));
  rows.push_back(swept(p0, 0, "block_m=128,block_n=96,cluster=1x1,k_splits=1", 95, 2));
  rows.push_back(swept(p0, 0, "block_m=128,block_n=64,cluster=1x1,k_splits=1", 90, 3, /*pass=*/false));
  Row error = swept(p0, 0, "block_m=64,block_n=64,cluster=1x1,k_splits=1", 0, 4);
  error.tilecast_status = "error";
  error.tilecast.ran = false;
  error.verified = false;
  rows.push_back(error);
  rows.push_back(row(p1, 1, "auto", 200));
  rows.push_back(swept(p1, 1, "block_m=128,block_n=256,cluster=2x1,k_splits=1", 203, 1));
  rows.push_back(swept(p1, 1, "block_m=128,block_n=192,cluster=2x1,k_splits=1", 250, 2));
  Row careful = row(p1, 1, "auto", 200);
  careful.baseline_role = "careful";
  careful.cublas_variant = "padded extents, best of 8: algo #2 of the heuristic's";
  rows.push_back(careful);
  rows.push_back(row(p2, 2, "auto", 1400));
  return rows;
}

// The whitespace-separated words of the first line of `text` that contains `key`.
std::vector<std::string> words_of_line(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(key) != std::string::npos) {
      std::istringstream in(line);
      std::vector<std::string> words;
      for (std::string w; in >> w;) words.push_back(w);
      return words;
    }
  return {};
}

using Words = std::vector<std::string>;

TEST(BenchSweepReport, PickBestGapAndTheTargetLine) {
  const std::string text = sweep_summary_text(sample_rows());
  // Problem 0: 4 configs, 1 FAIL, 1 error, pick 110 against the best passing 95: +15.8%.
  EXPECT_EQ(words_of_line(text, "4096x576x7168"), (Words{"m4096", "4096x576x7168", "4", "1", "1", "110.0", "95.0",
                                                         "+15.8%", "block_m=128,block_n=96,cluster=1x1,k_splits=1"}))
      << text;
  // Problem 1: the pick itself is the best.
  EXPECT_EQ(words_of_line(text, "4096x24576x1536"),
            (Words{"m4096", "4096x24576x1536", "2", "0", "0", "200.0", "200.0", "+0.0%", "auto", "(the", "pick)"}))
      << text;
  EXPECT_NE(text.find("heuristic within 5% of best on 1 of 2 rows"), std::string::npos) << text;
  EXPECT_EQ(text.find("8192x8192x8192"), std::string::npos) << "an unswept problem has no sweep line";
}

TEST(BenchSweepReport, SerpentineKAgainstThePicksPlanForced) {
  std::vector<Row> rows = sample_rows();
  // Problem 1's pick forced ran 203 us; with serpentine K 196 (ahead of auto's 200, so the best).
  Row twin = swept(make_suite("m4096")[2], 1, "block_m=128,block_n=256,cluster=2x1,k_splits=1,k_serpentine=1", 196, 2);
  twin.serpentine_twin = true;
  rows.insert(rows.begin() + 7, twin);
  const std::string text = sweep_summary_text(rows);
  EXPECT_NE(text.find("serpentine K / the pick's plan forced (below 1: serpentine faster): 4096x24576x1536 0.966\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(words_of_line(text, "  m4096     4096x24576x1536")[7], "+2.0%") << text;
  const std::string md = sweep_markdown(rows);
  EXPECT_NE(md.find("| 196.0 | 0.966 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| - | - |\n"), std::string::npos) << "problem 0 had no twin\n" << md;
  // A twin that failed its check says so, never a ratio.
  rows[7].verify_pass = false;
  EXPECT_NE(sweep_summary_text(rows).find("4096x24576x1536 FAIL"), std::string::npos);
  // No twin anywhere: no serpentine line.
  EXPECT_EQ(sweep_summary_text(sample_rows()).find("serpentine"), std::string::npos);
}

TEST(BenchSweepReport, APickThatFailedItsCheckIsNeverWithinTheTarget) {
  std::vector<Row> rows = sample_rows();
  rows[5].verify_pass = false;  // problem 1's auto row
  const std::string text = sweep_summary_text(rows);
  EXPECT_NE(text.find("pick FAILED its check"), std::string::npos) << text;
  EXPECT_NE(text.find("heuristic within 5% of best on 0 of 2 rows"), std::string::npos) << text;
}

TEST(BenchSweepReport, NoSweepRowsNoSection) {
  std::vector<Row> rows = sample_rows();
  std::erase_if(rows, [](const Row& r) { return r.sweep; });
  EXPECT_EQ(sweep_summary_text(rows), "");
  EXPECT_EQ(sweep_markdown(rows), "");
}

TEST(BenchSweepReport, SuiteSummaryCountsTheCallsUsersMakeNotTheForcedConfigs) {
  const std::string text = summary_text(sample_rows());
  // m4096: the two auto rows and the careful baseline's row (rows, compared, FAIL); the six forced
  // configs are left out.
  const Words m4096 = words_of_line(text, "  m4096 ");
  ASSERT_GE(m4096.size(), 4u) << text;
  EXPECT_EQ(Words(m4096.begin(), m4096.begin() + 4), (Words{"m4096", "3", "3", "0"})) << text;
  std::vector<Row> with_diagnostic = sample_rows();
  with_diagnostic[8].baseline_role = "diagnostic";
  const Words fewer = words_of_line(summary_text(with_diagnostic), "  m4096 ");
  ASSERT_GE(fewer.size(), 4u);
  EXPECT_EQ(Words(fewer.begin(), fewer.begin() + 4), (Words{"m4096", "2", "2", "0"}));
}

TEST(BenchSweepReport, MarkdownKeepsItsTableAndAddsTheSweepSection) {
  const std::string path = (std::filesystem::temp_directory_path() / "tilecast_test_bench_report.md").string();
  RunInfo info;
  ASSERT_TRUE(write_markdown(path, info, sample_rows()));
  const std::string page = slurp(path);
  std::remove(path.c_str());
  const size_t section = page.find("\n## sweep\n");
  ASSERT_NE(section, std::string::npos);
  const std::string main_table = page.substr(0, section), sweep = page.substr(section);
  // The main table: the columns it always had, the auto rows and the careful baseline's row.
  EXPECT_NE(main_table.find("| suite | problem (MxNxK) | tilecast config | tilecast us | TFLOPS | roofline | "
                            "cuBLAS us | TFLOPS | roofline | x cuBLAS | check | SM MHz | cuBLAS variant | note |"),
            std::string::npos);
  EXPECT_EQ(count(main_table, "| m4096 | "), 3u);
  EXPECT_EQ(count(main_table, "| block_m=128,block_n=96"), 0u);  // a forced config is no row of it
  EXPECT_NE(main_table.find("careful cuBLAS baseline"), std::string::npos);
  // The section: one line per swept problem, the target, then every forced config as suite sweep.
  EXPECT_NE(sweep.find("| m4096 | 4096x576x7168 | 4 | 1 | 1 | 110.0 | 100.0 | 95.0 | +15.8% | "
                       "`block_m=128,block_n=144,cluster=2x1,k_splits=1` | "
                       "`block_m=128,block_n=96,cluster=1x1,k_splits=1` | 2 | 1.053 |"),
            std::string::npos)
      << sweep;
  EXPECT_NE(sweep.find("**heuristic within 5% of best on 1 of 2 rows**"), std::string::npos);
  EXPECT_EQ(count(sweep, "| sweep | "), 6u);
  EXPECT_NE(sweep.find("model rank 1, est 41.0 us (the pick)"), std::string::npos);
}

// The header's timing line says how each run was timed: the flush, or none, and chains of calls.
TEST(BenchReport, TimingLineSaysTheFlushAndTheCallsPerRun) {
  const std::string path = (std::filesystem::temp_directory_path() / "tilecast_test_bench_timing.md").string();
  const auto timing_line = [&](const RunInfo& info) {
    EXPECT_TRUE(write_markdown(path, info, sample_rows()));
    const std::string page = slurp(path);
    std::remove(path.c_str());
    const size_t at = page.find("| timing | ");
    return at == std::string::npos ? std::string() : page.substr(at, page.find('\n', at) - at);
  };
  RunInfo info;
  info.flush_bytes = size_t{256} << 20;
  const std::string flushed = timing_line(info);
  EXPECT_NE(flushed.find("L2 flushed before each by writing 256 MiB"), std::string::npos) << flushed;
  info.flush_read = true;
  const std::string read = timing_line(info);
  EXPECT_NE(read.find("L2 flushed before each by reading 256 MiB"), std::string::npos) << read;
  info.flush_read = false;
  EXPECT_EQ(flushed.find("back-to-back"), std::string::npos) << flushed;
  info.flush_bytes = 0;
  info.calls_per_run = 8;
  const std::string chained = timing_line(info);
  EXPECT_NE(chained.find("no L2 flush"), std::string::npos) << chained;
  EXPECT_NE(chained.find("each timed run 8 back-to-back calls"), std::string::npos) << chained;
  EXPECT_EQ(chained.find("--min-ms"), std::string::npos) << "no minimum asked: none said";
  info.min_ms = 250;
  const std::string long_loop = timing_line(info);
  EXPECT_NE(long_loop.find("more rounds where needed for a loop of 250 ms at least (--min-ms)"), std::string::npos)
      << long_loop;
}

TEST(BenchSweepReport, JsonHoldsEveryConfigWithItsRankAndRole) {
  const std::string path = (std::filesystem::temp_directory_path() / "tilecast_test_bench_report.json").string();
  RunInfo info;
  const std::vector<Row> rows = sample_rows();
  ASSERT_TRUE(write_json(path, info, rows, {}));
  const std::string json = slurp(path);
  std::remove(path.c_str());
  EXPECT_EQ(count(json, "\"tilecast_config\""), rows.size());
  EXPECT_EQ(count(json, "\"forced_config\": true"), 6u);
  EXPECT_NE(json.find("\"model_rank\": 4"), std::string::npos);
  EXPECT_NE(json.find("\"baseline_role\": \"careful\""), std::string::npos);
  EXPECT_EQ(json.find("\"rounds_us\""), std::string::npos) << "each run's time only with --json-rounds";
}

TEST(BenchReport, JsonRoundsHoldEachRunInRoundOrderAndItsPlaceInTheLoop) {
  const std::string path = (std::filesystem::temp_directory_path() / "tilecast_test_bench_rounds.json").string();
  RunInfo info;
  info.json_rounds = true;
  std::vector<Row> rows = sample_rows();
  rows.front().tilecast.t.rounds_us = {12.5, 13.25, 12.75};
  rows.front().tilecast.t.loop_index = 1;
  rows.front().tilecast.t.loop_functions = 14;
  rows.front().tilecast.t.balanced = true;
  ASSERT_TRUE(write_json(path, info, rows, {}));
  const std::string json = slurp(path);
  std::remove(path.c_str());
  const size_t loop = json.find("\"loop\"", json.find("\"tilecast\""));  // the first row's (cuBLAS's comes first)
  ASSERT_NE(loop, std::string::npos);
  const std::string first = json.substr(loop, json.find('}', loop) - loop);
  EXPECT_NE(first.find("\"index\": 1,"), std::string::npos) << first;
  EXPECT_NE(first.find("\"functions\": 14,"), std::string::npos) << first;
  EXPECT_NE(first.find("\"balanced\": true"), std::string::npos) << first;
  EXPECT_NE(first.find("12.5"), std::string::npos) << first;
  EXPECT_LT(first.find("12.5"), first.find("13.25")) << "in round order, not sorted";
  EXPECT_LT(first.find("13.25"), first.find("12.75")) << "in round order, not sorted";
  EXPECT_EQ(count(json, "\"rounds_us\""), count(json, "\"ran\": true")) << "with every timing that ran";
}

McastRow mcast_row(const BenchProblem& p, const std::string& label, double us, bool cublas) {
  McastRow r;
  r.problem = p;
  r.label = label;
  r.config = cublas ? "algo 66" : "cluster=" + label;
  r.is_cublas = cublas;
  r.status = "ok";
  r.timed = true;
  r.t.median_us = us;
  r.verified = r.verify_pass = !cublas;
  return r;
}

// --suite mcast's page also carries its flushed timings in the bench's columns, each tilecast
// config against its own problem's cuBLAS row.
TEST(BenchMcastReport, TheFlushedTimingsComeInTheBenchsColumns) {
  const BenchProblem a = make_suite("mcast")[0], b = make_suite("mcast")[1];
  const std::vector<McastRow> rows = {mcast_row(a, "cuBLAS", 100, true), mcast_row(a, "1x1", 50, false),
                                      mcast_row(a, "2x1", 200, false), mcast_row(b, "cuBLAS", 30, true),
                                      mcast_row(b, "1x1", 60, false)};
  const std::vector<Row> bench = bench_rows(rows, default_peaks());
  ASSERT_EQ(bench.size(), 3u) << "one row per tilecast config, none for cuBLAS";
  EXPECT_DOUBLE_EQ(bench[0].speedup(), 2.0);
  EXPECT_DOUBLE_EQ(bench[1].speedup(), 0.5);
  EXPECT_DOUBLE_EQ(bench[2].speedup(), 0.5) << "against its own problem's cuBLAS";
  EXPECT_EQ(bench[0].check(), "PASS");
  EXPECT_EQ(bench[2].config, "cluster=1x1");
  RunInfo info;
  info.peaks = default_peaks();
  const std::string md = mcast_markdown(rows, info, McastRunOptions{});
  EXPECT_NE(md.find(markdown_table_header()), std::string::npos);
  EXPECT_EQ(count(md, "| mcast | "), 3u);
  EXPECT_NE(md.find("| mcast | " + a.label() + " | cluster=2x1 | 200.0 |"), std::string::npos) << md;
}

// The roofline is the device's: on an H100 SXM's facts a memory-bound row's roofline time is the
// H200's scaled by their HBM rates, a compute-bound one's unchanged.
TEST(BenchRoofline, PeaksComeFromTheDevicesFacts) {
  const Peaks h200 = default_peaks(), h100 = peaks_of(plan::DeviceFacts::h100_sxm_model());
  EXPECT_EQ(h200.tb_per_s, plan::DeviceFacts::h200_model().hbm_tb_per_s);
  EXPECT_NE(h100.source.find("H100 SXM"), std::string::npos) << h100.source;
  const BenchProblem memory_bound = parse_shape("128,7168,16384"), compute_bound = parse_shape("8192,8192,8192");
  const Roofline m200 = roofline_of(memory_bound, h200), m100 = roofline_of(memory_bound, h100);
  EXPECT_STREQ(m100.bound(), "memory");
  EXPECT_NEAR(m100.time_us() / m200.time_us(), h200.tb_per_s / h100.tb_per_s, 1e-9);
  EXPECT_DOUBLE_EQ(roofline_of(compute_bound, h100).time_us(), roofline_of(compute_bound, h200).time_us());
}

}  // namespace
}  // namespace tilecast::bench
