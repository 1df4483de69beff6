// Writes the files a `tilecast-bench --suite mcast` run would (mcast.json, mcast.md, the text
// rows on stdout) for made-up timings, with the suite's real configs and traffic model, into the
// folder given: test_multicast_report.py feeds them to scripts/multicast_report.py, so that the
// bench's writer and the script's reader are checked against each other without a GPU.
#include <cstdio>
#include <string>
#include <vector>

#include "multicast_output.hpp"

using namespace tilecast;
using namespace tilecast::bench;

namespace {

// Made-up measurements, distinct per row so that a mixed-up column shows.
McastRow measured(const BenchProblem& p, const std::string& label, double us, double mj) {
  McastRow r;
  r.problem = p;
  r.label = label;
  r.status = "ok";
  r.timed = true;
  r.t.iters = 50;
  r.t.median_us = us;
  r.t.during.valid = true;
  r.t.during.sm_mhz = 1755;
  r.energy.valid = true;
  r.energy.gemms = 20000;
  r.energy.window_s = 2.0;
  r.energy.gpu_us_per_gemm = us * 0.97;
  r.energy.mj_per_gemm = mj;
  r.energy.joules = mj * 20000 / 1e3;
  r.energy.avg_w = r.energy.joules / 2.0;
  r.energy.mean_sm_mhz = 1610;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample_mcast FOLDER\n");
    return 2;
  }
  const std::string dir = argv[1];
  const plan::DeviceFacts facts = plan::DeviceFacts::h200_model();
  std::vector<McastRow> rows;
  double us = 180.0, mj = 120.0;
  for (const BenchProblem& p : make_suite("mcast")) {
    McastRow cublas = measured(p, "cuBLAS", us * 0.9, mj * 1.1);
    cublas.is_cublas = true;
    cublas.config = "algo 66 tile 20 stages 30";
    rows.push_back(cublas);
    for (const McastConfig& c : mcast_configs(p, facts)) {
      McastRow r = measured(p, c.label, us += 1.5, mj += 0.75);
      r.config = format_config(c.config);
      r.model = traffic_model(p, c.config, facts);
      r.verified = r.verify_pass = true;
      rows.push_back(r);
    }
    // A row whose energy loop failed and one that did not run: the files must still be well formed.
    rows.back().energy = EnergyResult{};
    rows.back().energy.why_not = "no NVML energy counter: made up";
    rows[rows.size() - 2].status = "error";
    rows[rows.size() - 2].timed = false;
    rows[rows.size() - 2].detail = "made-up \"quoted\" error | with a bar";
  }
  RunInfo info;
  info.machine.has_gpu = true;
  info.machine.gpu_name = "NVIDIA H200 (sample)";
  info.machine.sm_count = 132;
  info.machine.power_limit_w = 700;
  info.iters = 50;
  info.warmup = 10;
  info.flush_bytes = size_t{256} << 20;
  const McastRunOptions o{false, 2.0};
  std::fputs(text_header().c_str(), stdout);
  for (const McastRow& r : rows) std::fputs(text_row(r, &rows.front()).c_str(), stdout);
  return write_text(dir + "/mcast.json", mcast_json(rows, info, o)) &&
                 write_text(dir + "/mcast.md", mcast_markdown(rows, info, o))
             ? 0
             : 1;
}
