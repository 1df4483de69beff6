// The arch specs: SM90's is today's rules; SM100's (MISSION.md S4, S6) plans 2-CTA pairs with
// UMMA M = 256 over two SMs, only on shapes the cluster divides, the larger cluster on ties, and
// runs nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

struct Shape {
  uint32_t m, n, k;
};

std::string name(const Shape& s) { return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k); }
GemmDesc dense(const Shape& s) { return dense_desc(s.m, s.n, s.k, 1, DType::kBF16, false); }

// MISSION.md's shapes, and odd ones: row blocks that no pair divides (3, 1), a partial tile.
const Shape kShapes[] = {{8192, 8192, 8192}, {4096, 2112, 7168}, {4096, 576, 7168}, {4096, 24576, 1536},
                         {128, 2112, 7168},  {128, 7168, 2048},  {384, 1000, 4096}, {4097, 4097, 4097},
                         {1, 4096, 4096}};

std::string error_of(const GemmDesc& d, const DeviceFacts& f, const GemmConfig& o = {}) {
  try {
    rank_plans(d, f, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ArchSpecs, Sm90SpecIsTodaysRules) {
  const ArchSpec& a = arch_spec(Arch::kSM90);
  EXPECT_TRUE(a.runs_kernels);
  EXPECT_TRUE(std::equal(a.block_ms.begin(), a.block_ms.end(), std::vector<uint32_t>{64, 128, 192}.begin()));
  EXPECT_TRUE(std::ranges::equal(a.block_ns, kWgmmaBF16Widths));
  EXPECT_TRUE(std::ranges::equal(a.clusters, kClusterShapes));
  EXPECT_EQ(a.cluster_tie, ClusterTie::kSmaller);
  EXPECT_FALSE(a.cluster_divides_shape);
  EXPECT_EQ(a.mma_cta_group, 1u);
  EXPECT_EQ(&arch_spec("sm90"), &a);
  EXPECT_EQ(&arch_spec("sm100"), &arch_spec(Arch::kSM100));
  std::string e;
  try {
    arch_spec("sm89");
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("arch 'sm89' is not sm90 or sm100"), std::string::npos) << e;
}

TEST(ArchSpecs, Sm100PlansObeyItsRules) {
  const DeviceFacts b200 = DeviceFacts::b200_model();
  const ArchSpec& a = arch_spec(Arch::kSM100);
  EXPECT_FALSE(a.runs_kernels);
  for (const Shape& s : kShapes) {
    const std::vector<GemmPlan> ranked = rank_plans(dense(s), b200);
    ASSERT_FALSE(ranked.empty()) << name(s);
    for (const GemmPlan& p : ranked) {
      const GemmKernelSpec& k = p.main.kernel;
      const std::string what = name(s) + ": " + p.describe();
      EXPECT_EQ(p.arch, Arch::kSM100) << what;
      EXPECT_EQ(k.block_m, 128u) << "a CTA's half of UMMA M = 256: " << what;
      EXPECT_NE(std::ranges::find(a.clusters, k.cluster), a.clusters.end()) << what;
      EXPECT_EQ(ceil_div(s.m, k.block_m) % k.cluster.m, 0u) << "the cluster divides the row blocks: " << what;
      EXPECT_EQ(ceil_div(s.n, k.block_n) % k.cluster.n, 0u) << "and the column blocks: " << what;
      EXPECT_LE(p.main.clusters, b200.clusters_for(k.cluster.size())) << what;
      EXPECT_EQ(p.describe().rfind("sm100 ", 0), 0u) << what;
      const bool pair = k.cluster.m % 2 == 0;
      EXPECT_EQ(p.describe().find("(2-CTA MMA, M 256)") != std::string::npos, pair) << what;
    }
  }
}

TEST(ArchSpecs, Sm100PairsWinOnTheComputeBoundShapes) {
  // A CTA of a pair reads and loads half of B: at 8192 FLOP per clock a 128x256 tile alone needs
  // 1.5 times its MMA clocks of shared memory, in a pair exactly its MMA clocks.
  const DeviceFacts b200 = DeviceFacts::b200_model();
  for (const Shape& s : kShapes) {
    if (s.m < 4096 || s.m % 256 != 0) continue;
    const GemmPlan p = plan_gemm(dense(s), b200);
    EXPECT_EQ(p.main.kernel.cluster.m % 2, 0u) << name(s) << ": " << p.describe();
  }
  // Row blocks no pair divides (3 of 128 rows; 1) leave the one-CTA MMA.
  for (const Shape& s : {Shape{384, 1000, 4096}, Shape{128, 2112, 7168}})
    for (const GemmPlan& p : rank_plans(dense(s), b200)) EXPECT_EQ(p.main.kernel.cluster.m, 1u) << name(s);
}

TEST(ArchSpecs, OnTiesSm100TakesTheLargerClusterAndSm90TheSmaller) {
  // A device on which memory never binds and every cluster size fills every SM: plans of the
  // same tile then tie on their MMA time whatever their cluster.
  DeviceAttributes a = DeviceFacts::b200_model().attributes;
  a.max_active_clusters = {148, 74, 37, 18};
  a.memory_clock_khz *= 100;
  DeviceFacts f = derive_facts(a);
  f.l2_tb_per_s *= 100;
  const GemmDesc d = dense({8192, 8192, 8192});
  const std::vector<GemmPlan> sm100 = rank_plans(d, f);
  EXPECT_EQ(sm100.front().main.kernel.cluster.size(), 4u) << sm100.front().describe();
  const auto tied_pair = std::find_if(sm100.begin(), sm100.end(), [&](const GemmPlan& p) {
    return p.main.kernel.cluster == ClusterShape{2, 1} && p.main.kernel.block_n == sm100.front().main.kernel.block_n;
  });
  ASSERT_NE(tied_pair, sm100.end());
  EXPECT_LE(tied_pair->cost.total_us, sm100.front().cost.total_us * 1.02) << "a tie, not a win: " << tied_pair->describe();
  a.arch = Arch::kSM90;
  f = derive_facts(a);
  f.l2_tb_per_s *= 100;
  const GemmPlan sm90 = plan_gemm(d, f);
  EXPECT_EQ(sm90.main.kernel.cluster.size(), 1u) << sm90.describe();
  EXPECT_EQ(sm90.arch, Arch::kSM90);
}

TEST(ArchSpecs, Sm100RefusesWhatItCannotPlanByName) {
  const DeviceFacts b200 = DeviceFacts::b200_model();
  const GemmDesc d = dense({4096, 4096, 4096});
  EXPECT_NE(error_of(mgrouped_contiguous_desc(ContiguousLayout::kOffsets, 8192, 4096, 4096, 4, DType::kBF16), b200)
                .find("sm100 spec: plans dense and batched GEMMs only"),
            std::string::npos);
  GemmConfig o;
  o.companion = 1;
  EXPECT_NE(error_of(d, b200, o).find("sm100 spec: companion=1"), std::string::npos);
  o = {};
  o.fused_reduce = 1;
  EXPECT_NE(error_of(d, b200, o).find("sm100 spec: fused_reduce=1"), std::string::npos);
  o = {};
  o.k_serpentine = 1;
  EXPECT_NE(error_of(d, b200, o).find("sm100 spec: k_serpentine=1"), std::string::npos);
  o = {};
  o.block_m = 64;
  EXPECT_NE(error_of(d, b200, o).find("sm100 spec: block_m 64 is not one of its tile rows per CTA"), std::string::npos);
  o = {};
  o.cluster_m = 1;
  o.cluster_n = 2;
  EXPECT_NE(error_of(d, b200, o).find("sm100 spec: cluster 1x2 is not one of its cluster shapes"), std::string::npos);
  // A cluster that does not divide the shape, asked for: the misfit says why.
  o = {};
  o.cluster_m = 2;
  o.cluster_n = 1;
  const std::string e = error_of(dense({384, 1024, 1024}), b200, o);
  EXPECT_NE(e.find("cluster 2x1 does not divide the 3x"), std::string::npos) << e;
  EXPECT_NE(e.find("no partial cluster"), std::string::npos) << e;
  // The same asks are SM90's to take.
  EXPECT_EQ(error_of(d, DeviceFacts::h200_model(), o), "");
}

}  // namespace
}  // namespace tilecast::plan
