// Rows of results and the three forms they leave in: a text table on stdout (a row as soon as it
// is measured), --json FILE and --results-md FILE (a markdown table for bench/results/).
#pragma once

#include <string>
#include <vector>

#include "machine_info.hpp"
#include "roofline.hpp"
#include "suites.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/fill.hpp"
#include "timing.hpp"

namespace tilecast::bench {

struct Measurement {
  bool ran = false;
  TimingStats t;
  double tflops = 0, tb_per_s = 0;
  double roofline_fraction = 0;  // roofline time / measured median
};

struct Row {
  BenchProblem problem;
  Roofline roofline;
  std::string config;  // the tilecast config requested ("auto": the heuristic's choice)
  uint64_t seed = 0;   // of the inputs

  std::string cublas_variant, cublas_algo, cublas_error;
  Measurement cublas;

  // "ok", "unavailable" or "error"; detail says why for the last two.
  std::string tilecast_status = "unavailable", tilecast_detail;
  Measurement tilecast;
  bool verified = false, verify_pass = false;
  test::CompareResult cmp;
  test::Tolerance tol;
  test::WriteCheck written;

  size_t problem_index = 0;  // in the run's list of problems (a sweep's rows are grouped by it)
  // --sweep: a row of a config forced from the planner's candidates (the "auto" row is not one),
  // with the model's rank (1: cheapest predicted) and estimate; the auto row gets the pick's.
  bool sweep = false, heuristic_pick = false;
  bool serpentine_twin = false;  // the pick's plan with serpentine K (SweepConfig::serpentine_twin)
  size_t sweep_rank = 0;
  double predicted_us = 0;
  // Whose time the cuBLAS columns hold: "" the cuBLAS column's (what users get); "careful" or
  // "diagnostic": an odd-size variant's (cublas_odd.hpp), named in cublas_variant.
  std::string baseline_role;

  double speedup() const;  // cuBLAS median / tilecast median (> 1: tilecast faster); 0 if missing
  std::string check() const;  // PASS, FAIL or -
};

// Fills tflops, tb_per_s and roofline_fraction from the timing.
void finish(Measurement& m, const BenchProblem& p, const Roofline& r);

struct RunInfo {
  MachineInfo machine;
  // What the planner knows of the device the rows run on: the facts tilecast::gemm plans with
  // there (read from the GPU), or the H200 model where no GPU runs them. The sweep's configs, the
  // plans printed and the multicast traffic model come from these, as the roofline's peaks do.
  plan::DeviceFacts facts = plan::DeviceFacts::h200_model();
  Peaks peaks;
  int warmup = 0, iters = 0;
  double min_ms = 0;  // --min-ms: rounds added until the loop lasts this long
  bool json_rounds = false;  // --json-rounds: every timed run in the JSON
  bool balanced_order = true;  // the timed rounds in a Williams design (the default; --fixed-order: not)
  size_t flush_bytes = 0;
  bool flush_read = false;  // the flush read the buffer (--flush-read), not wrote it
  int calls_per_run = 1;
  bool gpu_mode = false;
  std::string note;  // e.g. "no GPU found: printed plans only"
  uint64_t seed_base = 0;
};

std::string table_header();
std::string table_row(const Row& r);  // one line, plus indented lines for errors and failures
std::string summary_text(const std::vector<Row>& rows);

// Write the files; false (and a message on stderr) when a file cannot be written.
bool write_json(const std::string& path, const RunInfo& info, const std::vector<Row>& rows,
                const std::vector<BenchProblem>& plan_only_problems);
bool write_markdown(const std::string& path, const RunInfo& info, const std::vector<Row>& rows);

// The results page's table: its header (two lines) and one row, `suite` in the first column.
std::string markdown_table_header();
std::string markdown_row(const Row& r, const std::string& suite);

}  // namespace tilecast::bench
