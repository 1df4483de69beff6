#include "tilecast/plan/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tilecast::plan {
namespace {

// Tensor-core FLOPs the simulated tiles cost. Edge tiles do less useful work, but the tensor
// cores spend a full tile on them, so the full tile is what counts here.
double tile_flops(const SimStats& s, const TileConfig& c) {
  return 2.0 * c.block_m * c.block_n * c.block_k * static_cast<double>(s.tile_k_steps);
}

}  // namespace

std::vector<TrafficRow> traffic_by_cluster_shape(const GemmProblem& problem, const DeviceFacts& facts,
                                                 uint32_t block_m, uint32_t block_n, uint32_t block_k,
                                                 uint32_t max_sms) {
  std::vector<TrafficRow> rows;
  for (const ClusterShape& cs : kClusterShapes) {
    TrafficRow row;
    row.cluster = cs;
    row.config.block_m = block_m;
    row.config.block_n = block_n;
    row.config.block_k = block_k;
    row.config.cluster = cs;
    row.config.swizzle = 8;
    // Size the grid as the kernel does, but never beyond the units there are: a first pass
    // with one cluster per unit counts them.
    LaunchSpec probe{row.config, 1};
    SimOptions fast;
    fast.check = false;
    const SimResult count = simulate(problem, {&probe, 1}, fast);
    const uint32_t units = static_cast<uint32_t>(std::max<uint64_t>(count.stats.units, 1));
    row.num_clusters = std::min(facts.clusters_for(cs.size(), max_sms), units);
    if (row.num_clusters == 0) continue;  // not one cluster of this shape is resident: no row
    row.sms_used = row.num_clusters * cs.size();
    LaunchSpec launch{row.config, row.num_clusters};
    const SimResult sim = simulate(problem, {&launch, 1}, fast);
    row.waves = static_cast<double>(count.stats.units) / row.num_clusters;
    const double last = row.waves - std::ceil(row.waves) + 1.0;
    row.tail_utilisation = row.waves == 0 ? 0 : last;
    const double busy_sm_steps = static_cast<double>(sim.stats.tile_k_steps);
    const double span = static_cast<double>(sim.stats.makespan_k_steps) * facts.num_sms;
    row.sm_utilisation = span > 0 ? busy_sm_steps / span : 0;
    row.l2_to_sm_bytes = sim.stats.l2_to_sm_bytes;
    row.l2_to_sm_bytes_unicast = sim.stats.l2_to_sm_bytes_unicast;
    row.l2_time_us = static_cast<double>(row.l2_to_sm_bytes) / (facts.l2_tb_per_s * 1e12) * 1e6;
    const double flops = tile_flops(sim.stats, row.config);
    row.mma_time_us = row.sm_utilisation > 0 ? flops / (facts.peak_bf16_tflops * 1e12) / row.sm_utilisation * 1e6 : 0;
    rows.push_back(row);
  }
  return rows;
}

std::string format_traffic(const std::vector<TrafficRow>& rows) {
  std::ostringstream s;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %8s %5s %7s %6s %7s %12s %12s %7s %9s %9s\n", "cluster", "clusters", "SMs",
                "waves", "tail", "SM-use", "L2->SM MB", "unicast MB", "saved", "L2 us", "MMA us");
  s << line;
  for (const TrafficRow& r : rows) {
    char shape[16];
    std::snprintf(shape, sizeof shape, "%ux%u", r.cluster.m, r.cluster.n);
    const double saved = r.l2_to_sm_bytes_unicast
                             ? 1.0 - static_cast<double>(r.l2_to_sm_bytes) / static_cast<double>(r.l2_to_sm_bytes_unicast)
                             : 0.0;
    std::snprintf(line, sizeof line, "%-8s %8u %5u %7.2f %5.0f%% %6.1f%% %12.1f %12.1f %6.1f%% %9.1f %9.1f\n", shape,
                  r.num_clusters, r.sms_used, r.waves, 100.0 * r.tail_utilisation, 100.0 * r.sm_utilisation,
                  r.l2_to_sm_bytes / 1e6, r.l2_to_sm_bytes_unicast / 1e6, 100.0 * saved, r.l2_time_us, r.mma_time_us);
    s << line;
  }
  return s.str();
}

}  // namespace tilecast::plan
