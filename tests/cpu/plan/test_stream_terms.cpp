// The stream term of the SM90 cost model: a CTA whose stages wait on HBM is charged the larger of
// its HBM bytes at one SM's stream rate and one turn of its ring per `stages` k-steps, and with
// it the planner runs the small-M rows of n = 4096 as cluster-summed splits rather than swapped.
#include <gtest/gtest.h>

#include <string>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

// The problem m x n x k in unsplit, unswapped block_m x block_n tiles of 1x1 clusters, `stages` deep.
GemmPlan forced(uint32_t block_m, uint32_t block_n, uint32_t m, uint32_t n, uint32_t k, uint32_t stages,
                DType out = DType::kBF16) {
  GemmConfig o;
  o.block_m = block_m;
  o.block_n = block_n;
  o.k_splits = 1;
  o.swap_ab = 0;
  o.cluster_m = o.cluster_n = 1;
  o.stages = stages;
  return plan_gemm(dense_desc(m, n, k, 1, out, false), DeviceFacts::h200_model(), o);
}

// 1x4096x7168 in unsplit 64x64 tiles: 64 CTAs, each streaming its 112 k-steps of B from HBM,
// 8 KiB a k-step: the bytes say 0.14 us a k-step, the ring's turn 2 us over 8 stages 0.25 (it
// ran 0.29, and at 2 and 4 stages 0.78 and 0.38).
TEST(StreamTerms, ANarrowTileIsChargedItsRingsTurnNotItsBytes) {
  const GemmPlan deep = forced(64, 64, 1, 4096, 7168, 8);
  const GemmPlan shallow = forced(64, 64, 1, 4096, 7168, 4);
  ASSERT_EQ(deep.main.kernel.stages, 8u);
  ASSERT_EQ(shallow.main.kernel.stages, 4u);
  const double k_steps = 7168 / 64;
  EXPECT_GT(deep.cost.stream_us, k_steps * 0.9 * 2.0 / 8) << deep.describe();
  EXPECT_LT(deep.cost.stream_us, k_steps * 2.0 / 8 * 1.01) << deep.describe();
  // Half the ring, twice the time a k-step: the turn binds, not the bytes.
  EXPECT_NEAR(shallow.cost.stream_us / deep.cost.stream_us, 2.0, 0.01);
  EXPECT_GT(deep.cost.stream_us, deep.cost.ingress_us);
}

// Where the tile is wide, its bytes bind: 128x576x7168's 128x144 tiles (34 KiB a k-step, 18 of
// them B streaming at 57 GB/s a SM) are charged the same at 4 stages as at 6, as before the ring's
// turn existed; 64x64 tiles (the test above) are not.
TEST(StreamTerms, AWideTileIsStillChargedItsBytes) {
  const GemmPlan four = forced(128, 144, 128, 576, 7168, 4), six = forced(128, 144, 128, 576, 7168, 6);
  ASSERT_EQ(four.main.kernel.stages, 4u);
  ASSERT_EQ(six.main.kernel.stages, 6u);
  EXPECT_GT(six.cost.stream_us, 0.0);
  EXPECT_DOUBLE_EQ(four.cost.stream_us, six.cost.stream_us) << four.describe() << "\n" << six.describe();
  const double k_steps = 7168 / 64, step_bytes = (128.0 + 144.0) * 64 * 2;
  EXPECT_LE(six.cost.stream_us, k_steps * step_bytes / 57e9 * 1e6 * 1.0001) << six.describe();
}

// The share of k-steps that wait on HBM is the operands' (A and B read once over what the tiles
// read): D's bytes do not stream into the ring, so the output's dtype cannot move the term. On
// 2048x576x64 D outweighs the operands, and it used to: 0.369 us in BF16, 0.467 in FP32.
TEST(StreamTerms, TheOutputDoesNotStreamIntoTheRing) {
  const GemmPlan bf16 = forced(64, 144, 2048, 576, 64, 8), fp32 = forced(64, 144, 2048, 576, 64, 8, DType::kFP32);
  EXPECT_DOUBLE_EQ(bf16.cost.stream_us, fp32.cost.stream_us) << bf16.describe() << "\n" << fp32.describe();
  EXPECT_LT(bf16.cost.stream_us, 0.1) << bf16.describe();
}

// With the turn charged, the unsplit 64x64 plan of 1x4096x7168 is dearer than the same tile in
// two slices summed in the cluster, so auto runs that split unswapped (it ran 26.4-26.7 us against
// the swapped 128x8 in 3 slices' 27.3, bench/results/2026-12-04-h200-ring-turn.md); m = 1..16 of
// n = 4096 all do, and wider N still swaps.
TEST(StreamTerms, SmallMOfN4096RunsTheClusterSummedSplit) {
  const DeviceFacts f = DeviceFacts::h200_model();
  for (uint32_t m : {1u, 8u, 16u})
    for (uint32_t k : {4096u, 7168u}) {
      const GemmPlan p = plan_gemm(dense_desc(m, 4096, k, 1, DType::kBF16, false), f);
      EXPECT_FALSE(p.main.kernel.swap_ab) << m << "x4096x" << k << ": " << p.describe();
      EXPECT_EQ(p.k_splits, 2u) << p.describe();
      EXPECT_EQ(p.main.kernel.k_cluster, 2u) << p.describe();
    }
  EXPECT_TRUE(plan_gemm(dense_desc(1, 7168, 7168, 1, DType::kBF16, false), f).main.kernel.swap_ab);
}

}  // namespace
}  // namespace tilecast::plan
