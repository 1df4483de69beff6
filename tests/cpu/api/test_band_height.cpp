// The unit order's band height (src/plan/band_height.cpp) as the planner picks it, forward and
// with serpentine K: what the LRU model of L2 (l2_reuse.hpp) says reads least from HBM, where it is
// weighed and where not, and the refusals of serpentine K.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/plan/l2_reuse.hpp"
#include "plan_error.hpp"

namespace tilecast::plan {
namespace {

GemmDesc dense(uint32_t m, uint32_t n, uint32_t k) { return dense_desc(m, n, k, 1, DType::kBF16, false); }

// Unsplit cooperative 128x256 tiles in 1x1: the tile the band tests play.
GemmConfig wide_tiles() {
  GemmConfig wide;
  wide.block_m = 128;
  wide.block_n = 256;
  wide.cluster_m = wide.cluster_n = 1;
  wide.k_splits = 1;
  wide.pingpong = 0;
  return wide;
}

// The unit order's band height (band_height.cpp): where the operands overflow L2 and
// the grid holds more than one wave, the band whose walk reads the fewest operand bytes from HBM
// in l2_reuse.hpp's model, if it reads 5% less than the default 8's; elsewhere 8.
TEST(GemmPlanner, BandHeightIsTheOneThatReadsLeastFromHbm) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  const GemmConfig wide = wide_tiles();
  // Long K: every wave reads its own operands again, fewest at sqrt(132 units x 256 / 128) = 16.
  const GemmPlan p8192 = plan_gemm(dense(8192, 8192, 8192), h200, wide);
  EXPECT_EQ(p8192.schedule.swizzle, 16u);
  EXPECT_EQ(plan_gemm(dense(4096, 7168, 16384), h200, wide).schedule.swizzle, 16u);
  // The model's choice is the band that reads least: none of the others it weighs reads less.
  const double chosen = operand_hbm_bytes(p8192.kernel_problem(), p8192.schedule, p8192.main.clusters, h200.l2_bytes);
  for (uint32_t band : {1u, 2u, 4u, 8u, 32u, 64u}) {
    TileConfig other = p8192.schedule;
    other.swizzle = band;
    EXPECT_LE(chosen, operand_hbm_bytes(p8192.kernel_problem(), other, p8192.main.clusters, h200.l2_bytes)) << band;
  }
  // Units of two tiles along M (2x1): 66 units of 256 x 256, whose best band is the default's.
  GemmConfig pairs = wide;
  pairs.cluster_m = 2;
  EXPECT_EQ(plan_gemm(dense(8192, 8192, 8192), h200, pairs).schedule.swizzle, 8u);
  // Fewer SMs, other bands: an H20's 78 units of 128 x 256.
  EXPECT_EQ(plan_gemm(dense(4096, 7168, 16384), DeviceFacts::h20_model(), wide).schedule.swizzle, 12u);
  // No band below 4, where the model undercounts what drifting waves read (2.31 against the
  // H200's 2.90 GB at band 1 on 8192^3): the H100 PCIe's 114 units on 4096x2112x7168 read least
  // at band 1 on paper and take 4.
  EXPECT_EQ(plan_gemm(dense(4096, 2112, 7168), DeviceFacts::h100_pcie_model()).schedule.swizzle, 4u);
  // Short K: a band sweeps its rows of A along N from L2, and the whole height reads B once.
  GemmConfig turns = wide;
  turns.block_n = 128;
  turns.pingpong = 1;
  EXPECT_EQ(plan_gemm(dense(4096, 24576, 1536), h200, turns).schedule.swizzle, 32u);
  // 128x176 on 4096x2112x7168: 4, whose walk reads 0.164 GB against 0.179 at 8 in the model and
  // on the H200 alike (bench/results/2026-12-05-h200-serpentine-l2-share.md).
  GemmConfig w176 = wide;
  w176.block_n = 176;
  EXPECT_EQ(plan_gemm(dense(4096, 2112, 7168), h200, w176).schedule.swizzle, 4u);
  // Operands that fit in the model's share of L2 (2 x 4096 x 1536 x 2 B = 24 MiB of the H200's
  // 30: kOperandL2Share): the default.
  EXPECT_EQ(plan_gemm(dense(4096, 4096, 1536), h200, wide).schedule.swizzle, 8u);
  // One wave (32 x 2 = 64 units on 132 SMs), however large K: the default.
  EXPECT_EQ(plan_gemm(dense(4096, 512, 65536), h200, wide).schedule.swizzle, 8u);
  // Split-K: the default.
  GemmConfig split = wide;
  split.k_splits = 2;
  EXPECT_EQ(plan_gemm(dense(8192, 8192, 8192), h200, split).schedule.swizzle, 8u);
  // Batched and grouped problems walk each group's grid in turn, played on the planner's surrogate
  // of their group data, never on the caller's (device memory: a pointer the planner must not
  // read). Two groups of 8192 x 8192 x 8192 each (a batch, experts' rows, masked buffers, K
  // columns) take the dense 8192^3's band.
  EXPECT_EQ(plan_gemm(dense_desc(8192, 8192, 8192, 2, DType::kBF16, false), h200, wide).schedule.swizzle, 16u);
  const auto* device_data = reinterpret_cast<const int32_t*>(uintptr_t{16});
  GemmDesc experts = mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 2 * 8192, 8192, 8192, 2, DType::kBF16);
  GemmDesc masked = mgrouped_masked_desc(8192, 8192, 8192, 2, 8192, DType::kBF16);
  GemmDesc k_groups = kgrouped_desc(8192, 8192, 2 * 8192, 2, DType::kBF16, false);
  for (GemmDesc* d : {&experts, &masked, &k_groups}) {
    d->problem.group_data = device_data;
    EXPECT_EQ(plan_gemm(*d, h200, wide).schedule.swizzle, 16u) << static_cast<int>(d->problem.type);
  }
  // The caller's band stands.
  GemmConfig given = wide;
  given.swizzle = 4;
  EXPECT_EQ(plan_gemm(dense(8192, 8192, 8192), h200, given).schedule.swizzle, 4u);
  // And the plan says so where it is not the default.
  EXPECT_NE(p8192.describe().find(" band 16 "), std::string::npos);
  EXPECT_EQ(plan_gemm(dense(4096, 4096, 1536), h200, wide).describe().find(" band "), std::string::npos);
}

