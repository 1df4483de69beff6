// The H200's plans for MISSION.md's shapes: the SM90 planner must keep choosing them (the plan
// exactly, its estimate within a rounding of the derived rates) until a change of the cost model
// means to move them. First recorded before device facts were derived from the device's
// attributes and before the architecture became a spec; re-recorded when the L2 term became SM
// ingress (no multicast credit) and L2 lines (plan_cost.cpp): clusters of 2 became 1x1 where the
// measured times tie (bench/results/2026-12-01-h200-multicast.md, the sweep), masked 6x1024 the
// 1x1 that ran 10% faster than the 2x1 recorded before, and three small-M rows other tiles
// (with ties widened to 5%: kTieFraction); then when ties went to the smaller MMA makespan before
// the wider tile: three rows here (128x24576x1536 and masked 6x20 measured faster with their new
// tiles, 128x7168x16384 no slower; bench/results/2026-12-02-h200-tall-tiles.md); then when split-K
// summed across a cluster entered auto: 128x7168x16384 in clusters of its 2 slices (75.3-75.7 us
// against 77.0-78.2 through the reduce kernel; bench/results/2026-12-02-h200-cluster-reduce.md);
// then when a cluster-summed split within 10% went before the reduce kernel's: 128x576x7168 in 8
// slices summed in the cluster (12.9-13.0 us against 14.5-14.7 in 12 slices and the reduce kernel;
// bench/results/2026-12-02-h200-decode-splits.md); then when operand reads were charged at the
// rate they reach (70% of a copy's), HBM's time and the on-chip bound were combined as a p-norm and
// the one-warpgroup charge became a bound beside shared memory's (plan_cost.cpp): 128x2112x7168
// summed in the cluster (22.2-22.6 us, the old plan 22.0-22.4), 128x576x7168 in 64x96 tiles
// (13.3 against 13.6), 128x4096x7168 in 2 slices summed in the cluster (29.7-29.9 against
// 31.2-31.6), masked 32x20 in 64x176 tiles (the masked suite's rows within 5% of their sweep's
// best; bench/results/2026-12-02-h200-operand-stream.md). Every estimate moved with the p-norm.
// Then when ping-pong kernels entered auto by rule (PingpongReach): the m = 4096 rows of
// K 512 and 1536 in 128x128 tiles in turns, 3% and 1.4% faster (their estimates are the
// cooperative 128x128's: the terms do not model the epilogue the turns hide;
// bench/results/2026-12-04-h200-pingpong.md). Then when a 1x1 unsplit pick gave way to its tied
// transpose wider along N: 128x7168x2048 in 64x128 tiles (16.6 against 16.9 us;
// bench/results/2026-12-04-h200-gpc-units.md); then when a one-wave pick of one tile a CTA where
// HBM binds gave way to its tied half-width tile: 128x32768x512 in 128x128 tiles (the sweeps'
// best; the same page, runs G and H). Then when plans whose operands overflow L2 took the band
// height whose walk reads the fewest operand bytes from HBM in l2_reuse.hpp's model (band_height):
// four rows here, tiles and clusters unchanged (bench/results/2026-12-04-h200-last-wave.md); then
// when grouped walks took it too, played on their surrogate (band_height.cpp): three m-grouped rows,
// unmeasured (the model's 4.01 -> 2.53 GB on the K = 7168 rows, as on their dense twins). Then
// when that model gave operands half of L2 (l2_reuse.hpp, kOperandL2Share: Nsight Compute's HBM
// bytes matched within 4% on three of these shapes at bands 2-32): three m = 4096 rows, each as
// fast or faster in alternating processes (4096x32768x512 1.054-1.060x cuBLAS against
// 1.033-1.054x, 4096x7168x2048 0.987-0.989x against 0.984x, 4096x2112x7168 0.976-0.978x against
// 0.975x; bench/results/2026-12-05-h200-serpentine-l2-share.md), and four m-grouped rows to band 16
// (as fast as at their old bands, within -0.5% to +0.8% against cuBLAS in their own processes:
// bench/results/2026-12-05-h200-grouped-bands-l2-drift.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

// The H200 model's peak moved from 989.0 to the datasheet's 989.4 TFLOPS when it became
// 132 SMs x 1830 MHz x 4096 FLOP: estimates may move that much, plans not at all.
constexpr double kEstimateTolerance = 0.01;

