#include "multicast_output.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "json_writer.hpp"

namespace tilecast::bench {

double tflops_of(const McastRow& r) {
  return r.timed && r.t.median_us > 0 ? r.problem.flops() / (r.t.median_us * 1e-6) / 1e12 : 0;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

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
                e.valid ? fmt("%.1f", e.gpu_us_per_gemm).c_str() : "-",
                e.valid ? fmt("%.0f", e.mean_sm_mhz).c_str() : "-", e.valid ? fmt("%.0f", e.avg_w).c_str() : "-",
                e.valid ? fmt("%.2f", e.mj_per_gemm).c_str() : "-",
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
  std::snprintf(buf, sizeof buf, "%-16s %-14s %9s %7s %6s | %9s %6s %6s %8s | %8s %8s | %6s %6s %s\n", "problem",
                "config", "us flush", "TFLOPS", "MHz", "us sust.", "MHz", "W", "mJ/GEMM", "model GB", "unicast",
                "x time", "x J", "check");
  return buf;
}

namespace {

void machine_json(JsonWriter& j, const RunInfo& info) {
  const MachineInfo& m = info.machine;
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

}  // namespace

std::string mcast_json(const std::vector<McastRow>& rows, const RunInfo& info, const McastRunOptions& o) {
  JsonWriter j;
  j.begin_object();
  j.field("tool", "tilecast-bench").field("mode", o.ncu_pass ? "mcast-ncu-pass" : "mcast").field("schema", 1);
  machine_json(j, info);
  j.key("options").begin_object();
  j.field("warmup", info.warmup).field("iters", info.iters);
  j.field("l2_flush_bytes", static_cast<int64_t>(info.flush_bytes)).field("energy_s", o.energy_s);
  j.field("ncu_pass", o.ncu_pass).field("profile_range", kProfileRange).field("marker_kernel", kMarkerKernel);
  j.end_object();
  if (!info.note.empty()) j.field("note", info.note);
  j.key("rows").begin_array();
  for (const McastRow& r : rows) {
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
  return j.str() + "\n";
}

std::string mcast_markdown(const std::vector<McastRow>& rows, const RunInfo& info, const McastRunOptions& o) {
  const MachineInfo& m = info.machine;
  std::ostringstream s;
  s << "# tilecast-bench --suite mcast: what multicast is worth\n\n";
  s << "| | |\n|---|---|\n";
  s << "| GPU | " << m.gpu_name << ", " << m.sm_count << " SMs, L2 " << (m.l2_bytes >> 20) << " MiB, power limit "
    << m.power_limit_w << " W |\n";
  s << "| driver | " << m.driver_version << ", runtime " << m.cuda_runtime << ", " << m.cublaslt_version << " |\n";
  s << "| date (UTC) | " << m.date_utc << " |\n";
  s << "| command | `" << m.command_line << "` |\n";
  s << "| tilecast commit (at configure) | " << m.git_commit << " |\n";
  s << "| flushed | median of " << info.iters << " calls after " << info.warmup << " warm-up, "
    << (info.flush_bytes >> 20) << " MiB " << (info.flush_read ? "read" : "written")
    << " before each, cuBLAS and every config in turn (timing.hpp) |\n";
  s << "| sustained | " << o.energy_s
    << " s of back-to-back calls per config (after 0.5 s unmeasured), no flush: us per GEMM from CUDA events, "
       "SM clock sampled every 10 ms, joules from NVML's total-energy counter read by host callbacks at the "
       "window's ends, W = joules / window |\n";
  s << "| model | the planner's L2 -> SM operand bytes for the plan that ran (multicast counted once; unicast: "
       "every CTA loads its own); with the companion, main's clusters only |\n";
  if (!info.note.empty()) s << "| note | " << info.note << " |\n";
  std::string last;
  for (const McastRow& r : rows)
    if (r.problem.label() != last) {
      last = r.problem.label();
      const std::string why = mcast_tile_reason(r.problem);
      if (!why.empty()) s << "| " << last << " | " << why << " |\n";
    }
  s << "\n| problem | config | plan | SMs | flushed us | TFLOPS | MHz | sustained us | MHz | W | mJ/GEMM | "
       "x cuBLAS time | x cuBLAS J | model L2->SM GB | unicast GB | check |\n";
  s << "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
  const McastRow* cublas = nullptr;
  for (const McastRow& r : rows) {
    if (r.is_cublas) cublas = &r;
    const EnergyResult& e = r.energy;
    const bool same = cublas && cublas->problem.label() == r.problem.label();
    const double xt = same && cublas->timed && r.timed ? cublas->t.median_us / r.t.median_us : 0;
    const double xe = same && cublas->energy.valid && e.valid ? cublas->energy.mj_per_gemm / e.mj_per_gemm : 0;
    std::string plan = r.is_cublas ? r.config : r.model.plan;
    for (char& c : plan)
      if (c == '|') c = '/';
    s << "| " << r.problem.label() << " | " << r.label << " | " << plan << " | "
      << (r.model.ok ? std::to_string(r.model.sms) : "-") << " | " << (r.timed ? fmt("%.1f", r.t.median_us) : "-")
      << " | " << (r.timed ? fmt("%.1f", tflops_of(r)) : "-") << " | "
      << (r.timed && r.t.during.valid ? std::to_string(r.t.during.sm_mhz) : "-") << " | "
      << (e.valid ? fmt("%.1f", e.gpu_us_per_gemm) : "-") << " | " << (e.valid ? fmt("%.0f", e.mean_sm_mhz) : "-")
      << " | " << (e.valid ? fmt("%.0f", e.avg_w) : "-") << " | " << (e.valid ? fmt("%.2f", e.mj_per_gemm) : "-")
      << " | " << (xt > 0 ? fmt("%.3f", xt) : "-") << " | " << (xe > 0 ? fmt("%.3f", xe) : "-") << " | "
      << (r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes / 1e9) : "-") << " | "
      << (r.model.ok ? fmt("%.3f", r.model.l2_to_sm_bytes_unicast / 1e9) : "-") << " | "
      << (r.is_cublas  ? "reference"
          : r.verified ? (r.verify_pass ? "PASS" : "FAIL")
                       : r.status)
      << " |\n";
  }
  // The same flushed timings in the bench's own columns (report.hpp), which tools read by suite.
  s << "\n## The flushed timings in the bench's columns (suite `mcast`)\n\n" << markdown_table_header();
  for (const Row& b : bench_rows(rows, info.peaks)) s << markdown_row(b, "mcast");
  return s.str();
}

std::vector<Row> bench_rows(const std::vector<McastRow>& rows, const Peaks& peaks) {
  std::vector<Row> out;
  const McastRow* cublas = nullptr;
  for (const McastRow& r : rows) {
    if (r.is_cublas) {
      cublas = &r;
      continue;
    }
    Row& b = out.emplace_back();
    b.problem = r.problem;
    b.roofline = roofline_of(r.problem, peaks);
    b.config = r.config;
    b.tilecast_status = r.status;
    b.tilecast_detail = r.detail;
    b.verified = r.verified;
    b.verify_pass = r.verify_pass;
    if (r.timed) {
      b.tilecast.t = r.t;
      finish(b.tilecast, b.problem, b.roofline);
    }
    if (cublas && cublas->problem.label() == r.problem.label()) {
      b.cublas_variant = "cublasLt";
      b.cublas_algo = cublas->config;
      if (cublas->timed) {
        b.cublas.t = cublas->t;
        finish(b.cublas, b.problem, b.roofline);
      }
    }
  }
  return out;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) std::fprintf(stderr, "tilecast-bench: cannot write %s\n", path.c_str());
  return static_cast<bool>(f);
}

}  // namespace tilecast::bench
