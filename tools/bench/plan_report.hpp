// What the bench prints without a GPU (or with --plan-only): each problem's size, roofline and the
// traffic model of tilecast_plan (one row per cluster shape: clusters, waves, tail, L2 -> SM
// bytes with and without multicast).
#pragma once

#include <string>

#include "roofline.hpp"
#include "suites.hpp"
#include "tilecast/gemm.hpp"

namespace tilecast::bench {

// Block sizes of the traffic model: the config's where it sets them, else 128 x 256 x 64.
std::string plan_report(const BenchProblem& p, const GemmConfig& cfg, const Peaks& peaks);

// Whether this build has the traffic model (the tilecast_plan library was linked).
bool have_traffic_model();

}  // namespace tilecast::bench
