// The L2 promotion of the operand descriptors (api/call.hpp, operand_promotion): 256 bytes where
// box rows start on a 128-byte line, 128 where they start off one, and for k-grouped boxes, which
// start at each group's first column whatever the rows' alignment (plan::box_row_alignment).
#include <gtest/gtest.h>

#include "api/call.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::test {
namespace {

TEST(OperandPromotion, WideOnALineNarrowOffOne) {
  EXPECT_EQ(api::operand_promotion(128), jit::TmaL2Promotion::k256B);
  for (uint8_t alignment : {16, 32, 64})
    EXPECT_EQ(api::operand_promotion(alignment), jit::TmaL2Promotion::k128B) << int{alignment};
}

TEST(OperandPromotion, KGroupedBoxesAreTakenAsOffALine) {
  plan::GemmDesc d = plan::dense_desc(4096, 7168, 16864, 1, DType::kFP32, false);
  d.problem.type = GemmType::kKGroupedContiguous;
  d.problem.num_groups = 4;
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, true, false)), jit::TmaL2Promotion::k128B);
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, false, false)), jit::TmaL2Promotion::k128B);
  d.problem.type = GemmType::kMGroupedContiguous;
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, true, false)), jit::TmaL2Promotion::k256B);
}

// Swapped operands: the kernel's A is the caller's B, and its promotion follows B's rows.
TEST(OperandPromotion, SwappedOperandsTakeTheOtherOperandsRows) {
  plan::GemmDesc d = plan::dense_desc(8, 4096, 4104, 1, DType::kBF16, false);
  d.a_row_alignment = 16;
  d.b_row_alignment = 128;
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, true, false)), jit::TmaL2Promotion::k128B);
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, true, true)), jit::TmaL2Promotion::k256B);
  EXPECT_EQ(api::operand_promotion(plan::box_row_alignment(d, false, true)), jit::TmaL2Promotion::k128B);
}

}  // namespace
}  // namespace tilecast::test
