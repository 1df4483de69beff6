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
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {
namespace {

// Elements the marker kernel copies: the smallest launch, one block.
constexpr int64_t kMarkerElems = 256;

// One measured row: cuBLAS or one tilecast config of one problem.
struct McastRow {
  BenchProblem problem;
  std::string label;    // "cuBLAS" or McastConfig::label
  std::string config;   // the GemmConfig text, or cuBLAS's algorithm
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

double tflops_of(const McastRow& r) {
  return r.timed && r.t.median_us > 0 ? r.problem.flops() / (r.t.median_us * 1e-6) / 1e12 : 0;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string text_row(const McastRow& r, const McastRow* cublas) {
  char buf[400];
  const EnergyResult& e = r.energy;
  const double x_time = cublas && cublas->timed && r.timed ? cublas->t.median_us / r.t.median_us : 0;
  const double x_energy =
      cublas && cublas->energy.valid && e.valid && e.mj_per_gemm > 0 ? cublas->energy.mj_per_gemm / e.mj_per_gemm : 0;
  std::snprintf(buf, sizeof buf, "%-16s %-14s %9s %7s %6s | %9s %6s %6s %8s | %8s %8s | %6s %6s %s\n",
                r.problem.label().c_str(), r.label.c_str(), r.timed ? fmt("%.1f", r.t.median_us).c_str() : "-",
                r.timed ? fmt("%.1f", tflops_of(r)).c_str() : "-",
                r.timed && r.t.during.valid ? std::to_string(r.t.during.sm_mhz).c_str() : "-",
                e.valid ? fmt("%.1f", e.gpu_us_per_gemm).c_str() : "-", e.valid ? fmt("%.0f", e.mean_sm_mhz).c_str() : "-",
                e.valid ? fmt("%.0f", e.avg_w).c_str() : "-", e.valid ? fmt("%.2f", e.mj_per_gemm).c_str() : "-",
                r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes / 1e9).c_str() : "-",
                r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes_unicast / 1e9).c_str() : "-",
                x_time > 0 ? fmt("%.3f", x_time).c_str() : "-", x_energy > 0 ? fmt("%.3f", x_energy).c_str() : "-",
                r.is_cublas ? "" : (r.verified ? (r.verify_pass ? "PASS" : "FAIL") : "-"));
  std::string s = buf;
  if (r.status != "ok") s += "    " + r.status + ": " + r.detail + "\n";
  if (!r.energy.valid && !r.energy.why_not.empty()) s += "    energy: " + r.energy.why_not + "\n";
  return s;
}

std::string text_header() {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%-16s %-14s %9s %7s %6s | %9s %6s %6s %8s | %8s %8s | %6s %6s %s\n", "problem", "config",
                "us flush", "TFLOPS", "MHz", "us sust.", "MHz", "W", "mJ/GEMM", "model GB", "unicast", "x time",
                "x J", "check");
  return buf;
}

class Runner {
 public:
  Runner(const Options& o, RunInfo& info) : o_(o), info_(info), facts_(mcast_facts(info.machine.has_gpu ? info.machine.sm_count : 0, info.machine.gpu_name)) {}

  int run(const std::vector<BenchProblem>& problems) {
    TC_CUDA_CHECK(cudaSetDevice(o_.device));
    TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    {
      test::CublasLt lt;
      const L2Flusher flusher(o_.flush_bytes);
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
      const std::vector<GemmKernelSpec> specs = api::kernels_to_warm(items, facts_);
      const std::vector<api::WarmedKernel> done =
          api::warm_jit_cache(specs, std::max(1u, std::thread::hardware_concurrency()));
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
    std::vector<Enqueue> calls;        // cuBLAS first, then the configs that ran
    std::vector<size_t> call_rows;     // the row of each call
    try {
      w = make_workload(p, seed, stream_);
      cublas = std::make_unique<CublasBaseline>(lt, p, *w);
      cublas->run_reference(stream_);
      TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      McastRow& r = rows.emplace_back(base);
      r.label = "cuBLAS";
      r.is_cublas = true;
      r.status = "ok";
      r.config = cublas->variants().front().algo;
      calls.push_back(cublas->variants().front().run);
      call_rows.push_back(0);
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
        test::poison(w->d_tilecast, stream_);
        if (call.reset) call.reset(stream_);
        call.run(stream_);
        TC_CUDA_CHECK(cudaStreamSynchronize(stream_));
        TC_CUDA_CHECK(cudaGetLastError());
        if (have_reference) {
          const test::WriteCheck written =
              test::check_written(w->d_tilecast, w->d_tilecast.view, w->rows_per_batch, stream_);
          const test::CompareResult cmp = test::compare(w->d_tilecast.view, w->d_check.view, stream_, w->rows_per_batch);
          r.verified = true;
          r.verify_pass = written.ok() && test::passes(cmp, test::default_tolerance(p.out, DType::kFP32));
          r.rel_fro_error = cmp.rel_fro_error;
          if (!r.verify_pass) {
            any_fail_ = true;
            r.detail = test::failure_reason(cmp, test::default_tolerance(p.out, DType::kFP32)) +
                       (written.ok() ? "" : " | " + written.summary());
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
        const std::vector<TimingStats> t = time_interleaved(calls, stream_, flusher, o_.warmup, o_.iters, &probe);
        for (size_t j = 0; j < calls.size(); ++j) {
          rows[call_rows[j]].t = t[j];
          rows[call_rows[j]].timed = true;
        }
        // One config after another: each loop starts from the clocks the previous one left,
        // which under the cap are the sustained ones.
        if (o_.energy_s > 0)
          for (size_t j = 0; j < calls.size(); ++j) {
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
  void profile_pass(const std::vector<Enqueue>& calls, const std::vector<size_t>& call_rows, std::vector<McastRow>& rows) {
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

  void machine_json(JsonWriter& j) const {
    const MachineInfo& m = info_.machine;
    j.key("machine").begin_object();
    j.field("gpu_name", m.gpu_name).field("pci_bus_id", m.pci_bus_id).field("sm_count", m.sm_count);
    j.field("l2_bytes", static_cast<int64_t>(m.l2_bytes));
    j.field("driver_version", m.driver_version).field("cuda_runtime", m.cuda_runtime);
    j.field("cublaslt", m.cublaslt_version);
    j.field("sm_clock_mhz", m.sm_clock_mhz).field("max_sm_clock_mhz", m.max_sm_clock_mhz);
    j.field("power_limit_w", m.power_limit_w).field("temperature_c", m.temperature_c);
    j.field("hostname", m.hostname).field("date_utc", m.date_utc);
    j.field("command_line", m.command_line).field("git_commit_at_configure", m.git_commit);
    j.end_object();
  }

  bool write_json(const std::string& path) const {
    JsonWriter j;
    j.begin_object();
    j.field("tool", "tilecast-bench").field("mode", o_.ncu_pass ? "mcast-ncu-pass" : "mcast").field("schema", 1);
    machine_json(j);
    j.key("options").begin_object();
    j.field("warmup", info_.warmup).field("iters", info_.iters);
    j.field("l2_flush_bytes", static_cast<int64_t>(info_.flush_bytes)).field("energy_s", o_.energy_s);
    j.field("ncu_pass", o_.ncu_pass).field("profile_range", kProfileRange).field("marker_kernel", kMarkerKernel);
    j.end_object();
    if (!info_.note.empty()) j.field("note", info_.note);
    j.key("rows").begin_array();
    for (const McastRow& r : rows_) {
      j.begin_object();
      j.field("problem", r.problem.label()).field("m", static_cast<int64_t>(r.problem.m));
      j.field("n", static_cast<int64_t>(r.problem.n)).field("k", static_cast<int64_t>(r.problem.k));
      j.field("flops", r.problem.flops()).field("why", mcast_tile_reason(r.problem));
      j.field("label", r.label).field("is_cublas", r.is_cublas).field("config", r.config);
      j.field("status", r.status).field("detail", r.detail);
      j.field("verified", r.verified).field("verify_pass", r.verify_pass).field("rel_fro_error", r.rel_fro_error);
      j.field("profile_index", r.profile_index);
      j.key("flushed").begin_object();
      j.field("timed", r.timed);
      if (r.timed) {
        j.field("iters", r.t.iters).field("median_us", r.t.median_us).field("p10_us", r.t.p10_us);
        j.field("p90_us", r.t.p90_us).field("tflops", tflops_of(r));
        j.field("sm_clock_mhz", r.t.during.valid ? static_cast<int64_t>(r.t.during.sm_mhz) : 0);
        j.field("power_w", r.t.during.power_w);
      }
      j.end_object();
      const EnergyResult& e = r.energy;
      j.key("sustained").begin_object();
      j.field("valid", e.valid);
      if (!e.why_not.empty()) j.field("why_not", e.why_not);
      if (e.gemms > 0) {
        j.field("gemms", e.gemms).field("window_s", e.window_s).field("us_per_gemm", e.gpu_us_per_gemm);
        j.field("joules", e.joules).field("mj_per_gemm", e.mj_per_gemm).field("avg_w", e.avg_w);
        j.field("mean_sm_mhz", e.mean_sm_mhz).field("min_sm_mhz", e.min_sm_mhz).field("max_sm_mhz", e.max_sm_mhz);
        j.field("mean_power_w", e.mean_power_w).field("samples", e.samples);
        j.field("counter_updates", e.counter_updates).field("counter_period_ms", e.counter_period_ms);
      }
      j.end_object();
      j.key("model").begin_object();
      j.field("ok", r.model.ok);
      if (r.model.ok) {
        j.field("l2_to_sm_bytes", static_cast<int64_t>(r.model.l2_to_sm_bytes));
        j.field("l2_to_sm_bytes_unicast", static_cast<int64_t>(r.model.l2_to_sm_bytes_unicast));
        j.field("sms", static_cast<int64_t>(r.model.sms)).field("companion", r.model.companion);
        j.field("plan", r.model.plan);
      } else if (!r.is_cublas) {
        j.field("why_not", r.model.why_not);
      }
      j.end_object();
      j.end_object();
    }
    j.end_array();
    j.end_object();
    std::ofstream f(path);
    f << j.str() << "\n";
    if (!f) std::fprintf(stderr, "tilecast-bench: cannot write %s\n", path.c_str());
    return static_cast<bool>(f);
  }

  bool write_markdown(const std::string& path) const {
    const MachineInfo& m = info_.machine;
    std::ostringstream s;
    s << "# tilecast-bench --suite mcast: what multicast is worth\n\n";
    s << "| | |\n|---|---|\n";
    s << "| GPU | " << m.gpu_name << ", " << m.sm_count << " SMs, L2 " << (m.l2_bytes >> 20) << " MiB, power limit "
      << m.power_limit_w << " W |\n";
    s << "| driver | " << m.driver_version << ", runtime " << m.cuda_runtime << ", " << m.cublaslt_version << " |\n";
    s << "| date (UTC) | " << m.date_utc << " |\n";
    s << "| command | `" << m.command_line << "` |\n";
    s << "| tilecast commit (at configure) | " << m.git_commit << " |\n";
    s << "| flushed | median of " << info_.iters << " calls after " << info_.warmup << " warm-up, "
      << (info_.flush_bytes >> 20) << " MiB written before each, cuBLAS and every config in turn (timing.hpp) |\n";
    s << "| sustained | " << o_.energy_s
      << " s of back-to-back calls per config (after 0.5 s unmeasured), no flush: us per GEMM from CUDA events, "
         "SM clock sampled every 10 ms, joules from NVML's total-energy counter read by host callbacks at the "
         "window's ends, W = joules / window |\n";
    s << "| model | the planner's L2 -> SM operand bytes for the plan that ran (multicast counted once; unicast: "
         "every CTA loads its own); with the companion, main's clusters only |\n";
    if (!info_.note.empty()) s << "| note | " << info_.note << " |\n";
    std::string last;
    for (const McastRow& r : rows_)
      if (r.problem.label() != last) {
        last = r.problem.label();
        const std::string why = mcast_tile_reason(r.problem);
        if (!why.empty()) s << "| " << last << " | " << why << " |\n";
      }
    s << "\n| problem | config | plan | SMs | flushed us | TFLOPS | MHz | sustained us | MHz | W | mJ/GEMM | "
         "x cuBLAS time | x cuBLAS J | model L2->SM GB | unicast GB | check |\n";
    s << "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
    const McastRow* cublas = nullptr;
    for (const McastRow& r : rows_) {
      if (r.is_cublas) cublas = &r;
      const EnergyResult& e = r.energy;
      const bool same = cublas && cublas->problem.label() == r.problem.label();
      const double xt = same && cublas->timed && r.timed ? cublas->t.median_us / r.t.median_us : 0;
      const double xe = same && cublas->energy.valid && e.valid ? cublas->energy.mj_per_gemm / e.mj_per_gemm : 0;
      std::string plan = r.is_cublas ? r.config : r.model.plan;
      for (char& c : plan)
        if (c == '|') c = '/';
      s << "| " << r.problem.label() << " | " << r.label << " | " << plan << " | "
        << (r.model.ok ? std::to_string(r.model.sms) : "-") << " | "
        << (r.timed ? fmt("%.1f", r.t.median_us) : "-") << " | " << (r.timed ? fmt("%.1f", tflops_of(r)) : "-")
        << " | " << (r.timed && r.t.during.valid ? std::to_string(r.t.during.sm_mhz) : "-") << " | "
        << (e.valid ? fmt("%.1f", e.gpu_us_per_gemm) : "-") << " | " << (e.valid ? fmt("%.0f", e.mean_sm_mhz) : "-")
        << " | " << (e.valid ? fmt("%.0f", e.avg_w) : "-") << " | " << (e.valid ? fmt("%.2f", e.mj_per_gemm) : "-")
        << " | " << (xt > 0 ? fmt("%.3f", xt) : "-") << " | " << (xe > 0 ? fmt("%.3f", xe) : "-") << " | "
        << (r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes / 1e9) : "-") << " | "
        << (r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes_unicast / 1e9) : "-") << " | "
        << (r.is_cublas ? "reference" : r.verified ? (r.verify_pass ? "PASS" : "FAIL") : r.status) << " |\n";
    }
    std::ofstream f(path);
    f << s.str();
    if (!f) std::fprintf(stderr, "tilecast-bench: cannot write %s\n", path.c_str());
    return static_cast<bool>(f);
  }
};

}  // namespace

bool wants_multicast_worth(const Options& o) {
  if (o.ncu_pass) return true;
  for (const std::string& s : o.suites)
    if (s == "mcast") return true;
  return false;
}

int run_multicast_worth(const Options& o, const std::vector<BenchProblem>& problems, RunInfo& info) {
  for (const BenchProblem& p : problems)
    if (p.kind != Kind::kDense)
      throw std::invalid_argument("--suite mcast and --ncu-pass take dense problems only, got " + p.label());
  std::printf("mcast: %s\n", o.ncu_pass ? "one call per config inside the NVTX range tilecast_mcast_profile, "
                                          "each after a copy_convert_kernel marker, one more after the last (for ncu)"
                                        : "flushed median, then a sustained loop per config for clocks and energy");
  Runner r(o, info);
  return r.run(problems);
}

}  // namespace tilecast::bench
