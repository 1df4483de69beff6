#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "json_writer.hpp"
#include "sweep_report.hpp"

namespace tilecast::bench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string us_or_dash(const Measurement& m) { return m.ran ? fmt("%.1f", m.t.median_us) : "-"; }
// A host-suite row has no FLOP rate: its time is the host's (finish() leaves the rates at 0).
std::string tflops_or_dash(const Measurement& m) { return m.ran && m.tflops > 0 ? fmt("%.1f", m.tflops) : "-"; }
std::string roof_or_dash(const Measurement& m) {
  return m.ran && m.roofline_fraction > 0 ? fmt("%.1f%%", 100.0 * m.roofline_fraction) : "-";
}

// What MISSION.md asks of each suite, checked on the rows that ran and passed.
struct SuiteSummary {
  int rows = 0, compared = 0, failed = 0;
  double log_speedup = 0, min_speedup = 0, min_roof = 0, sum_roof = 0;
};

std::map<std::string, SuiteSummary> summarize(const std::vector<Row>& rows) {
  std::map<std::string, SuiteSummary> out;
  for (const Row& r : rows) {
    // A sweep's forced configs and the odd-size diagnostics are not what the suite's targets are
    // about: the heuristic's call against what users (or careful users) get is.
    if (r.sweep || r.baseline_role == "diagnostic") continue;
    SuiteSummary& s = out[r.problem.suite];
    ++s.rows;
    if (r.verified && !r.verify_pass) ++s.failed;
    const double x = r.speedup();
    if (x <= 0 || !r.verify_pass) continue;
    s.min_speedup = s.compared ? std::min(s.min_speedup, x) : x;
    s.min_roof = s.compared ? std::min(s.min_roof, r.tilecast.roofline_fraction) : r.tilecast.roofline_fraction;
    ++s.compared;
    s.log_speedup += std::log(x);
    s.sum_roof += r.tilecast.roofline_fraction;
  }
  return out;
}

std::string target_of(const std::string& suite, const SuiteSummary& s) {
  if (!s.compared) return "-";
  const double geo = std::exp(s.log_speedup / s.compared);
  auto verdict = [](bool ok) { return ok ? " (met)" : " (NOT met)"; };
  if (suite == "dense") return std::string(">= 1.05x cuBLAS") + verdict(s.min_speedup >= 1.05);
  if (suite == "m4096")
    return std::string("geomean >= 1.15x, none < 0.95x") + verdict(geo >= 1.15 && s.min_speedup >= 0.95);
  if (suite == "m128") return std::string(">= 70% of roofline") + verdict(s.min_roof >= 0.70);
  if (suite == "mgrouped") return std::string("geomean >= 1.15x") + verdict(geo >= 1.15);
  if (suite == "host") return std::string("host time no slower than cublasLtMatmul") + verdict(s.min_speedup >= 1.0);
  if (suite == "masked") return std::string(">= 70% of roofline") + verdict(s.min_roof >= 0.70);
  if (suite == "splitk")  // issue #12 (rows of a --split-compare run count each config)
    return std::string(">= 70% of roofline and >= 1.0x") + verdict(s.min_roof >= 0.70 && s.min_speedup >= 1.0);
  if (suite == "nn" || suite == "tn" || suite == "tt")
    return std::string("none < 1.0x cuBLAS") + verdict(s.min_speedup >= 1.0);
  return "-";
}

void measurement_json(JsonWriter& j, const Measurement& m, bool rounds) {
  j.begin_object();
  j.field("ran", m.ran);
  if (m.ran) {
    j.field("iters", m.t.iters);
    j.field("median_us", m.t.median_us).field("min_us", m.t.min_us).field("mean_us", m.t.mean_us);
    j.field("p10_us", m.t.p10_us).field("p90_us", m.t.p90_us);
    j.field("tflops", m.tflops).field("tb_per_s", m.tb_per_s);
    j.field("roofline_fraction", m.roofline_fraction);
    j.field("host_bound", m.t.host_bound);
    j.field("host_us_per_iter", m.t.host_us_per_iter).field("gpu_us_per_iter_with_flush", m.t.gpu_us_per_iter);
    j.key("during").begin_object();
    j.field("valid", m.t.during.valid);
    j.field("sm_clock_mhz", m.t.during.sm_mhz).field("power_w", m.t.during.power_w);
    j.field("temperature_c", m.t.during.temperature_c);
    j.end_object();
    if (rounds) {  // --json-rounds: each timed run, in round order, and the loop it sat in
      j.key("loop").begin_object();
      j.field("index", static_cast<int64_t>(m.t.loop_index)).field("functions", static_cast<int64_t>(m.t.loop_functions));
      j.field("balanced", m.t.balanced).field("relabel", std::to_string(m.t.relabel));
      j.key("rounds_us").begin_array();
      for (double us : m.t.rounds_us) j.value(us);
      j.end_array();
      j.end_object();
    }
  }
  j.end_object();
}

