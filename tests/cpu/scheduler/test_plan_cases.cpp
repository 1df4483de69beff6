// Worked cases of the multicast plan: partial clusters at the edges, expert boundaries inside a
// cluster, k-groups. Each names the exact masks the kernel must use.
#include <gtest/gtest.h>

#include <vector>

#include "test_helpers.hpp"

namespace tilecast {
namespace {

using test::config;

std::vector<TileWork> cluster_work(const GemmProblem& p, const TileConfig& c, uint32_t unit, uint32_t step = 0) {
  std::vector<TileWork> w;
  for (uint32_t r = 0; r < c.cluster.size(); ++r) {
    TileScheduler s(p, c, r);
    EXPECT_TRUE(s.seek(unit));
    w.push_back(s.work(step));
  }
  return w;
}

TEST(PlanCases, ClusterOf4AlongMWithThreeLiveTilesSharesBAmongThem) {
  GemmProblem p;
  p.m = 3 * 128 - 5;  // three M blocks, the last partial
  p.n = 128;
  p.k = 256;
  const auto w = cluster_work(p, config(4, 1), 0);
  for (uint32_t r = 0; r < 3; ++r) {
    EXPECT_TRUE(w[r].valid);
    EXPECT_EQ(w[r].b_mask, 0b0111) << "rank " << r;
    EXPECT_EQ(w[r].a_mask, 1u << r) << "rank " << r;
    EXPECT_EQ(w[r].issue_b, r == 0);
    EXPECT_TRUE(w[r].issue_a);
    EXPECT_EQ(w[r].num_k_steps, 4u);
  }
  EXPECT_EQ(w[2].rows, 128u - 5);
  EXPECT_FALSE(w[3].valid);
  EXPECT_EQ(w[3].a_mask | w[3].b_mask, 0);
  EXPECT_EQ(w[3].num_k_steps, 4u) << "a phantom runs the cluster's k-steps";
}

TEST(PlanCases, ClusterOf4AlongNWithOneLiveTileLoadsAlone) {
  GemmProblem p;
  p.m = 128;
  p.n = 4 * 128 + 1;  // five N blocks: the second cluster has one live tile
  p.k = 64;
  const auto w = cluster_work(p, config(1, 4), 1);
  EXPECT_TRUE(w[0].valid);
  EXPECT_EQ(w[0].a_mask, 0b0001);
  EXPECT_EQ(w[0].b_mask, 0b0001);
  EXPECT_EQ(w[0].cols, 1u);
  for (uint32_t r = 1; r < 4; ++r) EXPECT_FALSE(w[r].valid);
}

TEST(PlanCases, TwoByTwoAtTheNEdgeSharesAOnlyWithinLiveColumns) {
  GemmProblem p;
  p.m = 256;
  p.n = 3 * 128;  // the second cluster column holds one N block
  p.k = 64;
  // ranks: 0 = (0,0), 1 = (1,0), 2 = (0,1), 3 = (1,1)
  const auto full = cluster_work(p, config(2, 2), 0);
  EXPECT_EQ(full[0].a_mask, 0b0101);  // same rows: ranks 0 and 2
  EXPECT_EQ(full[0].b_mask, 0b0011);  // same columns: ranks 0 and 1
  EXPECT_EQ(full[3].a_mask, 0b1010);
  EXPECT_EQ(full[3].b_mask, 0b1100);
  const auto edge = cluster_work(p, config(2, 2), 1);
  EXPECT_TRUE(edge[0].valid && edge[1].valid);
  EXPECT_FALSE(edge[2].valid || edge[3].valid);
  EXPECT_EQ(edge[0].a_mask, 0b0001);
  EXPECT_EQ(edge[1].a_mask, 0b0010);
  EXPECT_EQ(edge[0].b_mask, 0b0011);
  EXPECT_TRUE(edge[0].issue_b && !edge[1].issue_b);
}

TEST(PlanCases, RowIndexLayoutSplitsBMulticastAtTheExpertBoundary) {
  // Experts 0 and 1, 256 rows each (already 128-aligned): blocks [e0, e0, e1, e1].
  std::vector<int32_t> layout(512);
  for (uint32_t r = 0; r < 512; ++r) layout[r] = r < 256 ? 0 : 1;
  const GemmProblem p = test::grouped(GemmType::kMGroupedContiguous, 512, 128, 128, 2, layout);
  const auto w = cluster_work(p, config(4, 1), 0);
  EXPECT_EQ(w[0].b_mask, 0b0011);
  EXPECT_EQ(w[1].b_mask, 0b0011);
  EXPECT_EQ(w[2].b_mask, 0b1100);
  EXPECT_EQ(w[3].b_mask, 0b1100);
  EXPECT_TRUE(w[0].issue_b && w[2].issue_b && !w[1].issue_b && !w[3].issue_b);
  EXPECT_EQ(w[2].group, 1u);
}

TEST(PlanCases, RowIndexPaddingBlockIsAPhantom) {
  std::vector<int32_t> layout(384, -1);
  for (uint32_t r = 0; r < 100; ++r) layout[r] = 0;        // expert 0: 100 rows, padded to 128
  for (uint32_t r = 256; r < 300; ++r) layout[r] = 1;      // expert 1 starts at 256
  // rows 128..255 are an all-padding block (an empty expert's slot)
  GemmProblem p;
  p.type = GemmType::kMGroupedContiguous;
  p.m = 384;
  p.n = 128;
  p.k = 64;
  p.num_groups = 2;
  p.group_data = layout.data();
  const auto w = cluster_work(p, config(4, 1), 0);
  EXPECT_TRUE(w[0].valid);
  EXPECT_FALSE(w[1].valid);
  EXPECT_TRUE(w[2].valid);
  EXPECT_FALSE(w[3].valid);  // past the end
  EXPECT_EQ(w[0].b_mask, 0b0001);
  EXPECT_EQ(w[2].b_mask, 0b0100);
}

TEST(PlanCases, KGroupedClustersNeverStraddleTwoGroups) {
  // Three M blocks per group with clusters of 2 along M: the second cluster of each group has
  // one live tile and one phantom, never a tile of the next group (DeepGEMM #415, #429).
  const std::vector<int32_t> ks = {128, 320, 64};
  GemmProblem p;
  p.type = GemmType::kKGroupedContiguous;
  p.m = 3 * 128;
  p.n = 128;
  p.k = 512;
  p.num_groups = 3;
  p.group_data = ks.data();
  const TileConfig c = config(2, 1);
  uint32_t unit = 0;
  uint32_t k_base = 0;
  for (uint32_t g = 0; g < 3; ++g) {
    for (uint32_t u = 0; u < 2; ++u, ++unit) {
      const auto w = cluster_work(p, c, unit);
      EXPECT_EQ(w[0].group, g);
      EXPECT_EQ(w[0].k_begin, k_base);
      EXPECT_EQ(w[0].k_end, k_base + static_cast<uint32_t>(ks[g]));
      EXPECT_EQ(w[1].num_k_steps, w[0].num_k_steps);
      EXPECT_EQ(w[1].valid, u == 0) << "group " << g << " unit " << u;
    }
    k_base += static_cast<uint32_t>(ks[g]);
  }
  TileScheduler s(p, c, 0);
  EXPECT_TRUE(s.seek(unit - 1));
  EXPECT_FALSE(s.seek(unit)) << "no unit past the last group";
}

TEST(PlanCases, MaskedEmptyExpertHasNoUnits) {
  const std::vector<int32_t> valid_rows = {0, 5, 0, 300};
  GemmProblem p;
  p.type = GemmType::kMGroupedMasked;
  p.m = 384;
  p.n = 256;
  p.k = 64;
  p.num_groups = 4;
  p.group_data = valid_rows.data();
  const TileConfig c = config(2, 1);
  // Expert 1: one M block (5 rows) x 2 N blocks; expert 3: 3 M blocks -> 2 units of 2 x 2 N.
  std::vector<uint32_t> groups;
  for (uint32_t unit = 0;; ++unit) {
    TileScheduler s(p, c, 0);
    if (!s.seek(unit)) break;
    groups.push_back(s.work(0).group);
  }
  EXPECT_EQ(groups, (std::vector<uint32_t>{1, 1, 3, 3, 3, 3}));
  const auto w = cluster_work(p, c, 0);
  EXPECT_EQ(w[0].rows, 5u);
  EXPECT_FALSE(w[1].valid);
}

TEST(PlanCases, MulticastSwitchedOffKeepsEveryCtaLoadingItsOwn) {
  GemmProblem p;
  p.m = 512;
  p.n = 512;
  p.k = 64;
  TileConfig c = config(2, 2);
  c.multicast_a = false;
  const auto w = cluster_work(p, c, 0);
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(w[r].a_mask, 1u << r);
    EXPECT_TRUE(w[r].issue_a);
    EXPECT_EQ(popcount16(w[r].b_mask), 2u);
  }
}

TEST(PlanCases, SwizzleVisitsEveryUnitOnce) {
  GemmProblem p;
  p.m = 7 * 128;
  p.n = 5 * 128;
  p.k = 64;
  for (uint32_t swizzle : {1u, 2u, 3u, 4u, 16u}) {
    TileConfig c = config(1, 1);
    c.swizzle = swizzle;
    std::vector<int> seen(35, 0);
    for (uint32_t unit = 0; unit < 35; ++unit) {
      TileScheduler s(p, c, 0);
      ASSERT_TRUE(s.seek(unit));
      const TileWork w = s.work(0);
      ++seen[w.m_block * 5 + w.n_block];
    }
    for (int v : seen) EXPECT_EQ(v, 1) << "swizzle " << swizzle;
    TileScheduler s(p, c, 0);
    EXPECT_FALSE(s.seek(35));
  }
}

// Every band the planner may pick (1 to 64 unit-rows, src/plan/band_height.cpp: powers of two,
// square roots such as 11, 13 or 22, the whole grid), on grids of 1-24 x 1-9 tiles, for every
// cluster and the companion's 2x2 units: the walk visits every tile of a grid once, tiles past its
// edge are never valid, and seek() ends with the last unit.
TEST(PlanCases, EveryBandHeightVisitsEveryTileOnce) {
  struct Unit {
    ClusterShape cluster;
    uint32_t unit_m, unit_n;  // 0: the cluster
  };
  const Unit units[] = {{{1, 1}, 0, 0}, {{2, 1}, 0, 0}, {{1, 2}, 0, 0}, {{4, 1}, 0, 0},
                        {{1, 4}, 0, 0}, {{2, 2}, 0, 0}, {{2, 1}, 2, 2}, {{1, 2}, 2, 2}};
  for (const Unit& u : units)
    for (uint32_t m_blocks = 1; m_blocks <= 24; ++m_blocks)
      for (uint32_t n_blocks = 1; n_blocks <= 9; ++n_blocks) {
        GemmProblem p;
        p.m = m_blocks * 64 - 3;  // the last row block partial
        p.n = n_blocks * 64;
        p.k = 64;
        for (uint32_t band = 1; band <= 64; ++band) {
          TileConfig c = config(u.cluster.m, u.cluster.n);
          c.block_m = c.block_n = 64;
          c.unit_m = u.unit_m;
          c.unit_n = u.unit_n;
          c.swizzle = band;
          std::vector<int> seen(m_blocks * n_blocks, 0);
          const uint32_t unit_count = ceil_div(m_blocks, c.unit_tiles_m()) * ceil_div(n_blocks, c.unit_tiles_n());
          for (uint32_t r = 0; r < c.cluster.size(); ++r) {
            TileScheduler s(p, c, r);
            for (uint32_t unit = 0; unit < unit_count; ++unit) {
              ASSERT_TRUE(s.seek(unit)) << "unit " << unit;
              for (uint32_t step = 0; step < c.steps_per_unit(); ++step) {
                const TileWork w = s.work(step);
                if (!w.valid) continue;
                ASSERT_LT(w.m_block, m_blocks);
                ASSERT_LT(w.n_block, n_blocks);
                ++seen[w.m_block * n_blocks + w.n_block];
              }
            }
            EXPECT_FALSE(s.seek(unit_count));
          }
          for (uint32_t t = 0; t < seen.size(); ++t)
            ASSERT_EQ(seen[t], 1) << "tile " << t / n_blocks << "," << t % n_blocks << " of " << m_blocks << "x"
                                  << n_blocks << ", cluster " << u.cluster.m << "x" << u.cluster.n << ", unit "
                                  << c.unit_tiles_m() << "x" << c.unit_tiles_n() << ", band " << band;
        }
      }
}

// Serpentine K: with a wave of W units, units [W, 2W), [3W, 4W), ... walk K backwards, every CTA
// of a unit's cluster alike (they share its multicast loads), and a reversed unit's k-steps load
// every k-block once, last to first. Off (wave 0), no unit reverses.
TEST(PlanCases, SerpentineKReversesTheOddWavesWholeClusters) {
  GemmProblem p;
  p.m = 9 * 128 - 5;
  p.n = 7 * 128;
  p.k = 5 * 64 + 7;  // six k-steps, the last partial
  for (uint32_t wave : {0u, 1u, 5u, 13u})
    for (const ClusterShape& cs : {ClusterShape{1, 1}, ClusterShape{2, 1}, ClusterShape{1, 4}}) {
      TileConfig c = config(cs.m, cs.n);
      c.swizzle = 3;
      for (uint32_t unit = 0;; ++unit) {
        bool any = false;
        for (uint32_t r = 0; r < cs.size(); ++r) {
          TileScheduler s(p, c, r, wave);
          if (!s.seek(unit)) break;
          any = true;
          const TileWork w = s.work(0);
          EXPECT_EQ(w.k_reverse, wave != 0 && (unit / wave) % 2 == 1) << "unit " << unit << " wave " << wave;
          ASSERT_EQ(w.num_k_steps, 6u);
          std::vector<int> loaded(6, 0);
          for (uint32_t kk = 0; kk < w.num_k_steps; ++kk) ++loaded[w.k_step(kk)];
          for (int n : loaded) EXPECT_EQ(n, 1);
          EXPECT_EQ(w.k_step(0), w.k_reverse ? 5u : 0u);
        }
        if (!any) break;
      }
    }
}

}  // namespace
}  // namespace tilecast
