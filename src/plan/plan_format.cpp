// A plan in words (describe) and the ranked list in columns (format_plans): what tilecast-plan and
// tilecast-bench --plan-only print.
#include <cstdio>
#include <sstream>

#include "planner.hpp"

namespace tilecast::plan {

std::string GemmPlan::describe() const {
  const GemmKernelSpec& k = main.kernel;
  std::ostringstream s;
  const ArchSpec& a = arch_spec(arch);
  if (arch != Arch::kSM90) s << a.name << " ";
  if (k.layout != GemmLayout::kNT) s << layout_name(k.layout) << " ";
  s << k.block_m << "x" << k.block_n << "x" << kGemmBlockK << " stages " << k.stages << " cluster " << k.cluster.m
    << "x" << k.cluster.n << " mc " << (schedule.multicast_a ? "A" : "-") << (schedule.multicast_b ? "B" : "-")
    << " clusters " << main.clusters;
  if (a.mma_cta_group > 1 && k.cluster.m % a.mma_cta_group == 0)
    s << " (" << a.mma_cta_group << "-CTA MMA, M " << a.mma_cta_group * k.block_m << ")";
  if (companion) s << " + " << companion->clusters << "x(" << companion->kernel.cluster.m << "x" << companion->kernel.cluster.n << ")";
  if (k_splits > 1) s << " split-K " << k_splits << (k.fused_reduce ? " fused" : k.k_cluster > 1 ? " in cluster" : "");
  if (k.swap_ab) s << " swap-AB";
  if (k.split_columns) s << " split-columns";
  if (k.pingpong) s << " ping-pong";
  if (k.k_serpentine) s << " k-serpentine";
  if (schedule.swizzle != kDefaultSwizzle) s << " band " << schedule.swizzle;
  char est[64];
  std::snprintf(est, sizeof est, " est %.1f us", cost.total_us);
  s << est;
  return s.str();
}

std::string format_plans(const std::vector<GemmPlan>& ranked, size_t alternatives) {
  std::ostringstream s;
  if (ranked.empty()) return "no plan\n";
  s << "chosen: " << ranked.front().describe() << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%4s %-9s %6s %7s %3s %6s %9s %5s %6s %9s %8s %10s %8s %8s %9s %9s %10s %10s\n",
                "rank", "tile", "stages", "cluster", "mc", "splits", "clusters", "SMs", "waves", "est us", "mma us",
                "ingress us", "L2 us", "HBM us", "stream us", "reduce us", "L2->SM MB", "unicast MB");
  s << line;
  for (size_t i = 0; i < ranked.size() && i <= alternatives; ++i) {
    const GemmPlan& p = ranked[i];
    const GemmKernelSpec& k = p.main.kernel;
    char tile[16], cluster[24];
    std::snprintf(tile, sizeof tile, "%ux%u%s", k.block_m, k.block_n, k.swap_ab ? "/sw" : k.fused_reduce ? "/f" : k.k_cluster > 1 ? "/kc" : "");
    std::snprintf(cluster, sizeof cluster, "%ux%u%s", k.cluster.m, k.cluster.n, p.companion ? "+c" : "");
    const uint32_t sms = p.main.clusters * k.cluster.size() * k.k_cluster +
                         (p.companion ? p.companion->clusters * p.companion->kernel.cluster.size() : 0);
    std::snprintf(line, sizeof line,
                  "%4zu %-9s %6u %7s %1s%1s  %6u %9u %5u %6.2f %9.1f %8.1f %10.1f %8.1f %8.1f %9.1f %9.1f %10.1f %10.1f\n",
                  i + 1, tile, k.stages, cluster, p.schedule.multicast_a ? "A" : "-", p.schedule.multicast_b ? "B" : "-",
                  p.k_splits, p.main.clusters, sms, p.cost.waves, p.cost.total_us, p.cost.mma_us, p.cost.ingress_us, p.cost.l2_us,
                  p.cost.hbm_us, p.cost.stream_us, p.cost.reduce_us, p.cost.l2_to_sm_bytes / 1e6,
                  p.cost.l2_to_sm_bytes_unicast / 1e6);
    s << line;
  }
  if (ranked.size() > alternatives + 1) s << "(" << ranked.size() - alternatives - 1 << " more)\n";
  return s.str();
}

}  // namespace tilecast::plan
