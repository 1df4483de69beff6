// The planner with the NN, TN and TT layouts, without a GPU: every plan's kernel carries the
// layout (so the JIT builds one kernel per layout used, and the plan cache tells them apart), a
// B stored [k, n] never gets a tile width that is not whole 64-element spans, and an override
// that asks for one is refused naming the rule.
#include <gtest/gtest.h>

#include <cstring>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

constexpr GemmLayout kLayouts[] = {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT};

GemmDesc dense(uint32_t m, uint32_t n, uint32_t k, GemmLayout layout, uint32_t batch = 1) {
  return dense_desc(m, n, k, batch, DType::kBF16, false, layout);
}

TEST(LayoutPlan, EveryRankedKernelCarriesTheLayout) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  for (GemmLayout layout : kLayouts)
    for (uint32_t batch : {1u, 4u}) {
      SCOPED_TRACE(std::string(layout_name(layout)) + " batch " + std::to_string(batch));
      const std::vector<GemmPlan> ranked = rank_plans(dense(4096, 4096, 4096, layout, batch), h200);
      ASSERT_FALSE(ranked.empty());
      for (const GemmPlan& p : ranked) {
        EXPECT_EQ(p.main.kernel.layout, layout);
        EXPECT_EQ(gemm_geometry_error(p.main.kernel), nullptr);
        if (b_mn_major(layout)) {
          EXPECT_EQ(p.main.kernel.block_n % 64, 0u) << p.describe();
        }
      }
      if (layout != GemmLayout::kNT) {
        EXPECT_NE(ranked.front().describe().find(layout_name(layout)), std::string::npos) << ranked.front().describe();
      }
    }
}

// Shapes where NT's planner picks a 96-, 144- or 176-wide tile: with B N-major the planner picks
// a width of whole spans instead; with B K-major (TT) any width stays open.
TEST(LayoutPlan, NMajorBTakesWholeSpans) {
  const DeviceFacts h200 = DeviceFacts::h200_model();
  int odd_nt_widths = 0;
  for (uint32_t n : {576u, 4097u, 2112u}) {
    const GemmPlan nt = plan_gemm(dense(4096, n, 7168, GemmLayout::kNT), h200);
    const GemmPlan nn = plan_gemm(dense(4096, n, 7168, GemmLayout::kNN), h200);
    const GemmPlan tn = plan_gemm(dense(4096, n, 7168, GemmLayout::kTN), h200);
    const GemmPlan tt = plan_gemm(dense(4096, n, 7168, GemmLayout::kTT), h200);
    EXPECT_EQ(nn.main.kernel.block_n % 64, 0u) << nn.describe();
    EXPECT_EQ(tn.main.kernel.block_n % 64, 0u) << tn.describe();
    EXPECT_EQ(tt.main.kernel.block_n, nt.main.kernel.block_n) << "B K-major in both: the same tiles";
    odd_nt_widths += nt.main.kernel.block_n % 64 != 0;
  }
  EXPECT_GT(odd_nt_widths, 0) << "none of the shapes exercised the rule";
}

TEST(LayoutPlan, AnOddWidthOverrideIsRefusedForNMajorB) {
  GemmConfig o;
  o.block_n = 144;
  try {
    plan_gemm(dense(4096, 4096, 4096, GemmLayout::kNN), DeviceFacts::h200_model(), o);
    FAIL() << "NN took a 144-wide tile";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("B is N-major (layout NN or TN): block_n must be a multiple of 64"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(plan_gemm(dense(4096, 4096, 4096, GemmLayout::kTT), DeviceFacts::h200_model(), o).main.kernel.block_n, 144u);
}

// The plan cache keys on the desc's bytes (api/prepared.cpp): descs of the same sizes in two
// layouts differ there.
TEST(LayoutPlan, DescBytesTellLayoutsApart) {
  for (GemmLayout x : kLayouts)
    for (GemmLayout y : kLayouts) {
      const GemmDesc a = dense(1024, 1024, 1024, x), b = dense(1024, 1024, 1024, y);
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a) == 0, x == y) << layout_name(x) << " vs " << layout_name(y);
    }
  EXPECT_EQ(dense_desc(64, 64, 64, 1, DType::kBF16, false).layout, GemmLayout::kNT) << "NT by default";
}

}  // namespace
}  // namespace tilecast::plan