struct Recorded {
  const char* name;
  GemmDesc desc;
  const char* plan;  // describe() up to its estimate
  double est_us;
};

GemmDesc dense(uint32_t m, uint32_t n, uint32_t k) { return dense_desc(m, n, k, 1, DType::kBF16, false); }
GemmDesc mgrouped(uint32_t groups, uint32_t m, uint32_t n, uint32_t k) {
  return mgrouped_contiguous_desc(ContiguousLayout::kOffsets, int64_t{groups} * m, n, k, groups, DType::kBF16);
}
GemmDesc masked(uint32_t groups, uint32_t m) { return mgrouped_masked_desc(m, 7168, 4096, groups, m, DType::kBF16); }

const std::vector<Recorded>& recorded() {
  static const std::vector<Recorded> r = {
      {"8192^3", dense(8192, 8192, 8192), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 1329.1},
      {"4096x2112x7168", dense(4096, 2112, 7168), "128x176x64 stages 5 cluster 1x1 mc AB clusters 132 band 4", 173.0},
      {"4096x576x7168", dense(4096, 576, 7168), "128x144x64 stages 6 cluster 1x1 mc AB clusters 128", 53.1},
      {"4096x24576x1536", dense(4096, 24576, 1536), "128x128x64 stages 6 cluster 1x1 mc AB clusters 132 ping-pong band 32", 488.6},
      {"4096x32768x512", dense(4096, 32768, 512), "128x128x64 stages 6 cluster 1x1 mc AB clusters 132 ping-pong band 32", 221.1},
      {"4096x7168x16384", dense(4096, 7168, 16384), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 1163.3},
      {"4096x4096x7168", dense(4096, 4096, 7168), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 291.1},
      {"4096x7168x2048", dense(4096, 7168, 2048), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 32", 145.7},
      {"128x2112x7168", dense(128, 2112, 7168), "128x96x64 stages 5 cluster 1x1 mc AB clusters 22 split-K 4 in cluster",
       16.3},
      {"128x576x7168", dense(128, 576, 7168), "64x96x64 stages 8 cluster 1x1 mc AB clusters 12 split-K 8 in cluster",
       6.9},
      {"128x24576x1536", dense(128, 24576, 1536), "128x192x64 stages 5 cluster 1x1 mc AB clusters 128", 28.3},
      {"128x32768x512", dense(128, 32768, 512), "128x128x64 stages 6 cluster 1x1 mc AB clusters 132", 14.0},
      {"128x7168x16384", dense(128, 7168, 16384), "128x128x64 stages 4 cluster 1x1 mc AB clusters 56 split-K 2 in cluster",
       92.4},
      {"128x4096x7168", dense(128, 4096, 7168), "128x64x64 stages 7 cluster 1x1 mc AB clusters 64 split-K 2 in cluster",
       27.2},
      {"128x7168x2048", dense(128, 7168, 2048), "64x128x64 stages 8 cluster 1x1 mc AB clusters 112", 13.2},
      {"mgrouped 4x8192 6144x7168", mgrouped(4, 8192, 6144, 7168), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16",
       3416.8},
      {"mgrouped 4x8192 7168x3072", mgrouped(4, 8192, 7168, 3072), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 1714.4},
      {"mgrouped 4x8192 4096x4096", mgrouped(4, 8192, 4096, 4096), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 1330.3},
      {"mgrouped 4x8192 4096x2048", mgrouped(4, 8192, 4096, 2048), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132", 666.1},
      {"mgrouped 8x4096 6144x7168", mgrouped(8, 4096, 6144, 7168), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16",
       3418.8},
      {"mgrouped 8x4096 7168x3072", mgrouped(8, 4096, 7168, 3072), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16",
       1715.9},
      {"mgrouped 8x4096 4096x4096", mgrouped(8, 4096, 4096, 4096), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132 band 16", 1331.6},
      {"mgrouped 8x4096 4096x2048", mgrouped(8, 4096, 4096, 2048), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132", 667.2},
      {"masked 32x192", masked(32, 192), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132", 795.4},
      {"masked 6x1024", masked(6, 1024), "128x256x64 stages 4 cluster 1x1 mc AB clusters 132", 422.3},
      {"masked 32x20", masked(32, 20), "64x176x64 stages 7 cluster 1x1 mc AB clusters 132", 666.4},
      {"masked 6x20", masked(6, 20), "64x176x64 stages 7 cluster 1x1 mc AB clusters 132", 125.8},
  };
  return r;
}

TEST(Sm90PlansUnchanged, MissionShapesKeepTheirRecordedPlans) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  for (const Recorded& r : recorded()) {
    const GemmPlan p = plan_gemm(r.desc, h200);
    const std::string text = p.describe();
    EXPECT_EQ(text.substr(0, text.find(" est ")), r.plan) << r.name;
    EXPECT_NEAR(p.cost.total_us, r.est_us, kEstimateTolerance * r.est_us) << r.name;
  }
}

// An unsplit 1x1 pick gives way to its tied transpose wider along N (rank_plans), and only there:
// a pair's pick and a split's keep their 128x64 (the measurements behind the rule are in its comment).
TEST(Sm90PlansUnchanged, TiedTransposeWiderAlongNOnlyForUnsplitLoneTiles) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  const std::vector<GemmPlan> ranked = rank_plans(dense(1024, 1024, 1024), h200);
  const GemmKernelSpec& front = ranked.front().main.kernel;
  EXPECT_EQ(front.block_m, 64u);
  EXPECT_EQ(front.block_n, 128u);
  EXPECT_EQ(front.cluster, (ClusterShape{1, 1}));
  EXPECT_EQ(ranked.front().k_splits, 1u);
  // The transpose it passed is in the tie band: the front costs at most 5% more by the terms.
  const auto transpose = std::find_if(ranked.begin() + 1, ranked.end(), [](const GemmPlan& p) {
    const GemmKernelSpec& k = p.main.kernel;
    return k.block_m == 128 && k.block_n == 64 && k.cluster == ClusterShape{1, 1} && p.k_splits == 1 && !k.pingpong;
  });
  ASSERT_NE(transpose, ranked.end());
  EXPECT_LE(ranked.front().cost.total_us, transpose->cost.total_us * 1.05);

  GemmDesc odd = dense(1000, 1000, 1000);
  assume_padded_rows(odd);  // rows 2,000 bytes apart, as a call's packed operands have them
  const GemmKernelSpec pair = plan_gemm(odd, h200).main.kernel;
  EXPECT_EQ(pair.block_m, 128u) << "1000^3: 128x64 in 1x2 ran ahead of 64x128 in 2x1";
  EXPECT_EQ(pair.cluster, (ClusterShape{1, 2}));
  const GemmPlan split = plan_gemm(dense(128, 4096, 7168), h200);
  EXPECT_EQ(split.main.kernel.block_m, 128u) << "summed in the cluster, 64x128 ran 7.5-15.7% behind";
  EXPECT_GT(split.k_splits, 1u);
}

// Where HBM binds, a one-wave pick of one tile a CTA gives way to its tied half-width tile, two a CTA
// (rank_plans); not where the MMAs or L2 bind.
TEST(Sm90PlansUnchanged, HalfWidthTilesWhereOneTileACtaWaitsOnHbm) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  const GemmPlan stream = plan_gemm(dense(128, 32768, 512), h200);
  EXPECT_EQ(stream.main.kernel.block_n, 128u) << "128x256 ran 4.2-5.9% behind 128x128 in the sweeps";
  EXPECT_GT(stream.cost.waves, 1.0);
  EXPECT_GT(stream.cost.hbm_us, std::max(stream.cost.mma_us, stream.cost.l2_us));
  const GemmPlan experts = plan_gemm(mgrouped_masked_desc(4096, 4096, 2048, 6, 20, DType::kBF16), h200);
  EXPECT_EQ(experts.main.kernel.block_m, 64u);
  EXPECT_EQ(experts.main.kernel.block_n, 96u) << "masked g6 m~20 n4096 k2048: 64x96 ran 2.7% ahead of 64x192";
  // Compute-bound, one tile a CTA: the wide tile stays.
  const GemmPlan square = plan_gemm(dense(2048, 2048, 2048), h200);
  EXPECT_EQ(square.main.kernel.block_n, 256u);
  EXPECT_LE(square.cost.waves, 1.0);
}

}  // namespace
}  // namespace tilecast::plan
