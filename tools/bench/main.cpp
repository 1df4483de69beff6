// tilecast-bench: tilecast::gemm against cuBLASLt on MISSION.md's suites. See --help and
// tools/bench/README.md. Without a GPU it prints plans and the traffic model and exits 0.
#include <cstdio>
#include <exception>
#include <string>

#include <cuda_runtime.h>

#include "api/device_state.hpp"
#include "gemm_config.hpp"
#include "gpu_run.hpp"
#include "machine_info.hpp"
#include "options.hpp"
#include "plan_report.hpp"
#include "report.hpp"
#include "sweep.hpp"
#include "tilecast_test/fill.hpp"

namespace {

// The facts tilecast::gemm plans with on `device`, or the H200 model (and why, on stderr) where
// they cannot be read: a GPU that is not SM90 still prints plans.
tilecast::plan::DeviceFacts planning_facts(int device) {
  try {
    if (cudaSetDevice(device) != cudaSuccess) throw tilecast::Error("cudaSetDevice failed");
    return tilecast::api::DeviceState::current().facts();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-bench: planning with the H200 model: the device's facts: %s\n", e.what());
    return tilecast::plan::DeviceFacts::h200_model();
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilecast::bench;
  Options o;
  std::vector<BenchProblem> problems;
  try {
    o = parse_options(argc, argv);
    if (o.help) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    problems = selected_problems(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-bench: %s\n\n%s", e.what(), usage().c_str());
    return 2;
  }

  RunInfo info;
  info.machine = probe_machine(argc, argv, o.device);
  if (info.machine.has_gpu) info.facts = planning_facts(o.device);
  info.peaks = peaks_of(info.facts);
  if (o.peak_tflops > 0) {
    info.peaks.tflops = o.peak_tflops;
    info.peaks.source = "command line";
  }
  if (o.peak_tb_per_s > 0) {
    info.peaks.tb_per_s = o.peak_tb_per_s;
    info.peaks.source = "command line";
  }
  info.warmup = o.warmup;
  info.balanced_order = o.balanced_order;
  info.iters = o.iters;
  info.min_ms = o.min_ms;
  info.json_rounds = o.json_rounds;
  info.flush_bytes = o.flush_bytes;
  info.flush_read = o.flush_read;
  info.calls_per_run = o.calls_per_run;
  info.seed_base = o.seed_given ? o.seed : tilecast::test::seed_base();

  std::printf("tilecast-bench: %s\n", info.machine.one_line().c_str());
  std::printf("command: %s\n", info.machine.command_line.c_str());
  std::printf("roofline peaks %.0f TFLOPS, %.2f TB/s (%s)\n", info.peaks.tflops, info.peaks.tb_per_s,
              info.peaks.source.c_str());
  std::printf("problems: %zu; tilecast config: %s%s\n", problems.size(),
              tilecast::bench::describe(o.config).c_str(), o.sweep ? " (sweep)" : o.cluster_compare ? " (cluster compare)" : o.split_compare ? " (split compare)" : "");
  std::fflush(stdout);

  if (!info.machine.has_gpu || o.plan_only) {
    if (o.sweep) {
      std::fputs(sweep_listing(problems, o.config, o.sweep_limit, info.facts).c_str(), stdout);
    } else {
      for (const BenchProblem& p : problems) std::fputs(plan_report(p, o.config, info.facts, info.peaks).c_str(), stdout);
    }
    info.note = info.machine.has_gpu ? "--plan-only: printed plans only" : "no GPU found: printed plans only";
    std::printf("%s\n", info.note.c_str());
    if (!o.json_path.empty() && !write_json(o.json_path, info, {}, problems)) return 1;
    if (!o.markdown_path.empty() && !write_markdown(o.markdown_path, info, {})) return 1;
    return 0;
  }

  info.gpu_mode = true;
  std::printf("timing: median of %d iterations%s after %d warm-up, cuBLAS and tilecast in turn, L2 flush %zu MiB %s before each\n",
              o.iters, o.min_ms > 0 ? (" or more (a loop of " + std::to_string(static_cast<int>(o.min_ms)) + " ms at least)").c_str() : "",
              o.warmup, o.flush_bytes >> 20, o.flush_read ? "read" : "written");
  try {
    return run_on_gpu(o, problems, info);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-bench: %s\n", e.what());
    return 1;
  }
}
