// What `--suite mcast` runs, as pure planning (no GPU): each problem's pinned tile, its configs
// (every cluster shape, multicast off, the companion), and the traffic model's bytes for each.
// The runner is multicast_worth.hpp; the CPU test is tests/cpu/bench/test_multicast_configs.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suites.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/device_facts.hpp"

namespace tilecast::bench {

// One tilecast configuration of a problem, and how the report names it.
struct McastConfig {
  std::string label;  // "1x1", "2x1", "2x1 mc off", "2x2+comp"
  GemmConfig config;
};

// The block the suite pins for a problem (the same for every cluster, so only the cluster
// changes): its own table for the mcast suite's three shapes, else the planner's choice at 1x1.
// Split-K off.
GemmConfig mcast_tile(const BenchProblem& p, const plan::DeviceFacts& facts);

// Whether mcast_tile's table has the problem (every problem of the mcast suite must be there),
// and why the shape and its tile were chosen, in a line ("" when not pinned).
bool mcast_tile_pinned(const BenchProblem& p);
std::string mcast_tile_reason(const BenchProblem& p);

// The configs of a problem, all with mcast_tile's block, the stages the planner gives it at 1x1,
// and no split-K: 1x1, 2x1, 1x2, 2x2, 4x1, 1x4 where the planner can make the plan (clusters of 4
// without the companion, so on the SMs that hold clusters of 4 alone), then multicast off for the
// clusters of 2 and for 2x2, then the clusters of 4 with the companion.
std::vector<McastConfig> mcast_configs(const BenchProblem& p, const plan::DeviceFacts& facts);

// The traffic model for a config: the planner's L2 -> SM operand bytes with multicast as planned
// and with every CTA loading its own tiles, and the SMs the plan's launches hold.
struct TrafficModel {
  bool ok = false;
  std::string why_not;  // when !ok (the planner refused the config)
  uint64_t l2_to_sm_bytes = 0, l2_to_sm_bytes_unicast = 0;
  uint32_t sms = 0;
  bool companion = false;
  std::string plan;  // GemmPlan::describe()
};
TrafficModel traffic_model(const BenchProblem& p, const GemmConfig& cfg, const plan::DeviceFacts& facts);

}  // namespace tilecast::bench
