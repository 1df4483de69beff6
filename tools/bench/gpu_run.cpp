#include "gpu_run.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "cublas_runner.hpp"
#include "gemm_config.hpp"
#include "multicast_worth.hpp"
#include "plan_report.hpp"
#include "sweep_run.hpp"
#include "tilecast_runner.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/fill.hpp"
#include "interleave.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {
namespace {

// The host suite: rounds of back-to-back calls, each round after the stream drained.
constexpr int kHostRounds = 30, kHostCalls = 100;

// After an exception: a launch error is cleared here and the run goes on; an error that a
// device-wide synchronize still reports (a kernel fault) has ruined the context: stop.
bool context_lost(std::string& why) {
  cudaGetLastError();
  const cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) return false;
  why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  return true;
}

struct Runner {
  const Options& o;
  RunInfo& info;
  cudaStream_t stream = nullptr;
  test::CublasLt& lt;
  const L2Flusher& flusher;
  const ClockProbe& probe;
  std::vector<Row> rows;
  bool any_fail = false;
  std::string fatal;  // non-empty: the context is gone
  const std::vector<ProblemSweep>* sweeps = nullptr;  // --sweep: one per problem
  SweepProgress* progress = nullptr;

  void emit(Row&& r) {
    std::fputs(table_row(r).c_str(), stdout);
    std::fflush(stdout);
    if (r.verified && !r.verify_pass) any_fail = true;
    rows.push_back(std::move(r));
  }

  void problem(const BenchProblem& p, size_t index) {
    Row base;
    base.problem = p;
    base.roofline = roofline_of(p, info.peaks);
    base.seed = o.seed_given ? o.seed + index : test::fresh_seed();
    base.config = describe(o.config);
    base.problem_index = index;
    const Sweep* sweep = sweeps && (*sweeps)[index].skipped.empty() ? &(*sweeps)[index].sweep : nullptr;
    if (sweep && !sweep->configs.empty()) base.predicted_us = sweep->configs.front().plan.cost.total_us;

    std::unique_ptr<Workload> w;
    std::unique_ptr<CublasBaseline> cublas;
    bool have_reference = false;
    try {
      w = make_workload(p, base.seed, stream);
      cublas = std::make_unique<CublasBaseline>(lt, p, *w);
      cublas->run_reference(stream);
      TC_CUDA_CHECK(cudaStreamSynchronize(stream));
      have_reference = true;
    } catch (const std::exception& e) {
      base.cublas_error = e.what();
      if (context_lost(fatal)) {
        emit(std::move(base));
        return;
      }
    }
    if (!w) {  // nothing to run tilecast on
      emit(std::move(base));
      return;
    }

    // Each config once on a poisoned output, checked against the FP32 reference.
    const std::vector<GemmConfig> configs =
        sweep               ? sweep_timed_configs(o.config, *sweep)
        : o.cluster_compare ? cluster_compare_configs(o.config)
        : o.split_compare   ? split_compare_configs(o.config)
                            : std::vector<GemmConfig>{o.config};
    std::vector<Row> rows;
    struct ExtraBaseline {
      std::string variant, algo, role;
      Measurement m;
    };
    std::vector<ExtraBaseline> extra;
    std::vector<Enqueue> timed;      // the cuBLAS variants first, then the configs that ran
    std::vector<Row*> timed_rows;    // the row of each timed config
    if (have_reference)
      for (const BaselineVariant& v : cublas->variants()) timed.push_back(v.run);
    const size_t num_baselines = timed.size();
    rows.reserve(configs.size());
    for (const GemmConfig& cfg : configs) {
      Row& r = rows.emplace_back(base);
      r.config = describe(cfg);
      if (sweep && rows.size() > 1) {  // configs[0] is the heuristic's own call
        const SweepConfig& sc = sweep->configs[rows.size() - 2];
        r.sweep = true;
        r.heuristic_pick = sc.heuristic_pick;
        r.serpentine_twin = sc.serpentine_twin;
        r.sweep_rank = rows.size() - 1;
        r.predicted_us = sc.plan.cost.total_us;
        if (progress) progress->tick();
      }
      const TilecastCall call = make_tilecast_call(p, *w, cfg);
      if (!call.run) {
        r.tilecast_status = "unavailable";
        r.tilecast_detail = call.unavailable;
        continue;
      }
      try {
        const CheckedCall checked = run_checked(call, p, *w, have_reference, stream);
        r.verified = checked.verified;
        r.verify_pass = checked.passed();
        r.written = checked.written;
        r.cmp = checked.cmp;
        r.tol = checked.tol;
        r.tilecast_status = "ok";
        timed.push_back(call.run);
        timed_rows.push_back(&r);
      } catch (const std::exception& e) {
        r.tilecast_status = "error";
        r.tilecast_detail = e.what();
        if (context_lost(fatal)) break;
      }
    }

    // cuBLAS and every config timed in turn within one loop (same clocks for all).
    if (fatal.empty() && !timed.empty()) {
      try {
        // The host suite times the enqueue of a call instead of the GPU's work (suites.hpp).
        const std::vector<TimingStats> t =
            p.host_time ? time_host_enqueue(timed, stream, kHostRounds, kHostCalls)
                        : time_interleaved(timed, stream, flusher, o.warmup, o.iters, &probe, o.balanced_order,
                                           o.calls_per_run, o.min_ms, relabel_seed(base.seed));
        // Without a reference no baseline was timed: t holds the configs' times only.
        const std::vector<TimingStats> baseline_times(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(num_baselines));
        for (const BaselineBest& b : fastest_per_group(cublas->variants(), baseline_times)) {
          Measurement m;
          m.t = b.t;
          finish(m, p, base.roofline);
          if (!b.variant->group.empty()) {  // an extra row beside the first config's (cublas_odd.hpp)
            extra.push_back({b.variant->group + ": " + b.variant->name, b.variant->algo, b.variant->role, m});
            continue;
          }
          base.cublas = m;
          base.cublas_variant = b.variant->name;
          base.cublas_algo = b.variant->algo;
        }
        for (size_t j = 0; j < timed_rows.size(); ++j) {
          timed_rows[j]->tilecast.t = t[num_baselines + j];
          finish(timed_rows[j]->tilecast, p, timed_rows[j]->roofline);
        }
      } catch (const std::exception& e) {
        for (Row* r : timed_rows) {
          r->tilecast_status = "error";
          r->tilecast_detail = std::string("timing: ") + e.what();
        }
        base.cublas_error = std::string("timing: ") + e.what();
        context_lost(fatal);
      }
    }
    for (Row& r : rows) {
      r.cublas = base.cublas;
      r.cublas_variant = base.cublas_variant;
      r.cublas_algo = base.cublas_algo;
      if (r.cublas_error.empty()) r.cublas_error = base.cublas_error;
    }
    // Each extra baseline against the first config (the heuristic's call unless compared).
    for (const ExtraBaseline& e : extra) {
      if (rows.empty()) break;
      Row r = rows.front();
      r.sweep = r.heuristic_pick = r.serpentine_twin = false;
      r.cublas = e.m;
      r.cublas_variant = e.variant;
      r.cublas_algo = e.algo;
      r.baseline_role = e.role;
      rows.push_back(std::move(r));
    }
    for (Row& r : rows) emit(std::move(r));
  }
};

}  // namespace

