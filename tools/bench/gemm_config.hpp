// The configs --cluster-compare walks through, and a config's label in the report.
#pragma once

#include <string>
#include <vector>

#include "tilecast/gemm.hpp"

namespace tilecast::bench {

// "auto" when every field is left to the planner, else tilecast::format_config's text.
std::string describe(const GemmConfig& cfg);

// --cluster-compare: 1x1, 2x1, 1x2, 2x2, 4x1, 1x4 without a companion launch, then the clusters of
// 4 with one. Other fields come from `base`.
std::vector<GemmConfig> cluster_compare_configs(const GemmConfig& base);

// --split-compare: the planner's choice, then split-K off and forced to each of kSplitCompare
// (the rest of `base` kept), so that one run measures what each split buys and calibrates the
// planner's split-K costs (src/plan/plan_cost.cpp).
inline constexpr uint32_t kSplitCompare[] = {2, 3, 4, 8, 16};
std::vector<GemmConfig> split_compare_configs(const GemmConfig& base);

}  // namespace tilecast::bench
