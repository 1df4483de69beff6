// The traffic model: for a problem, what each cluster shape costs in L2 -> SM bytes, waves and
// tail utilisation, from the same simulation that checks the scheduler.
#pragma once

#include <string>
#include <vector>

#include "tilecast/plan/device_facts.hpp"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::plan {

struct TrafficRow {
  ClusterShape cluster;
  TileConfig config;
  uint32_t num_clusters = 0;
  uint32_t sms_used = 0;
  double waves = 0;               // units / clusters
  double tail_utilisation = 0;    // busy fraction of the clusters in the last wave
  double sm_utilisation = 0;      // tile k-steps / (makespan * all SMs of the device)
  uint64_t l2_to_sm_bytes = 0;
  uint64_t l2_to_sm_bytes_unicast = 0;
  double l2_time_us = 0;          // bytes at the device's L2 -> SM bandwidth
  double mma_time_us = 0;         // FLOPs at peak, stretched by sm_utilisation
};

// One row per cluster shape (kClusterShapes) for the given block sizes, but for shapes of which
// not one cluster is resident (max_sms below its size, a part without clusters of 4).
std::vector<TrafficRow> traffic_by_cluster_shape(const GemmProblem& problem, const DeviceFacts& facts,
                                                 uint32_t block_m, uint32_t block_n, uint32_t block_k,
                                                 uint32_t max_sms = 0);

std::string format_traffic(const std::vector<TrafficRow>& rows);

}  // namespace tilecast::plan