int run_on_gpu(const Options& o, const std::vector<BenchProblem>& problems, RunInfo& info) {
  if (wants_multicast_worth(o)) return run_multicast_worth(o, problems, info);
  TC_CUDA_CHECK(cudaSetDevice(o.device));
  cudaStream_t stream = nullptr;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int code = 0;
  {
    test::CublasLt lt;
    const L2Flusher flusher(o.flush_bytes, o.flush_read);
    const ClockProbe probe(info.machine);
    Runner run{o, info, stream, lt, flusher, probe, {}, false, {}};
    // --sweep: every problem's configs planned and their kernels compiled before anything is timed.
    std::vector<ProblemSweep> sweeps;
    std::optional<SweepProgress> progress;
    if (o.sweep) {
      sweeps = plan_sweeps(problems, o.config, o.sweep_limit, info.facts);
      warm_sweep_kernels(problems, sweeps, o.config, info.facts);
      size_t total = 0;
      for (const ProblemSweep& s : sweeps) total += s.skipped.empty() ? s.sweep.configs.size() : 0;
      run.sweeps = &sweeps;
      run.progress = &progress.emplace(total);
    }

    std::fputs(table_header().c_str(), stdout);
    for (size_t i = 0; i < problems.size(); ++i) {
      if (o.show_plan) std::fputs(plan_report(problems[i], o.config, info.facts, info.peaks).c_str(), stdout);
      run.problem(problems[i], i);
      if (!run.fatal.empty()) {
        std::printf("CUDA context lost (%s): stopping after %zu of %zu problems\n", run.fatal.c_str(), i + 1,
                    problems.size());
        info.note = "stopped early, CUDA context lost: " + run.fatal;
        break;
      }
    }
    if (progress) progress->finish();
    std::fputs(summary_text(run.rows).c_str(), stdout);
    if (!o.json_path.empty() && !write_json(o.json_path, info, run.rows, {})) code = 1;
    if (!o.markdown_path.empty() && !write_markdown(o.markdown_path, info, run.rows)) code = 1;
    if (run.any_fail || !run.fatal.empty()) code = 1;
  }
  if (info.note.empty()) cudaStreamDestroy(stream);  // a lost context cannot destroy anything
  return code;
}

}  // namespace tilecast::bench
