#include "multicast_worth.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <cuda_runtime.h>

#include "api/warm.hpp"

#include "cublas_runner.hpp"
#include "energy.hpp"
#include "gemm_config.hpp"
#include "json_writer.hpp"
#include "problem_desc.hpp"
#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast_runner.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/fill.hpp"
#include "interleave.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {
namespace {

// Elements the marker kernel copies: the smallest launch, one block.
constexpr int64_t kMarkerElems = 256;

class Runner {
 public:
  Runner(const Options& o, RunInfo& info)
      : o_(o),
        info_(info),
        facts_(info.facts) {}

  int run(const std::vector<BenchProblem>& problems) {
    TC_CUDA_CHECK(cudaSetDevice(o_.device));
    TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    {
      test::CublasLt lt;
      const L2Flusher flusher(o_.flush_bytes, o_.flush_read);
      const ClockProbe probe(info_.machine);
      const EnergyMeter meter(info_.machine.pci_bus_id);
      if (!o_.ncu_pass && o_.energy_s > 0 && !meter.available())
        std::printf("energy: %s (the energy columns stay empty)\n", meter.why_unavailable().c_str());
      warm(problems);
      std::fputs(text_header().c_str(), stdout);
      for (size_t i = 0; i < problems.size() && fatal_.empty(); ++i) problem(problems[i], i, lt, flusher, probe, meter);
      if (!fatal_.empty()) {
        std::printf("CUDA context lost (%s): stopping\n", fatal_.c_str());
        info_.note = "stopped early, CUDA context lost: " + fatal_;
      }
    }
    int code = any_fail_ || !fatal_.empty() ? 1 : 0;
    if (!o_.json_path.empty() && !write_json(o_.json_path)) code = 1;
    if (!o_.markdown_path.empty() && !write_markdown(o_.markdown_path)) code = 1;
    if (fatal_.empty()) cudaStreamDestroy(stream_);
    return code;
  }

 private:
  const Options& o_;
  RunInfo& info_;
  plan::DeviceFacts facts_;
  cudaStream_t stream_ = nullptr;
  std::vector<McastRow> rows_;
  bool any_fail_ = false;
  std::string fatal_;
  int profiled_ = 0;

  // Every kernel of every row compiled first, in parallel, so that NVRTC stays out of the run
  // (about a second per kernel, one at a time, otherwise).
  void warm(const std::vector<BenchProblem>& problems) const {
    std::vector<api::WarmItem> items;
    for (const BenchProblem& p : problems)
      for (const McastConfig& mc : configs_for(p)) items.push_back({problem_desc(p), mc.config});
    const auto t0 = std::chrono::steady_clock::now();
    try {
      std::vector<api::WarmKernel> others;
      const std::vector<GemmKernelSpec> specs = api::kernels_to_warm(items, facts_, &others);
      const std::vector<api::WarmedKernel> done = api::warm_jit_cache(
          specs, std::max(1u, std::thread::hardware_concurrency()), {}, others);
      int compiled = 0;
      for (const api::WarmedKernel& k : done) compiled += !k.from_cache;
      std::printf("mcast: %zu rows, %zu kernels (%d compiled) in %.1f s\n", items.size(), done.size(), compiled,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    } catch (const std::exception& e) {
      // Each call compiles what it lacks, and says so, if warming failed.
      std::printf("mcast: warming the JIT cache failed (%s)\n", e.what());
    }
    std::fflush(stdout);
  }

  bool context_lost() {
    cudaGetLastError();
    const cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess) return false;
    fatal_ = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return true;
  }

  std::vector<McastConfig> configs_for(const BenchProblem& p) const {
    if (p.suite == "mcast") return mcast_configs(p, facts_);
    return {McastConfig{describe(o_.config), o_.config}};
  }

