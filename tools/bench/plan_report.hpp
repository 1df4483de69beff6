// What the bench prints without a GPU (or with --plan-only): each problem's size and roofline,
// then the planner's plan on `facts` (plan::format_plans, the printer tilecast-plan uses too).
#pragma once

#include <string>

#include "roofline.hpp"
#include "suites.hpp"
#include "tilecast/gemm.hpp"

namespace tilecast::bench {

std::string plan_report(const BenchProblem& p, const GemmConfig& cfg, const plan::DeviceFacts& facts,
                        const Peaks& peaks);

}  // namespace tilecast::bench
