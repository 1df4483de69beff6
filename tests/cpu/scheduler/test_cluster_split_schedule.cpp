// Split-K across a cluster (TileConfig::k_cluster, GemmKernelSpec::k_cluster) in the scheduler:
// every CTA of a launch cluster walks the same tiles, valid or phantom alike (so that the cluster
// reduce's barriers balance), CTA rank s computes slice s of each, and over a launch of any number
// of clusters every (batch, tile, slice) is computed exactly once, the slices of a tile end to end
// over K, with nothing multicast.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "test_helpers.hpp"
#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::test {
namespace {

struct Seen {
  uint32_t times = 0;
  uint32_t k_begin = 0, k_end = 0;
};

// Plays a launch of `clusters` clusters of `slices` CTAs over `p` (k_splits == slices) and checks
// the walk.
void expect_cluster_walk(const GemmProblem& p, uint32_t block_m, uint32_t block_n, uint32_t slices, uint32_t clusters) {
  TileConfig c;
  c.block_m = block_m;
  c.block_n = block_n;
  c.k_cluster = slices;
  const std::string what = std::to_string(p.num_groups) + "x" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                           std::to_string(p.k) + " tile " + std::to_string(block_m) + "x" + std::to_string(block_n) +
                           " slices " + std::to_string(slices) + " clusters " + std::to_string(clusters);
  const uint32_t groups = p.type == GemmType::kBatched ? p.num_groups : 1;
  // (batch, row, col, slice) -> what was computed there
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, Seen> seen;
  for (uint32_t q = 0; q < clusters; ++q) {
    std::vector<TileScheduler> ranks;
    for (uint32_t r = 0; r < slices; ++r) ranks.emplace_back(p, c, r);
    for (uint32_t unit = q;; unit += clusters) {
      bool more = ranks[0].seek(unit);
      for (uint32_t r = 1; r < slices; ++r)
        ASSERT_EQ(ranks[r].seek(unit), more) << what << ": rank " << r << " ends its walk apart from rank 0";
      if (!more) break;
      ASSERT_EQ(ranks[0].steps_per_unit(), 1u) << what;
      const TileWork w0 = ranks[0].work(0);
      for (uint32_t r = 0; r < slices; ++r) {
        const TileWork w = ranks[r].work(0);
        // The same tile on every rank, valid or phantom alike.
        ASSERT_EQ(w.valid, w0.valid) << what << " unit " << unit << " rank " << r;
        ASSERT_EQ(std::tie(w.group, w.row, w.col, w.rows, w.cols), std::tie(w0.group, w0.row, w0.col, w0.rows, w0.cols))
            << what << " unit " << unit << " rank " << r;
        if (!w.valid) continue;
        // Nothing shared: each CTA loads its own slice.
        EXPECT_EQ(w.a_mask, 1u) << what;
        EXPECT_EQ(w.b_mask, 1u) << what;
        EXPECT_TRUE(w.issue_a && w.issue_b) << what;
        const uint32_t slice = w.d_group / groups, batch = w.d_group % groups;
        EXPECT_EQ(slice, r) << what << ": rank " << r << " computes slice " << slice;
        EXPECT_EQ(batch, w.group) << what;
        const KSlice expected = split_k_slice(p.k, p.k_splits, c.block_k, r);
        EXPECT_EQ(w.k_begin, expected.begin) << what << " rank " << r;
        EXPECT_EQ(w.k_end, expected.begin + expected.size) << what << " rank " << r;
        EXPECT_EQ(w.num_k_steps, ceil_div(expected.size, c.block_k)) << what << " rank " << r;
        Seen& s = seen[{batch, w.row, w.col, slice}];
        ++s.times;
        s.k_begin = w.k_begin;
        s.k_end = w.k_end;
      }
    }
  }
  const uint64_t tiles = uint64_t{ceil_div(p.m, block_m)} * ceil_div(p.n, block_n) * groups;
  ASSERT_EQ(seen.size(), tiles * slices) << what << ": some (tile, slice) was never computed";
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> k_end_of;  // the slices, end to end
  for (const auto& [key, s] : seen) {
    EXPECT_EQ(s.times, 1u) << what << ": a (tile, slice) computed " << s.times << " times";
    const auto [batch, row, col, slice] = key;
    uint32_t& next = k_end_of[{batch, row, col}];
    EXPECT_EQ(s.k_begin, next) << what << " slice " << slice;
    next = s.k_end;
  }
  for (const auto& [tile, end] : k_end_of) EXPECT_EQ(end, p.k) << what << ": the slices end short of K";
}

TEST(ClusterSplitSchedule, EveryTileSliceOnceEachClusterOnOneTile) {
  const uint32_t ms[] = {1, 64, 65, 129, 255};
  const uint32_t ns[] = {8, 300, 576, 1001};
  const uint32_t ks[] = {64, 136, 1000, 7168};
  const uint32_t tiles[][2] = {{64, 144}, {128, 128}, {128, 96}};
  for (uint32_t slices : {2u, 4u, 8u})
    for (uint32_t m : ms)
      for (uint32_t n : ns)
        for (uint32_t k : ks)
          for (const auto& t : tiles)
            for (uint32_t clusters : {1u, 3u, 15u, 66u}) {
              GemmProblem p = dense(m, n, k);
              p.k_splits = slices;
              expect_cluster_walk(p, t[0], t[1], slices, clusters);
              if (HasFatalFailure()) return;
            }
}

TEST(ClusterSplitSchedule, BatchesWalkTheirOwnTiles) {
  for (uint32_t slices : {2u, 4u, 8u})
    for (uint32_t batches : {2u, 3u})
      for (uint32_t clusters : {1u, 4u, 15u}) {
        GemmProblem p = dense(65, 1000, 3000);
        p.type = GemmType::kBatched;
        p.num_groups = batches;
        p.k_splits = slices;
        expect_cluster_walk(p, 64, 144, slices, clusters);
        if (HasFatalFailure()) return;
      }
}

// The same walk with k_cluster 1 is the split walk it was: rank 0 of a 1x1 cluster, slice-major.
TEST(ClusterSplitSchedule, KCluster1KeepsTheSliceMajorWalk) {
  GemmProblem p = dense(255, 576, 7168);
  p.k_splits = 4;
  TileConfig c;
  c.block_m = 128;
  c.block_n = 128;
  TileScheduler s(p, c, 0);
  const uint32_t tiles = ceil_div(p.m, c.block_m) * ceil_div(p.n, c.block_n);
  for (uint32_t unit = 0; unit < tiles * p.k_splits; ++unit) {
    ASSERT_TRUE(s.seek(unit));
    EXPECT_EQ(s.work(0).d_group, unit / tiles) << "unit " << unit;
  }
  EXPECT_FALSE(s.seek(tiles * p.k_splits));
}

}  // namespace
}  // namespace tilecast::test
