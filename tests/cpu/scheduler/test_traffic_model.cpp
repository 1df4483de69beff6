// The traffic model against its closed form: with every cluster full, each tile reads
// k * (block_m / cluster_n + block_n / cluster_m) operand elements from L2.
#include <gtest/gtest.h>

#include <cmath>

#include "random_problem.hpp"
#include "tilecast/plan/traffic.hpp"

namespace tilecast::test {
namespace {

TEST(TrafficModel, FullClustersMatchTheClosedForm) {
  ProblemGenerator gen(3);
  for (int i = 0; i < 300; ++i) {
    for (const ClusterShape& cs : kClusterShapes) {
      TileConfig c;
      const uint32_t bms[] = {64, 128}, bns[] = {128, 256};
      c.block_m = gen.pick(bms);
      c.block_n = gen.pick(bns);
      c.block_k = 64;
      c.cluster = cs;
      c.swizzle = gen.uniform(1, 8);
      GemmProblem p;
      p.type = gen.coin() ? GemmType::kNormal : GemmType::kBatched;
      p.num_groups = p.type == GemmType::kBatched ? gen.uniform(1, 4) : 1;
      p.m = gen.uniform(1, 6) * c.block_m * cs.m;
      p.n = gen.uniform(1, 6) * c.block_n * cs.n;
      p.k = gen.uniform(1, 8) * c.block_k;
      const plan::LaunchSpec launch{c, gen.uniform(1, 40)};
      const plan::SimResult r = plan::simulate(p, {&launch, 1}, {});
      ASSERT_TRUE(r.ok());
      const uint64_t tiles = uint64_t{p.num_groups} * (p.m / c.block_m) * (p.n / c.block_n);
      ASSERT_EQ(r.stats.tiles, tiles);
      // Per tile: A is read once per cluster_n tiles, B once per cluster_m tiles (2-byte BF16).
      const uint64_t per_tile_x = uint64_t{p.k} * (c.block_m * cs.m + c.block_n * cs.n) * 2;
      EXPECT_EQ(r.stats.l2_to_sm_bytes * cs.m * cs.n, tiles * per_tile_x) << p.m << "x" << p.n << "x" << p.k;
      EXPECT_EQ(r.stats.l2_to_sm_bytes_unicast, tiles * p.k * (c.block_m + c.block_n) * 2);
    }
  }
}

TEST(TrafficModel, PartialClustersLoadAloneAndCostMore) {
  // 3 x 3 tiles of 128 under 2x2 clusters: the edge clusters cannot share fully.
  GemmProblem p;
  p.m = p.n = 384;
  p.k = 128;
  const auto rows = plan::traffic_by_cluster_shape(p, plan::DeviceFacts::h200_model(), 128, 128, 64);
  ASSERT_EQ(rows.size(), 6u);
  const plan::TrafficRow& one = rows[0];
  const plan::TrafficRow& four = rows[5];
  ASSERT_EQ(four.cluster.m, 2u);
  ASSERT_EQ(four.cluster.n, 2u);
  EXPECT_EQ(one.l2_to_sm_bytes, one.l2_to_sm_bytes_unicast);
  EXPECT_LT(four.l2_to_sm_bytes, one.l2_to_sm_bytes);
  // Full 2x2 sharing would halve the bytes; the edges keep it above half.
  EXPECT_GT(four.l2_to_sm_bytes * 2, one.l2_to_sm_bytes);
}

TEST(TrafficModel, ClusterOf4UsesTheSmsThatFitWholeClusters) {
  GemmProblem p;
  p.m = p.n = 8192;
  p.k = 8192;
  const auto rows = plan::traffic_by_cluster_shape(p, plan::DeviceFacts::h200_model(), 128, 256, 64);
  for (const plan::TrafficRow& r : rows) {
    const uint32_t size = r.cluster.size();
    EXPECT_EQ(r.sms_used, size == 4 ? 120u : 132u) << r.cluster.m << "x" << r.cluster.n;
    EXPECT_GT(r.sm_utilisation, 0.0);
    EXPECT_LE(r.sm_utilisation, 1.0);
  }
  // The SM cap: with 64 SMs allowed, clusters of 4 get 16.
  const auto capped = plan::traffic_by_cluster_shape(p, plan::DeviceFacts::h200_model(), 128, 256, 64, 64);
  EXPECT_EQ(capped[5].num_clusters, 16u);
  EXPECT_EQ(capped[0].num_clusters, 64u);
  // With 3 SMs not one cluster of 4 is resident: those shapes get no row (they had infinite
  // waves and NaN use, and looked cheapest).
  const auto three = plan::traffic_by_cluster_shape(p, plan::DeviceFacts::h200_model(), 128, 256, 64, 3);
  EXPECT_EQ(three.size(), 3u) << "1x1, 2x1 and 1x2";
  for (const plan::TrafficRow& r : three) {
    EXPECT_LE(r.cluster.size(), 2u);
    EXPECT_TRUE(std::isfinite(r.waves) && std::isfinite(r.tail_utilisation));
  }
}

}  // namespace
}  // namespace tilecast::test

namespace tilecast::test {
namespace {

// The planner's fast path counts the same bytes and tiles as the checked, round-by-round play.
TEST(TrafficModel, FastPathCountsWhatTheCheckedPlayCounts) {
  ProblemGenerator gen(5);
  for (int i = 0; i < 600; ++i) {
    TileConfig c;
    c.block_m = 64;
    c.block_n = gen.coin() ? 128 : 256;
    c.block_k = 64;
    c.cluster = gen.pick(kClusterShapes);
    c.swizzle = gen.uniform(1, 4);
    const auto problem = gen.make(gen.pick(kGemmTypes), c.block_m, c.block_n, c.block_k);
    const plan::LaunchSpec launch{c, gen.uniform(1, 20)};
    plan::SimOptions fast;
    fast.check = false;
    const plan::SimResult checked = plan::simulate(problem->problem, {&launch, 1}, {});
    const plan::SimResult quick = plan::simulate(problem->problem, {&launch, 1}, fast);
    ASSERT_TRUE(checked.ok());
    EXPECT_EQ(quick.stats.l2_to_sm_bytes, checked.stats.l2_to_sm_bytes) << problem->describe();
    EXPECT_EQ(quick.stats.l2_to_sm_bytes_unicast, checked.stats.l2_to_sm_bytes_unicast);
    EXPECT_EQ(quick.stats.tiles, checked.stats.tiles);
    EXPECT_EQ(quick.stats.tile_k_steps, checked.stats.tile_k_steps);
    EXPECT_EQ(quick.stats.makespan_k_steps, checked.stats.makespan_k_steps);
  }
}

}  // namespace
}  // namespace tilecast::test
