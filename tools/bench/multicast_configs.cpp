#include "multicast_configs.hpp"

#include <exception>

#include "problem_desc.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {
namespace {

// The suite's pinned tiles (suites.cpp lists the problems), each chosen for what it tests:
//   8192^3, 128x256: compute-bound, 2048 tiles in 15.5 waves; the planner's tile, and the one
//     MISSION.md's 800 TFLOPS (2x1) and 742-780 (clusters of 4) were measured on.
//   4096x7168x2048, 128x128: small tiles for the problem (1792 tiles, 13.6 waves, 32 k-steps), so
//     operand traffic per FLOP is at its highest: (128 + 128) x 64 x 2 B per 2.1 MFLOP k-step,
//     1.5x 128x256's bytes per FLOP (the planner picks 128x256 here). If multicast pays in time
//     anywhere, it is where the L2 -> SM traffic is largest.
//   4096x2112x7168, 128x256: a partial last wave. 32 x 9 = 288 tiles (the 9th column 64 wide) on
//     132 SMs is 2.18 waves: three, the third 18% full. Clusters of 4 run on 120 SMs, which here
//     costs no wave: 4x1 is 72 units on 30 clusters (2.4, three waves), 2x2 80 units (2.67, three);
//     only 1x4 (9 columns in units of 4, three phantom tiles a row) needs four. So this is where
//     4-way multicast can win: its bytes saved without the SMs it idles costing time. (The planner
//     picks 128x176 here, 2.91 waves, which hides the tail instead.)
struct PinnedTile {
  int64_t m, n, k;
  uint32_t block_m, block_n;
  const char* why;  // the reason above in a line, for the results page
};
constexpr PinnedTile kPinnedTiles[] = {
    {8192, 8192, 8192, 128, 256, "compute-bound: 2048 tiles, 15.5 waves"},
    {4096, 7168, 2048, 128, 128,
     "small tiles for the problem: 1792 tiles, 13.6 waves, the most L2 -> SM bytes per FLOP"},
    {4096, 2112, 7168, 128, 256,
     "a partial last wave: 288 tiles, 2.18 waves (3); clusters of 4 on 120 SMs also 3 waves, but 1x4 4"},
};

constexpr unsigned kClusterShapesMN[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}};

GemmConfig with_cluster(GemmConfig c, unsigned cm, unsigned cn, int companion) {
  c.cluster_m = cm;
  c.cluster_n = cn;
  c.companion = companion;
  return c;
}

std::string cluster_label(unsigned cm, unsigned cn) { return std::to_string(cm) + "x" + std::to_string(cn); }

bool plannable(const BenchProblem& p, const GemmConfig& c, const plan::DeviceFacts& facts) {
  try {
    plan::plan_gemm(problem_desc(p), facts, c);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool mcast_tile_pinned(const BenchProblem& p) { return !mcast_tile_reason(p).empty(); }

std::string mcast_tile_reason(const BenchProblem& p) {
  for (const PinnedTile& t : kPinnedTiles)
    if (p.m == t.m && p.n == t.n && p.k == t.k) return t.why;
  return {};
}

GemmConfig mcast_tile(const BenchProblem& p, const plan::DeviceFacts& facts) {
  GemmConfig c;
  c.k_splits = 1;
  for (const PinnedTile& t : kPinnedTiles)
    if (p.m == t.m && p.n == t.n && p.k == t.k) {
      c.block_m = t.block_m;
      c.block_n = t.block_n;
      return c;
    }
  GemmConfig one = c;
  one.cluster_m = one.cluster_n = 1;
  const plan::GemmPlan pl = plan::plan_gemm(problem_desc(p), facts, one);
  c.block_m = pl.main.kernel.block_m;
  c.block_n = pl.main.kernel.block_n;
  return c;
}

std::vector<McastConfig> mcast_configs(const BenchProblem& p, const plan::DeviceFacts& facts) {
  GemmConfig base = mcast_tile(p, facts);
  // The stages the planner gives this tile at 1x1, for every cluster: the ring's depth is
  // shared memory's to decide and must not differ between the rows.
  const plan::GemmPlan one = plan::plan_gemm(problem_desc(p), facts, with_cluster(base, 1, 1, 0));
  base.stages = one.main.kernel.stages;

  std::vector<McastConfig> out;
  for (const auto& cs : kClusterShapesMN) {
    const GemmConfig c = with_cluster(base, cs[0], cs[1], 0);
    if (plannable(p, c, facts)) out.push_back({cluster_label(cs[0], cs[1]), c});
  }
  // Controls: the same clusters and launch with nothing shared, which separates what the
  // multicast saves from what the cluster costs (co-scheduling, lockstep rounds).
  for (const auto& cs : kClusterShapesMN) {
    if (cs[0] * cs[1] == 1 || (cs[0] * cs[1] == 4 && (cs[0] != 2 || cs[1] != 2))) continue;
    GemmConfig c = with_cluster(base, cs[0], cs[1], 0);
    c.multicast_a = 0;
    c.multicast_b = 0;
    if (plannable(p, c, facts)) out.push_back({cluster_label(cs[0], cs[1]) + " mc off", c});
  }
  // What the heuristic would launch with clusters of 4: the 12 SMs outside them taken by the
  // companion's smaller clusters.
  for (const auto& cs : kClusterShapesMN) {
    if (cs[0] * cs[1] != 4) continue;
    const GemmConfig c = with_cluster(base, cs[0], cs[1], 1);
    if (plannable(p, c, facts)) out.push_back({cluster_label(cs[0], cs[1]) + "+comp", c});
  }
  return out;
}

TrafficModel traffic_model(const BenchProblem& p, const GemmConfig& cfg, const plan::DeviceFacts& facts) {
  TrafficModel t;
  try {
    const plan::GemmPlan pl = plan::plan_gemm(problem_desc(p), facts, cfg);
    t.ok = true;
    t.l2_to_sm_bytes = pl.cost.l2_to_sm_bytes;
    t.l2_to_sm_bytes_unicast = pl.cost.l2_to_sm_bytes_unicast;
    t.sms = pl.main.clusters * pl.main.kernel.cluster.size();
    if (pl.companion) {
      t.companion = true;
      t.sms += pl.companion->clusters * pl.companion->kernel.cluster.size();
    }
    t.plan = pl.describe();
  } catch (const std::exception& e) {
    t.why_not = e.what();
  }
  return t;
}

}  // namespace tilecast::bench
