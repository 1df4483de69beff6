// A dense or batched bench problem as the planner sees it (for --plan-only and tilecast-warm).
#pragma once

#include "suites.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {

inline plan::GemmDesc plan_desc(const BenchProblem& p) {
  plan::GemmDesc d = plan::dense_desc(p.m, p.n, p.k, p.kind == Kind::kBatched ? p.groups : 1, p.out, p.with_c);
  d.has_bias = p.with_bias;
  d.bias_type = p.out;  // the bench's bias has the output's dtype
  return d;
}

}  // namespace tilecast::bench