void problem_json(JsonWriter& j, const BenchProblem& p, const Peaks& peaks) {
  const Roofline r = roofline_of(p, peaks);
  j.field("suite", p.suite).field("kind", kind_name(p.kind)).field("label", p.label());
  j.field("m", static_cast<int64_t>(p.m)).field("n", static_cast<int64_t>(p.n));
  j.field("k", static_cast<int64_t>(p.k)).field("groups", static_cast<int64_t>(p.groups));
  if (p.kind == Kind::kMasked) j.field("expected_m", static_cast<int64_t>(p.expected_m));
  if (!p.group_rows.empty()) {
    j.key("group_rows").begin_array();
    for (int64_t v : p.group_rows) j.value(static_cast<int64_t>(v));
    j.end_array();
  }
  if (!p.group_k.empty()) {
    j.key("group_k").begin_array();
    for (int64_t v : p.group_k) j.value(static_cast<int64_t>(v));
    j.end_array();
  }
  j.field("out_dtype", dtype_name(p.out)).field("with_c", p.with_c);
  j.field("flops", p.flops()).field("bytes", p.bytes());
  j.field("roofline_us", r.time_us()).field("roofline_bound", r.bound());
}

void machine_json(JsonWriter& j, const RunInfo& info) {
  const MachineInfo& m = info.machine;
  j.key("machine").begin_object();
  j.field("has_gpu", m.has_gpu);
  if (!m.has_gpu) j.field("no_gpu_reason", m.no_gpu_reason);
  j.field("gpu_name", m.gpu_name).field("pci_bus_id", m.pci_bus_id);
  j.field("compute_capability", std::to_string(m.cc_major) + "." + std::to_string(m.cc_minor));
  j.field("sm_count", m.sm_count);
  j.field("l2_bytes", static_cast<int64_t>(m.l2_bytes)).field("memory_bytes", static_cast<int64_t>(m.memory_bytes));
  j.field("driver_version", m.driver_version).field("cuda_driver_api", m.cuda_driver_api);
  j.field("cuda_runtime", m.cuda_runtime).field("cublaslt", m.cublaslt_version);
  j.field("sm_clock_mhz", m.sm_clock_mhz).field("max_sm_clock_mhz", m.max_sm_clock_mhz);
  j.field("mem_clock_mhz", m.mem_clock_mhz).field("max_mem_clock_mhz", m.max_mem_clock_mhz);
  j.field("power_limit_w", m.power_limit_w).field("temperature_c", m.temperature_c);
  j.field("clock_source", m.clock_source);
  j.field("hostname", m.hostname).field("date_utc", m.date_utc);
  j.field("command_line", m.command_line).field("git_commit_at_configure", m.git_commit);
  j.end_object();
}

}  // namespace

double Row::speedup() const {
  if (!cublas.ran || !tilecast.ran || tilecast.t.median_us <= 0) return 0;
  return cublas.t.median_us / tilecast.t.median_us;
}

std::string Row::check() const {
  if (!verified) return "-";
  return verify_pass ? "PASS" : "FAIL";
}

void finish(Measurement& m, const BenchProblem& p, const Roofline& r) {
  m.ran = true;
  if (p.host_time) return;  // host microseconds: no FLOP rate, no roofline
  const double s = m.t.median_us * 1e-6;
  m.tflops = s > 0 ? p.flops() / s / 1e12 : 0;
  m.tb_per_s = s > 0 ? p.bytes() / s / 1e12 : 0;
  m.roofline_fraction = m.t.median_us > 0 ? r.time_us() / m.t.median_us : 0;
}

