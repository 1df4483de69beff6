// What the planner is told of a bench problem: the desc tilecast's validation makes of the
// workload's views (workload.cpp), so that the plan printed, the kernels warmed and the plan the
// call runs are one.
#pragma once

#include "suites.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {

plan::GemmDesc problem_desc(const BenchProblem& p);

}  // namespace tilecast::bench
