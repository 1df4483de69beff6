#include <gtest/gtest.h>

#include "tilecast/device/pipeline/pipeline_state.cuh"
#include "tilecast/device/pipeline/ring_protocol.cuh"

namespace tilecast {
namespace {

TEST(PipelineState, StageAndPhaseFollowTheRoundNumber) {
  PipelineState<3> s = consumer_start_state<3>();
  for (uint32_t round = 0; round < 20; ++round) {
    EXPECT_EQ(s.stage, round % 3);
    EXPECT_EQ(s.phase, (round / 3) & 1u);
    s.advance();
  }
}

TEST(PipelineState, ProducerStartsOnTheOppositeParity) {
  PipelineState<4> p = producer_start_state<4>();
  PipelineState<4> c = consumer_start_state<4>();
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(p.stage, c.stage);
    EXPECT_NE(p.phase, c.phase);
    p.advance();
    c.advance();
  }
}

TEST(RingProtocol, OperandRingReleasesOnEveryCtaAndWaitsAWholeRingAtTeardown) {
  for (const ClusterShape& cs : kClusterShapes) {
    const RingProtocol p = operand_ring_protocol(cs, 8, 5);
    EXPECT_EQ(p.release_mask, cs.all_mask());
    EXPECT_EQ(p.empty_arrivals, cs.size() * 8);
    EXPECT_EQ(p.releasers_per_cta, 8u);
    EXPECT_EQ(p.full_arrivals, 1u);
    EXPECT_EQ(p.teardown_rounds, 5u);
  }
}

TEST(ClusterShape, MasksFollowTheRankLayout) {
  const ClusterShape c22{2, 2};
  EXPECT_EQ(c22.same_rows_mask(0), 0b0101);
  EXPECT_EQ(c22.same_cols_mask(0), 0b0011);
  EXPECT_EQ(c22.same_rows_mask(3), 0b1010);
  const ClusterShape c41{4, 1};
  EXPECT_EQ(c41.same_cols_mask(2), 0b1111);
  EXPECT_EQ(c41.same_rows_mask(2), 0b0100);
  const ClusterShape c14{1, 4};
  EXPECT_EQ(c14.same_rows_mask(1), 0b1111);
  EXPECT_EQ(lowest_rank(0b1100), 2u);
  EXPECT_EQ(popcount16(0b1011), 3u);
}

}  // namespace
}  // namespace tilecast