std::string table_header() {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-9s %-24s %-22s %10s %7s %6s | %10s %7s %6s | %8s %-5s %6s\n", "suite",
                "problem (MxNxK)", "tilecast config", "tc us", "TFLOPS", "roof", "cuBLAS us", "TFLOPS",
                "roof", "x cuBLAS", "check", "SM MHz");
  return buf;
}

std::string table_row(const Row& r) {
  char buf[400];
  const double x = r.speedup();
  const Measurement& clocked = r.tilecast.ran ? r.tilecast : r.cublas;
  std::snprintf(buf, sizeof buf, "%-9s %-24s %-22s %10s %7s %6s | %10s %7s %6s | %8s %-5s %6s\n",
                r.problem.suite.c_str(), r.problem.label().c_str(), r.config.c_str(),
                us_or_dash(r.tilecast).c_str(), tflops_or_dash(r.tilecast).c_str(),
                roof_or_dash(r.tilecast).c_str(), us_or_dash(r.cublas).c_str(),
                tflops_or_dash(r.cublas).c_str(), roof_or_dash(r.cublas).c_str(),
                x > 0 ? fmt("%.3fx", x).c_str() : "-", r.check().c_str(),
                clocked.ran && clocked.t.during.valid ? std::to_string(clocked.t.during.sm_mhz).c_str() : "-");
  std::string s = buf;
  if (!r.baseline_role.empty()) s += "    ^ cuBLAS here: " + r.cublas_variant + " [" + r.baseline_role + "; " + r.cublas_algo + "]\n";
  if (!r.cublas_error.empty()) s += "    cuBLAS error: " + r.cublas_error + "\n";
  if (r.tilecast_status == "error") s += "    tilecast error: " + r.tilecast_detail + "\n";
  if (r.verified && !r.verify_pass)
    s += "    FAIL: " + test::failure_reason(r.cmp, r.tol) + (r.written.ok() ? "" : " | " + r.written.summary()) +
         "\n    " + r.cmp.summary() + "\n";
  for (const Measurement* m : {&r.tilecast, &r.cublas})
    if (m->ran && m->t.host_bound)
      s += std::string("    note: ") + (m == &r.tilecast ? "tilecast" : "cuBLAS") +
           " loop looked host-bound (" + fmt("%.1f", m->t.host_us_per_iter) + " us to enqueue vs " +
           fmt("%.1f", m->t.gpu_us_per_iter) + " us on the GPU per iteration): times may include launch gaps\n";
  return s;
}

std::string summary_text(const std::vector<Row>& rows) {
  std::ostringstream s;
  s << "summary (rows where tilecast ran and passed):\n";
  char buf[320];
  std::snprintf(buf, sizeof buf, "  %-9s %5s %8s %6s %11s %11s %11s  %s\n", "suite", "rows", "compared", "FAIL",
                "geomean x", "min x", "mean roof", "target (MISSION.md)");
  s << buf;
  for (const auto& [suite, ss] : summarize(rows)) {
    const double geo = ss.compared ? std::exp(ss.log_speedup / ss.compared) : 0;
    std::snprintf(buf, sizeof buf, "  %-9s %5d %8d %6d %11s %11s %11s  %s\n", suite.c_str(), ss.rows, ss.compared,
                  ss.failed, ss.compared ? fmt("%.3fx", geo).c_str() : "-",
                  ss.compared ? fmt("%.3fx", ss.min_speedup).c_str() : "-",
                  ss.compared ? fmt("%.1f%%", 100.0 * ss.sum_roof / ss.compared).c_str() : "-",
                  target_of(suite, ss).c_str());
    s << buf;
  }
  s << sweep_summary_text(rows);
  return s.str();
}