// Serpentine K (k_serpentine=1), only when asked for: the kernel's spec carries it, and the band is
// the one that reads least with odd waves walking K backwards (l2_reuse.hpp): on 8192^3, 16 as
// forward waves, at 1.04 GB in the model against 1.23 (the H200: 1.09 against 1.23; it ran no
// faster there, bench/results/2026-12-05-h200-serpentine-l2-share.md). Refused where it cannot
// run, with the reason.
TEST(GemmPlanner, SerpentineKOnlyWhenAskedForWithItsOwnBand) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  const GemmConfig wide = wide_tiles();
  const GemmPlan forward = plan_gemm(dense(8192, 8192, 8192), h200, wide);
  EXPECT_FALSE(forward.main.kernel.k_serpentine);
  GemmConfig serpentine = wide;
  serpentine.k_serpentine = 1;
  const GemmPlan p = plan_gemm(dense(8192, 8192, 8192), h200, serpentine);
  EXPECT_TRUE(p.main.kernel.k_serpentine);
  EXPECT_EQ(p.schedule.swizzle, 16u);
  EXPECT_EQ(forward.schedule.swizzle, 16u);
  const double serpentine_bytes =
      operand_hbm_bytes(p.kernel_problem(), p.schedule, p.main.clusters, h200.l2_bytes, true);
  const double forward_bytes =
      operand_hbm_bytes(forward.kernel_problem(), forward.schedule, forward.main.clusters, h200.l2_bytes);
  EXPECT_LT(serpentine_bytes, 0.9 * forward_bytes);
  EXPECT_NE(p.describe().find(" k-serpentine "), std::string::npos) << p.describe();
  EXPECT_EQ(forward.describe().find("serpentine"), std::string::npos);
  EXPECT_NE(spec_fingerprint(p.main.kernel), spec_fingerprint(forward.main.kernel));
  // Every plan auto makes walks K forwards.
  EXPECT_FALSE(plan_gemm(dense(8192, 8192, 8192), h200).main.kernel.k_serpentine);
  // Refused: k-grouped (the k-tail), with a companion, fused.
  EXPECT_NE(error_of(kgrouped_desc(4096, 7168, 16864, 4, DType::kFP32, true), serpentine)
                .find("config: k_serpentine=1 is not for k-grouped GEMMs"),
            std::string::npos);
  GemmConfig companion = serpentine;
  companion.cluster_m = companion.cluster_n = 2;
  companion.companion = 1;
  EXPECT_NE(error_of(dense(4096, 4096, 4096), companion).find("runs without a companion launch"), std::string::npos);
  GemmConfig fused = serpentine;
  fused.k_splits = 2;
  fused.fused_reduce = 1;
  EXPECT_NE(error_of(dense(128, 4096, 7168), fused).find("not for fused_reduce=1 kernels"), std::string::npos);
}

}  // namespace
}  // namespace tilecast::plan
