#include "plan_report.hpp"

#include <cstdio>
#include <exception>
#include <sstream>
#include <vector>

#ifdef TILECAST_BENCH_HAVE_PLAN
#include "tilecast/plan/traffic.hpp"
#endif

namespace tilecast::bench {

bool have_traffic_model() {
#ifdef TILECAST_BENCH_HAVE_PLAN
  return true;
#else
  return false;
#endif
}

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
  if (p.kind == Kind::kMasked) {
    s += "   valid rows per expert:";
    for (int64_t v : p.group_rows) {
      s += ' ';
      s += std::to_string(v);
    }
    s += "\n";
  }
  return s;
}

#ifdef TILECAST_BENCH_HAVE_PLAN
// The scheduler's view of the problem; group_data points into `storage`.
GemmProblem to_plan_problem(const BenchProblem& p, std::vector<int32_t>& storage) {
  GemmProblem g;
  g.m = static_cast<uint32_t>(p.m);
  g.n = static_cast<uint32_t>(p.n);
  g.k = static_cast<uint32_t>(p.k);
  switch (p.kind) {
    case Kind::kDense:
      break;
    case Kind::kBatched:
      g.type = GemmType::kBatched;
      g.num_groups = static_cast<uint32_t>(p.groups);
      break;
    case Kind::kMGrouped:
      // DeepGEMM's contiguous layout: one expert id per row (runs are multiples of 128 rows).
      g.type = GemmType::kMGroupedContiguous;
      g.contiguous_layout = ContiguousLayout::kRowIndex;
      g.m = static_cast<uint32_t>(p.rows_total());
      g.num_groups = static_cast<uint32_t>(p.groups);
      storage.clear();
      for (int64_t e = 0; e < p.groups; ++e)
        storage.insert(storage.end(), static_cast<size_t>(p.group_rows[e]), static_cast<int32_t>(e));
      g.group_data = storage.data();
      break;
    case Kind::kMasked:
      g.type = GemmType::kMGroupedMasked;
      g.num_groups = static_cast<uint32_t>(p.groups);
      storage.assign(p.group_rows.begin(), p.group_rows.end());
      g.group_data = storage.data();
      break;
  }
  return g;
}
#endif

}  // namespace

std::string plan_report(const BenchProblem& p, const GemmConfig& cfg, const Peaks& peaks) {
  std::string s = header(p, peaks);
#ifdef TILECAST_BENCH_HAVE_PLAN
  const uint32_t bm = cfg.block_m ? cfg.block_m : 128, bn = cfg.block_n ? cfg.block_n : 256,
                 bk = cfg.block_k ? cfg.block_k : 64;
  char buf[128];
  std::snprintf(buf, sizeof buf, "   traffic model, block %ux%ux%u%s:\n", bm, bn, bk,
                cfg.max_sms ? (", at most " + std::to_string(cfg.max_sms) + " SMs").c_str() : "");
  s += buf;
  try {
    std::vector<int32_t> storage;
    const GemmProblem g = to_plan_problem(p, storage);
    const auto rows = plan::traffic_by_cluster_shape(g, plan::DeviceFacts::h200_model(), bm, bn, bk,
                                                     cfg.max_sms);
    std::istringstream table(plan::format_traffic(rows));
    for (std::string line; std::getline(table, line);) s += "   " + line + "\n";
  } catch (const std::exception& e) {
    s += std::string("   traffic model failed: ") + e.what() + "\n";
  }
#else
  (void)cfg;
  s += "   (traffic model not built: tilecast_plan was not available to this build)\n";
#endif
  return s;
}

}  // namespace tilecast::bench