bool write_json(const std::string& path, const RunInfo& info, const std::vector<Row>& rows,
                const std::vector<BenchProblem>& plan_only_problems) {
  JsonWriter j;
  j.begin_object();
  j.field("tool", "tilecast-bench").field("schema", 1);
  machine_json(j, info);
  j.key("options").begin_object();
  j.field("gpu_mode", info.gpu_mode).field("warmup", info.warmup).field("iters", info.iters);
  j.field("min_loop_ms", info.min_ms);
  j.field("balanced_order", info.balanced_order);
  j.field("l2_flush_bytes", static_cast<int64_t>(info.flush_bytes));
  j.field("l2_flush_by", info.flush_read ? "read" : "write");
  j.field("calls_per_run", info.calls_per_run);
  j.field("timing", "median of per-iteration CUDA event times, cuBLAS and tilecast interleaved, L2 flushed before each iteration");
  j.field("peak_tflops", info.peaks.tflops).field("peak_tb_per_s", info.peaks.tb_per_s);
  j.field("peaks_source", info.peaks.source);
  j.field("speedup_definition", "cublas median time / tilecast median time (> 1: tilecast faster)");
  j.field("input_seed_base", static_cast<int64_t>(info.seed_base));
  j.end_object();
  if (!info.note.empty()) j.field("note", info.note);

  j.key("rows").begin_array();
  for (const Row& r : rows) {
    j.begin_object();
    problem_json(j, r.problem, info.peaks);
    j.field("tilecast_config", r.config);
    j.field("problem_index", static_cast<int64_t>(r.problem_index));
    if (r.sweep || r.predicted_us > 0) {
      j.key("sweep").begin_object();
      j.field("forced_config", r.sweep).field("heuristic_pick", r.heuristic_pick);
      j.field("serpentine_twin", r.serpentine_twin);
      j.field("model_rank", static_cast<int64_t>(r.sweep_rank)).field("predicted_us", r.predicted_us);
      j.end_object();
    }
    if (!r.baseline_role.empty()) j.field("baseline_role", r.baseline_role);
    j.field("input_seed", static_cast<int64_t>(r.seed));
    j.key("cublas").begin_object();
    j.field("variant", r.cublas_variant).field("algo", r.cublas_algo);
    if (!r.cublas_error.empty()) j.field("error", r.cublas_error);
    j.key("timing");
    measurement_json(j, r.cublas, info.json_rounds);
    j.end_object();
    j.key("tilecast").begin_object();
    j.field("status", r.tilecast_status).field("detail", r.tilecast_detail);
    j.key("timing");
    measurement_json(j, r.tilecast, info.json_rounds);
    j.key("verify").begin_object();
    j.field("done", r.verified);
    if (r.verified) {
      j.field("pass", r.verify_pass);
      j.field("rel_fro_error", r.cmp.rel_fro_error).field("max_abs_error", r.cmp.max_abs_error);
      j.field("max_abs_over_ref_rms", r.cmp.max_abs_over_rms);
      j.field("out_nonfinite", static_cast<int64_t>(r.cmp.out_nonfinite));
      j.field("bound_rel_fro", r.tol.rel_fro).field("bound_max_abs_over_rms", r.tol.max_abs_over_rms);
      j.field("unwritten", static_cast<int64_t>(r.written.unwritten));
      j.field("touched_outside", static_cast<int64_t>(r.written.touched));
      j.field("reference", "cuBLASLt, FP32 output");
    }
    j.end_object();
    j.end_object();
    j.field("speedup_vs_cublas", r.speedup());
    j.end_object();
  }
  j.end_array();

  if (!plan_only_problems.empty()) {
    j.key("planned_problems").begin_array();
    for (const BenchProblem& p : plan_only_problems) {
      j.begin_object();
      problem_json(j, p, info.peaks);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();

  std::ofstream f(path);
  f << j.str() << "\n";
  if (!f) {
    std::fprintf(stderr, "tilecast-bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

bool write_markdown(const std::string& path, const RunInfo& info, const std::vector<Row>& rows) {
  const MachineInfo& m = info.machine;
  std::ostringstream s;
  s << "# tilecast-bench results\n\n";
  s << "| | |\n|---|---|\n";
  if (m.has_gpu)
    s << "| GPU | " << m.gpu_name << ", sm_" << m.cc_major << m.cc_minor << ", " << m.sm_count << " SMs, L2 "
      << (m.l2_bytes >> 20) << " MiB, bus " << m.pci_bus_id << " |\n";
  else
    s << "| GPU | none (" << m.no_gpu_reason << ") |\n";
  s << "| driver | " << m.driver_version << " (CUDA driver API " << m.cuda_driver_api << "), runtime "
    << m.cuda_runtime << ", " << m.cublaslt_version << " |\n";
  s << "| clocks at start | SM " << m.sm_clock_mhz << " / max " << m.max_sm_clock_mhz << " MHz, memory "
    << m.mem_clock_mhz << " / max " << m.max_mem_clock_mhz << " MHz, power limit " << m.power_limit_w << " W, "
    << m.temperature_c << " C (" << m.clock_source << ") |\n";
  s << "| date (UTC) | " << m.date_utc << " |\n";
  s << "| host | " << m.hostname << " |\n";
  s << "| command | `" << m.command_line << "` |\n";
  s << "| tilecast commit (at configure) | " << m.git_commit << " |\n";
  s << "| timing | median of " << info.iters
    << (info.balanced_order ? " iterations or more (whole periods of the balanced order)" : " iterations") << " after "
    << info.warmup << " warm-up"
    << (info.min_ms > 0 ? ", more rounds where needed for a loop of " + std::to_string(static_cast<int>(info.min_ms)) +
                              " ms at least (--min-ms)"
                        : std::string())
    << ", CUDA events around each call, cuBLAS and each tilecast config in turn within one loop "
       "(so that all see the same clocks"
    << (info.balanced_order ? "; the rounds in a Williams design, so that each follows every other equally often, "
                              "its labels drawn afresh each period"
                            : "; the same order every round (--fixed-order)")
    << ")";
  if (info.flush_bytes)
    s << ", L2 flushed before each by " << (info.flush_read ? "reading " : "writing ") << (info.flush_bytes >> 20) << " MiB";
  else
    s << ", no L2 flush (--flush-mb 0)";
  if (info.calls_per_run > 1)
    s << "; each timed run " << info.calls_per_run
      << " back-to-back calls of one function with nothing between them, the time per call reported";
  s << " |\n";
  s << "| roofline | max(FLOPs / " << info.peaks.tflops << " TFLOPS, (A + B + D (+ C)) bytes / "
    << info.peaks.tb_per_s << " TB/s); " << info.peaks.source << " |\n";
  if (!info.note.empty()) s << "| note | " << info.note << " |\n";
  s << "\n`x cuBLAS` = cuBLAS time / tilecast time (> 1: tilecast faster), cuBLAS measured in the same run. "
       "`check`: tilecast's output (poisoned first) against a cuBLASLt FP32-output reference.\n\n";
  s << markdown_table_header();
  for (const Row& r : rows)
    if (!r.sweep) s << markdown_row(r, r.problem.suite);
  s << "\n```\n" << summary_text(rows) << "```\n";
  s << sweep_markdown(rows);

  std::ofstream f(path);
  f << s.str();
  if (!f) {
    std::fprintf(stderr, "tilecast-bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

std::string markdown_table_header() {
  return "| suite | problem (MxNxK) | tilecast config | tilecast us | TFLOPS | roofline | cuBLAS us | TFLOPS | "
         "roofline | x cuBLAS | check | SM MHz | cuBLAS variant | note |\n"
         "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|---|---|\n";
}

std::string markdown_row(const Row& r, const std::string& suite) {
  const double x = r.speedup();
  const Measurement& clocked = r.tilecast.ran ? r.tilecast : r.cublas;
  std::string note = r.tilecast_status == "ok" ? "" : r.tilecast_status + ": " + r.tilecast_detail;
  auto add = [&note](const std::string& more) { note += (note.empty() ? "" : "; ") + more; };
  if (r.verified && !r.verify_pass) add(test::failure_reason(r.cmp, r.tol));
  if (!r.cublas_error.empty()) add("cuBLAS: " + r.cublas_error);
  if (!r.baseline_role.empty()) add(r.baseline_role + " cuBLAS baseline: " + r.cublas_algo);
  if (r.sweep)
    add("model rank " + std::to_string(r.sweep_rank) + ", est " + fmt("%.1f", r.predicted_us) + " us" +
        (r.heuristic_pick ? " (the pick)" : ""));
  for (char& c : note)
    if (c == '|' || c == '\n') c = ' ';
  std::ostringstream s;
  s << "| " << suite << " | " << r.problem.label() << " | " << r.config << " | " << us_or_dash(r.tilecast) << " | "
    << tflops_or_dash(r.tilecast) << " | " << roof_or_dash(r.tilecast) << " | " << us_or_dash(r.cublas) << " | "
    << tflops_or_dash(r.cublas) << " | " << roof_or_dash(r.cublas) << " | " << (x > 0 ? fmt("%.3f", x) : "-")
    << " | " << r.check() << " | "
    << (clocked.ran && clocked.t.during.valid ? std::to_string(clocked.t.during.sm_mhz) : "-") << " | "
    << r.cublas_variant << " | " << note << " |\n";
  return s.str();
}

}  // namespace tilecast::bench
