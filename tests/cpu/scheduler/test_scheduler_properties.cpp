// Property tests: the simulator plays every CTA of persistent launches over random problems of
// every gemm type and cluster shape, and every invariant of the plan must hold.
#include <gtest/gtest.h>

#include "random_problem.hpp"
#include "tilecast/device/kernels/gemm_sm90/spec.cuh"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::test {
namespace {

using plan::ClaimMode;
using plan::LaunchSpec;
using plan::SimOptions;
using plan::simulate;

struct Case {
  std::unique_ptr<OwnedProblem> problem;
  TileConfig config;
  SimOptions options;
};

Case random_case(ProblemGenerator& gen, GemmType type, const ClusterShape& cluster) {
  Case c;
  c.config = gen.config(cluster);
  c.options.stages = gen.uniform(1, 6);
  c.options.consumer_warps = gen.coin() ? 4 : 8;
  c.problem = gen.make(type, c.config.block_m, c.config.block_n, c.config.block_k);
  return c;
}

std::string report(const Case& c, const plan::SimResult& r) {
  std::string s = c.problem->describe() + " block " + std::to_string(c.config.block_m) + "x" +
                  std::to_string(c.config.block_n) + "x" + std::to_string(c.config.block_k) + " cluster " +
                  std::to_string(c.config.cluster.m) + "x" + std::to_string(c.config.cluster.n) + ":\n";
  for (const std::string& v : r.violations) s += "  " + v + "\n";
  return s;
}

// 6 cluster shapes x 5 gemm types x 350 problems = 10,500 static-order problems.
TEST(SchedulerProperties, StaticOrderHoldsEveryInvariant) {
  ProblemGenerator gen(20261129);
  uint64_t problems = 0, tiles = 0, phantom = 0;
  for (const auto& [cluster, type] : every_shape_and_type()) {
    for (int i = 0; i < 350; ++i) {
      Case c = random_case(gen, type, cluster);
      const uint32_t clusters = gen.uniform(1, 40);
      const LaunchSpec launch{c.config, clusters};
      const plan::SimResult r = simulate(c.problem->problem, {&launch, 1}, c.options);
      ASSERT_TRUE(r.ok()) << report(c, r);
      ++problems;
      tiles += r.stats.tiles;
      phantom += r.stats.phantom_k_steps;
    }
  }
  EXPECT_GE(problems, 10000u);
  // The generator must reach partial clusters, or the phantom paths would go untested.
  EXPECT_GT(phantom, 0u);
  RecordProperty("tiles", std::to_string(tiles));
}

// A cluster-4 launch and a companion launch of clusters of 2 or 1 claim units of the cluster-4
// shape from one counter, in random interleavings: 6,000 problems.
TEST(SchedulerProperties, DynamicClaimsWithCompanionLaunchHoldEveryInvariant) {
  ProblemGenerator gen(7);
  const ClusterShape mains[] = {{4, 1}, {1, 4}, {2, 2}};
  for (const ClusterShape& main : mains) {
    for (GemmType type : kGemmTypes) {
      for (int i = 0; i < 400; ++i) {
        Case c = random_case(gen, type, main);
        c.options.mode = ClaimMode::kDynamic;
        c.options.seed = gen.coin(0.8) ? gen.uniform(1, 1u << 30) : 0;
        TileConfig companion = c.config;
        // A companion cluster that divides the unit: 2 CTAs along the unit's longer side, or 1.
        companion.cluster = gen.coin() ? ClusterShape{1, 1}
                            : main.m >= 2 ? ClusterShape{2, 1} : ClusterShape{1, 2};
        companion.unit_m = main.m;
        companion.unit_n = main.n;
        const LaunchSpec launches[] = {{c.config, gen.uniform(1, 30)}, {companion, gen.uniform(1, 12)}};
        const plan::SimResult r = simulate(c.problem->problem, launches, c.options);
        ASSERT_TRUE(r.ok()) << "companion " << companion.cluster.m << "x" << companion.cluster.n << "\n" << report(c, r);
      }
    }
  }
}

// One launch claiming from the counter, for every cluster shape.
TEST(SchedulerProperties, DynamicClaimsSingleLaunch) {
  ProblemGenerator gen(11);
  for (const auto& [cluster, type] : every_shape_and_type()) {
    for (int i = 0; i < 60; ++i) {
      Case c = random_case(gen, type, cluster);
      c.options.mode = ClaimMode::kDynamic;
      c.options.seed = gen.uniform(0, 1000);
      const LaunchSpec launch{c.config, gen.uniform(1, 33)};
      const plan::SimResult r = simulate(c.problem->problem, {&launch, 1}, c.options);
      ASSERT_TRUE(r.ok()) << report(c, r);
    }
  }
}

// 192-row tiles (three consumer warpgroups: dense and batched only), static and with the companion
// launch claiming beside clusters of 4: the same invariants.
TEST(SchedulerProperties, TallTilesHoldEveryInvariant) {
  ProblemGenerator gen(192);
  uint64_t phantom = 0;
  for (const ClusterShape& cluster : kClusterShapes)
    for (GemmType type : {GemmType::kNormal, GemmType::kBatched})
      for (int i = 0; i < 150; ++i) {
        Case c;
        c.config = gen.config(cluster);
        c.config.block_m = kThreeWarpgroupBlockM;
        c.config.block_k = 64;
        c.options.stages = gen.uniform(1, 4);
        c.options.consumer_warps = 12;
        c.problem = gen.make(type, c.config.block_m, c.config.block_n, c.config.block_k);
        std::vector<LaunchSpec> launches{{c.config, gen.uniform(1, 40)}};
        if (cluster.size() == 4 && gen.coin()) {
          c.options.mode = ClaimMode::kDynamic;
          TileConfig companion = c.config;
          companion.cluster = cluster.m >= 2 ? ClusterShape{2, 1} : ClusterShape{1, 2};
          companion.unit_m = cluster.m;
          companion.unit_n = cluster.n;
          launches.push_back({companion, gen.uniform(1, 12)});
        }
        const plan::SimResult r = simulate(c.problem->problem, launches, c.options);
        ASSERT_TRUE(r.ok()) << report(c, r);
        phantom += r.stats.phantom_k_steps;
      }
  EXPECT_GT(phantom, 0u) << "partial clusters of 192-row tiles must be reached";
}

}  // namespace
}  // namespace tilecast::test
