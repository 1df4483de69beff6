// The L2 promotion of the operand descriptors (api/call.hpp, operand_promotion): 256 bytes where
// box rows start on a 128-byte line, 128 where they start off one, and for k-grouped boxes, which
// start at each group's first column whatever the rows' alignment.
#include <gtest/gtest.h>

#include "api/call.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::test {
namespace {

TEST(OperandPromotion, WideOnALineNarrowOffOne) {
  const plan::GemmDesc d = plan::dense_desc(4104, 4104, 4104, 1, DType::kBF16, false);
  EXPECT_EQ(api::operand_promotion(d, 128), jit::TmaL2Promotion::k256B);
  for (uint8_t alignment : {16, 32, 64})
    EXPECT_EQ(api::operand_promotion(d, alignment), jit::TmaL2Promotion::k128B) << int{alignment};
}

TEST(OperandPromotion, KGroupedBoxesAreTakenAsOffALine) {
  plan::GemmDesc d = plan::dense_desc(4096, 7168, 16864, 1, DType::kFP32, false);
  d.problem.type = GemmType::kKGroupedContiguous;
  d.problem.num_groups = 4;
  EXPECT_EQ(api::operand_promotion(d, 128), jit::TmaL2Promotion::k128B);
  d.problem.type = GemmType::kMGroupedContiguous;
  EXPECT_EQ(api::operand_promotion(d, 128), jit::TmaL2Promotion::k256B);
}

}  // namespace
}  // namespace tilecast::test