  void problem(const BenchProblem& p, size_t index, test::CublasLt& lt, const L2Flusher& flusher,
               const ClockProbe& probe, const EnergyMeter& meter) {
    const uint64_t seed = o_.seed_given ? o_.seed + index : test::fresh_seed();
    std::vector<McastRow> rows;
    McastRow base;
    base.problem = p;
    std::unique_ptr<Workload> w;
    std::unique_ptr<CublasBaseline> cublas;
    std::vector<Enqueue> calls;     // cuBLAS's variants first, then the configs that ran
    std::vector<size_t> call_rows;  // the row of each call
    std::vector<BaselineVariant> baselines;  // calls[0, baselines.size()): cuBLAS's row
    try {
      w = make_workload(p, seed, stream_);
      cublas = std::make_unique<CublasBaseline>(lt, p, *w);
      cublas->run_reference(stream_);
      TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      McastRow& r = rows.emplace_back(base);
      r.label = "cuBLAS";
      r.is_cublas = true;
      r.status = "ok";
      // The cuBLAS column's variants (one for dense problems; a grouped one's loop, strided batch
      // and grouped batched call): all are timed, the fastest is the row, as in the bench's table.
      // --ncu-pass profiles the first only.
      for (const BaselineVariant& v : cublas->variants()) {
        if (!v.group.empty() || (o_.ncu_pass && !calls.empty())) continue;
        calls.push_back(v.run);
        call_rows.push_back(0);
        baselines.push_back(v);
      }
      r.config = cublas->variants().front().algo;
    } catch (const std::exception& e) {
      McastRow& r = rows.emplace_back(base);
      r.label = "cuBLAS";
      r.is_cublas = true;
      r.status = "error";
      r.detail = e.what();
      if (context_lost() || !w) return flush_rows(rows);
    }
    const bool have_reference = !calls.empty();

    for (const McastConfig& mc : configs_for(p)) {
      McastRow& r = rows.emplace_back(base);
      r.label = mc.label;
      r.config = describe(mc.config);
      r.model = traffic_model(p, mc.config, facts_);
      const TilecastCall call = make_tilecast_call(p, *w, mc.config);
      if (!call.run) {
        r.detail = call.unavailable;
        continue;
      }
      try {
        const CheckedCall checked = run_checked(call, p, *w, have_reference, stream_);
        if (checked.verified) {
          r.verified = true;
          r.verify_pass = checked.passed();
          r.rel_fro_error = checked.cmp.rel_fro_error;
          if (!r.verify_pass) {
            any_fail_ = true;
            r.detail = test::failure_reason(checked.cmp, checked.tol) +
                       (checked.written.ok() ? "" : " | " + checked.written.summary());
          }
        }
        r.status = "ok";
        calls.push_back(call.run);
        call_rows.push_back(rows.size() - 1);
      } catch (const std::exception& e) {
        r.status = "error";
        r.detail = e.what();
        if (context_lost()) return flush_rows(rows);
      }
    }

    try {
      if (o_.ncu_pass) {
        profile_pass(calls, call_rows, rows);
      } else {
        const std::vector<TimingStats> t =
            time_interleaved(calls, stream_, flusher, o_.warmup, o_.iters, &probe, o_.balanced_order,
                             /*calls_per_run=*/1, o_.min_ms, relabel_seed(seed));
        // cuBLAS's row: the fastest of its variants (all in the cuBLAS column's group "").
        const size_t baseline =
            baselines.empty() ? 0 : static_cast<size_t>(fastest_per_group(baselines, t).front().variant - baselines.data());
        std::vector<size_t> measured;  // the calls whose times the rows keep
        for (size_t j = 0; j < calls.size(); ++j) {
          if (j < baselines.size() && j != baseline) continue;
          measured.push_back(j);
          rows[call_rows[j]].t = t[j];
          rows[call_rows[j]].timed = true;
        }
        if (baselines.size() > 1) rows[0].config = baselines[baseline].name + ": " + baselines[baseline].algo;
        // One config after another: each loop starts from the clocks the previous one left,
        // which under the cap are the sustained ones.
        if (o_.energy_s > 0)
          for (size_t j : measured) {
            EnergyLoop loop;
            loop.seconds = o_.energy_s;
            loop.est_us = t[j].median_us;
            rows[call_rows[j]].energy = measure_energy(calls[j], stream_, meter, loop);
          }
      }
    } catch (const std::exception& e) {
      for (size_t j : call_rows) {
        rows[j].status = "error";
        rows[j].detail = std::string(o_.ncu_pass ? "profile pass: " : "timing: ") + e.what();
      }
      context_lost();
    }
    flush_rows(rows);
  }

  // Each call once, after a marker kernel, and one more marker after the last, inside
  // kProfileRange: what ncu profiles. The closing marker lets the report cut the kernels into
  // calls even when ncu profiles more than the range (scripts/multicast_counters.sh's fallback).
  void profile_pass(const std::vector<Enqueue>& calls, const std::vector<size_t>& call_rows,
                    std::vector<McastRow>& rows) {
    const test::DeviceMatrix from = test::make_matrix(DType::kFP32, 1, kMarkerElems);
    const test::DeviceMatrix to = test::make_matrix(DType::kFP32, 1, kMarkerElems);
    auto marker = [&] { test::copy_convert(from.view, to.view, stream_); };
    TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    nvtxRangePushA(kProfileRange);
    for (size_t j = 0; j < calls.size(); ++j) {
      marker();
      calls[j](stream_);
      // One call's kernels at a time: ncu serializes them anyway, and a failure names its call.
      TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      rows[call_rows[j]].profile_index = profiled_++;
    }
    marker();
    TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    nvtxRangePop();
    TC_CUDA_CHECK(cudaGetLastError());
  }

  void flush_rows(std::vector<McastRow>& rows) {
    const McastRow* cublas = !rows.empty() && rows.front().is_cublas ? &rows.front() : nullptr;
    for (const McastRow& r : rows) std::fputs(text_row(r, cublas).c_str(), stdout);
    std::fflush(stdout);
    for (McastRow& r : rows) rows_.push_back(std::move(r));
    // The files after every problem, so that a run stopped by a time limit keeps what it measured.
    if (!o_.json_path.empty()) write_json(o_.json_path);
    if (!o_.markdown_path.empty()) write_markdown(o_.markdown_path);
  }

  bool write_json(const std::string& path) const { return write_text(path, mcast_json(rows_, info_, mcast_options())); }
  bool write_markdown(const std::string& path) const {
    return write_text(path, mcast_markdown(rows_, info_, mcast_options()));
  }
  McastRunOptions mcast_options() const { return {o_.ncu_pass, o_.energy_s}; }
};

}  // namespace

bool wants_multicast_worth(const Options& o) {
  if (o.ncu_pass || o.sustained) return true;
  for (const std::string& s : o.suites)
    if (s == "mcast") return true;
  return false;
}

int run_multicast_worth(const Options& o, const std::vector<BenchProblem>& problems, RunInfo& info) {
  // --sustained measures any problem; --suite mcast's configs and --ncu-pass's markers are dense.
  for (const BenchProblem& p : problems)
    if (p.kind != Kind::kDense && (o.ncu_pass || !o.sustained))
      throw std::invalid_argument("--suite mcast and --ncu-pass take dense problems only, got " + p.label());
  std::printf("mcast: %s\n", o.ncu_pass ? "one call per config inside the NVTX range tilecast_mcast_profile, "
                                          "each after a copy_convert_kernel marker, one more after the last (for ncu)"
                                        : "flushed median, then a sustained loop per config for clocks and energy");
  Runner r(o, info);
  return r.run(problems);
}

}  // namespace tilecast::bench
