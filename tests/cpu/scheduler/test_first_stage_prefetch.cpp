// The L2 prefetch of a one-wave problem's first stage (first_stage_prefetch.cuh): the boxes the
// CTAs prefetch, together, are exactly the boxes the scheduler's units (tiles, or with split-K
// their slices) load in their first k-step, each prefetched once; larger problems prefetch nothing.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "test_helpers.hpp"
#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/first_stage_prefetch.cuh"

namespace tilecast::test {
namespace {

using Box = std::array<int32_t, 4>;  // operand (0: A, 1: B) and TMA coordinates

struct Case {
  GemmType type;
  uint32_t m, n, k, groups;
  uint32_t block_m, block_n;
  ClusterShape cluster;
  bool a_mn_major, b_mn_major;
  uint32_t splits = 1;  // split-K slices

  std::string describe() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " groups " + std::to_string(groups) +
           " splits " + std::to_string(splits) +
           " block " + std::to_string(block_m) + "x" + std::to_string(block_n) +
           " cluster " + std::to_string(cluster.m) + "x" + std::to_string(cluster.n) + (a_mn_major ? " A mn" : "") +
           (b_mn_major ? " B mn" : "");
  }
};

constexpr uint32_t kBlockK = 64;

// Counts the TMA boxes of w's first-k-step A tile (is_a) or B tile in `boxes`.
template <GemmType kType>
void add_first_k_step(std::map<Box, int>& boxes, const TileWork& w, bool is_a, const Case& c) {
  const bool mn_major = is_a ? c.a_mn_major : c.b_mn_major;
  const uint32_t tile_boxes = mn_major ? (is_a ? c.block_m : c.block_n) / kSwizzleSpanElems : 1;
  for (uint32_t box = 0; box < tile_boxes; ++box) {
    int32_t x[3];
    if (is_a)
      TileCoords<kType>::a(w, 0, kBlockK, mn_major, box, x);
    else
      TileCoords<kType>::b(w, 0, kBlockK, mn_major, box, x);
    ++boxes[{is_a ? 0 : 1, x[0], x[1], x[2]}];
  }
}

GemmProblem problem_of(const Case& c) {
  GemmProblem p = dense(c.m, c.n, c.k);
  p.type = c.type;
  p.num_groups = c.groups;
  p.k_splits = c.splits;
  return p;
}

FirstStagePrefetch plan_of(const Case& c, uint32_t ctas) {
  const uint32_t groups = c.type == GemmType::kBatched ? c.groups : 1;
  return FirstStagePrefetch::plan(ceil_div(c.m, c.block_m), ceil_div(c.n, c.block_n), groups,
                                  a_per_group(c.type) ? groups : 1, b_per_group(c.type) ? groups : 1, ctas, c.splits);
}

// The boxes every CTA of a grid of `ctas` prefetches, each counted as often as it is prefetched.
template <GemmType kType>
std::map<Box, int> prefetched(const Case& c, uint32_t ctas) {
  const FirstStagePrefetch plan = plan_of(c, ctas);
  std::map<Box, int> boxes;
  for (uint32_t cta = 0; cta < ctas; ++cta)
    for (uint32_t i = cta; i < plan.tiles; i += ctas) {
      const PrefetchTile t = plan.tile(i);
      TileWork w;
      w.row = t.block * c.block_m;
      w.col = t.block * c.block_n;
      w.group = t.group;
      if (c.splits > 1) {  // as prefetch_first_stage (producer.cuh) places a slice
        const KSlice slice = split_k_slice(c.k, c.splits, kBlockK, t.slice);
        if (slice.size == 0) continue;
        w.k_begin = slice.begin;
      }
      add_first_k_step<kType>(boxes, w, t.is_a, c);
    }
  return boxes;
}

// The boxes the scheduler's tiles load in their first k-step, each once.
template <GemmType kType>
std::map<Box, int> first_stage(const Case& c) {
  TileConfig config;
  config.block_m = c.block_m;
  config.block_n = c.block_n;
  config.block_k = kBlockK;
  config.cluster = c.cluster;
  std::map<Box, int> boxes;
  for_each_valid_work(problem_of(c), config, [&](const TileWork& w) {
    if (w.num_k_steps == 0) return;
    add_first_k_step<kType>(boxes, w, true, c);
    add_first_k_step<kType>(boxes, w, false, c);
  });
  for (auto& [box, count] : boxes) count = 1;
  return boxes;
}

template <GemmType kType>
void check(const Case& c) {
  const uint32_t tiles = ceil_div(c.m, c.block_m) * ceil_div(c.n, c.block_n) * c.groups * c.splits;
  const uint32_t cluster = c.cluster.size();
  // The smallest grid of one wave (whole clusters), and the H200's 132 SMs where that is larger.
  for (uint32_t ctas : {ceil_div(tiles, cluster) * cluster, std::max(132u, ceil_div(tiles, cluster) * cluster)}) {
    const std::map<Box, int> want = first_stage<kType>(c), got = prefetched<kType>(c, ctas);
    ASSERT_FALSE(want.empty()) << c.describe();
    EXPECT_EQ(got, want) << c.describe() << ", " << ctas << " CTAs: every first-stage box prefetched exactly once";
  }
  // One unit more than the grid holds: a later wave's first stage would wait in L2 for a wave.
  EXPECT_EQ(plan_of(c, tiles - 1).tiles, 0u) << c.describe();
}

TEST(FirstStagePrefetch, CoversEveryDenseTilesFirstStageOnce) {
  int cases = 0;
  for (const ClusterShape cluster : {ClusterShape{1, 1}, ClusterShape{2, 1}, ClusterShape{1, 2}, ClusterShape{2, 2}})
    for (const std::array<uint32_t, 2> block : {std::array<uint32_t, 2>{128, 64}, {128, 128}, {64, 256}, {192, 128}})
      for (const std::array<uint32_t, 3> mnk :
           {std::array<uint32_t, 3>{1000, 1000, 1000}, {512, 512, 512}, {255, 576, 7168}, {64, 64, 64}, {130, 200, 100}})
        for (const bool mn_major : {false, true}) {
          const Case dense_case{GemmType::kNormal, mnk[0], mnk[1], mnk[2], 1, block[0], block[1], cluster,
                                mn_major, !mn_major};
          if (ceil_div(dense_case.m, dense_case.block_m) * ceil_div(dense_case.n, dense_case.block_n) > 132) continue;
          check<GemmType::kNormal>(dense_case);
          ++cases;
        }
  EXPECT_GT(cases, 70);
}

TEST(FirstStagePrefetch, CoversEveryBatchedTilesFirstStageOnce) {
  int cases = 0;
  for (const ClusterShape cluster : {ClusterShape{1, 1}, ClusterShape{2, 1}, ClusterShape{1, 2}})
    for (const uint32_t groups : {2u, 3u, 8u, 32u})
      for (const std::array<uint32_t, 3> mnk : {std::array<uint32_t, 3>{512, 512, 512}, {256, 256, 256},
                                                {100, 300, 70}})
        for (const bool mn_major : {false, true}) {
          const Case batched{GemmType::kBatched, mnk[0], mnk[1], mnk[2], groups, 128, 128, cluster, mn_major, false};
          if (ceil_div(batched.m, 128) * ceil_div(batched.n, 128) * groups > 132) continue;
          check<GemmType::kBatched>(batched);
          ++cases;
        }
  EXPECT_GT(cases, 30);
}

TEST(FirstStagePrefetch, CoversEverySplitSlicesFirstStageOnce) {
  // Split-K kernels (cluster 1x1: the planner's split plans), slices summed by the reduce kernel or
  // across a cluster alike: every slice's first k-step, empty trailing slices none.
  int cases = 0;
  for (const std::array<uint32_t, 2> block : {std::array<uint32_t, 2>{128, 96}, {64, 96}, {128, 64}, {128, 192}})
    for (const std::array<uint32_t, 3> mnk : {std::array<uint32_t, 3>{255, 576, 7168}, {128, 2112, 7168},
                                              {8, 4096, 4096}, {130, 200, 300}})
      for (const uint32_t splits : {2u, 3u, 4u, 8u, 16u})
        for (const bool mn_major : {false, true}) {
          const Case split{GemmType::kNormal, mnk[0], mnk[1], mnk[2], 1, block[0], block[1], ClusterShape{1, 1},
                           mn_major, !mn_major, splits};
          if (ceil_div(split.m, split.block_m) * ceil_div(split.n, split.block_n) * splits > 132) continue;
          check<GemmType::kNormal>(split);
          ++cases;
        }
  EXPECT_GT(cases, 40);
}

}  // namespace
}  // namespace tilecast::test
