// tilecast::GemmConfig from the command line (--cluster MxN, --config key=value,...) and back to
// text for the report, plus the cluster shapes --cluster-compare walks through.
#pragma once

#include <string>
#include <vector>

#include "tilecast/gemm.hpp"

namespace tilecast::bench {

// Applies "key=value,key=value" onto cfg. Keys: block=BMxBNxBK, block_m, block_n, block_k, stages,
// cluster=MxN, cluster_m, cluster_n, multicast_a, multicast_b, swizzle, max_sms, companion.
// Throws std::invalid_argument.
void apply_config(GemmConfig& cfg, const std::string& text);
// "MxN" onto cluster_m, cluster_n.
void apply_cluster(GemmConfig& cfg, const std::string& text);

// "auto" when every field is left to the heuristic, else the overridden fields.
std::string describe(const GemmConfig& cfg);

// --cluster-compare: 1x1, 2x1, 1x2, 2x2, 4x1, 1x4 without a companion launch, then the clusters of
// 4 with one. Other fields come from `base`.
std::vector<GemmConfig> cluster_compare_configs(const GemmConfig& base);

}  // namespace tilecast::bench
