// The rows `--suite mcast` measures and the three forms they leave in: a text line per row on
// stdout, --json (what scripts/multicast_report.py reads) and --results-md. Pure formatting, so
// that a CPU test can write a run's files and feed them to the report script.
#pragma once

#include <string>
#include <vector>

#include "energy.hpp"
#include "multicast_configs.hpp"
#include "report.hpp"
#include "suites.hpp"
#include "timing.hpp"

namespace tilecast::bench {

// ncu --nvtx --nvtx-include "<kProfileRange>/" selects what --ncu-pass profiles.
inline constexpr const char* kProfileRange = "tilecast_mcast_profile";
// The marker kernel before each profiled call and after a problem's last (tests/common/src/fill.cu).
inline constexpr const char* kMarkerKernel = "copy_convert_kernel";

// One measured row: cuBLAS or one tilecast config of one problem.
struct McastRow {
  BenchProblem problem;
  std::string label;   // "cuBLAS" or McastConfig::label
  std::string config;  // the GemmConfig text, or cuBLAS's algorithm
  bool is_cublas = false;
  std::string status = "unavailable", detail;  // "ok", "error", "unavailable"
  bool verified = false, verify_pass = false;
  double rel_fro_error = 0;
  TimingStats t;
  bool timed = false;
  EnergyResult energy;
  TrafficModel model;
  int profile_index = -1;  // position in the --ncu-pass order
};

// What the files say of the run beyond RunInfo.
struct McastRunOptions {
  bool ncu_pass = false;
  double energy_s = 0;
};

double tflops_of(const McastRow& r);  // from the flushed median; 0 when not timed

// One line per row (and indented lines for errors); `cublas`: the problem's cuBLAS row, for the
// x cuBLAS columns (null: none).
std::string text_header();
std::string text_row(const McastRow& r, const McastRow* cublas);

// The tilecast rows with their problem's cuBLAS row, as the bench's own rows (report.hpp): the
// flushed timings, for the results table every suite writes.
std::vector<Row> bench_rows(const std::vector<McastRow>& rows, const Peaks& peaks);

std::string mcast_json(const std::vector<McastRow>& rows, const RunInfo& info, const McastRunOptions& o);
std::string mcast_markdown(const std::vector<McastRow>& rows, const RunInfo& info, const McastRunOptions& o);

// false (and a message on stderr) when the file cannot be written.
bool write_text(const std::string& path, const std::string& text);

}  // namespace tilecast::bench
