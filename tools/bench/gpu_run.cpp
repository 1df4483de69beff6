#include "gpu_run.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include "cublas_runner.hpp"
#include "gemm_config.hpp"
#include "multicast_worth.hpp"
#include "plan_report.hpp"
#include "tilecast_runner.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/fill.hpp"
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
        o.cluster_compare ? cluster_compare_configs(o.config)
        : o.split_compare ? split_compare_configs(o.config)
                          : std::vector<GemmConfig>{o.config};
    std::vector<Row> rows;
    std::vector<Enqueue> timed;      // the cuBLAS variants first, then the configs that ran
    std::vector<Row*> timed_rows;    // the row of each timed config
    if (have_reference)
      for (const BaselineVariant& v : cublas->variants()) timed.push_back(v.run);
    const size_t num_baselines = timed.size();
    rows.reserve(configs.size());
    for (const GemmConfig& cfg : configs) {
      Row& r = rows.emplace_back(base);
      r.config = describe(cfg);
      const TilecastCall call = make_tilecast_call(p, *w, cfg);
      if (!call.run) {
        r.tilecast_status = "unavailable";
        r.tilecast_detail = call.unavailable;
        continue;
      }
      try {
        test::poison(w->d_tilecast, stream);
        if (call.reset) call.reset(stream);
        call.run(stream);
        TC_CUDA_CHECK(cudaStreamSynchronize(stream));
        TC_CUDA_CHECK(cudaGetLastError());
        if (have_reference) {
          r.written = test::check_written(w->d_tilecast, w->d_tilecast.view, w->rows_per_batch, stream);
          r.cmp = test::compare(w->d_tilecast.view, w->d_check.view, stream, w->rows_per_batch);
          r.tol = test::default_tolerance(p.out, DType::kFP32);
          r.verified = true;
          r.verify_pass = r.written.ok() && test::passes(r.cmp, r.tol);
        }
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
        const std::vector<TimingStats> t = p.host_time ? time_host_enqueue(timed, stream, kHostRounds, kHostCalls)
                                                       : time_interleaved(timed, stream, flusher, o.warmup, o.iters, &probe);
        for (size_t j = 0; j < num_baselines; ++j) {
          const BaselineVariant& v = cublas->variants()[j];
          if (!base.cublas.ran || t[j].median_us < base.cublas.t.median_us) {
            base.cublas.t = t[j];
            base.cublas.ran = true;
            base.cublas_variant = v.name;
            base.cublas_algo = v.algo;
          }
        }
        if (base.cublas.ran) finish(base.cublas, p, base.roofline);
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
      emit(std::move(r));
    }
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
    const L2Flusher flusher(o.flush_bytes);
    const ClockProbe probe(info.machine);
    Runner run{o, info, stream, lt, flusher, probe, {}, false, {}};

    std::fputs(table_header().c_str(), stdout);
    for (size_t i = 0; i < problems.size(); ++i) {
      if (o.show_plan) std::fputs(plan_report(problems[i], o.config, info.peaks).c_str(), stdout);
      run.problem(problems[i], i);
      if (!run.fatal.empty()) {
        std::printf("CUDA context lost (%s): stopping after %zu of %zu problems\n", run.fatal.c_str(), i + 1,
                    problems.size());
        info.note = "stopped early, CUDA context lost: " + run.fatal;
        break;
      }
    }
    std::fputs(summary_text(run.rows).c_str(), stdout);
    if (!o.json_path.empty() && !write_json(o.json_path, info, run.rows, {})) code = 1;
    if (!o.markdown_path.empty() && !write_markdown(o.markdown_path, info, run.rows)) code = 1;
    if (run.any_fail || !run.fatal.empty()) code = 1;
  }
  if (info.note.empty()) cudaStreamDestroy(stream);  // a lost context cannot destroy anything
  return code;
}

}  // namespace tilecast::bench
