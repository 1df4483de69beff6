#include "plan_report.hpp"

#include <cstdio>
#include <exception>
#include <sstream>
#include <vector>

#include "problem_desc.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {
namespace {

std::string header(const BenchProblem& p, const Peaks& peaks) {
  const Roofline r = roofline_of(p, peaks);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "== %s %s [%s, out %s%s]: %.3f TFLOP, %.1f MB moved; roofline %.1f us (%s-bound: "
                "compute %.1f us, memory %.1f us)\n",
                p.suite.c_str(), p.label().c_str(), kind_name(p.kind), dtype_name(p.out),
                p.with_c ? ", +C" : "", p.flops() / 1e12, p.bytes() / 1e6, r.time_us(), r.bound(),
                r.compute_us, r.memory_us);
  std::string s = buf;
  if (p.kind == Kind::kMasked || p.kind == Kind::kMGrouped || p.kind == Kind::kKGrouped) {
    s += p.kind == Kind::kKGrouped ? "   K per group:" : "   rows per expert:";
    for (int64_t v : p.kind == Kind::kKGrouped ? p.group_k : p.group_rows) {
      s += ' ';
      s += std::to_string(v);
    }
    s += "\n";
  }
  return s;
}

}  // namespace

std::string plan_report(const BenchProblem& p, const GemmConfig& cfg, const plan::DeviceFacts& facts,
                        const Peaks& peaks) {
  std::string s = header(p, peaks);
  try {
    const plan::GemmDesc desc = problem_desc(p);  // grouped: planned from sizes alone, as the call is
    std::istringstream table(plan::format_plans(plan::rank_plans(desc, facts, cfg), 4));
    for (std::string line; std::getline(table, line);) s += "   " + line + "\n";
  } catch (const std::exception& e) {
    s += std::string("   planning failed: ") + e.what() + "\n";
  }
  return s;
}

}  // namespace tilecast::bench
