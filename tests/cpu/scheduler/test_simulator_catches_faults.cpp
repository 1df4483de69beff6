// The simulator's checks have teeth: plant the faults a broken scheduler makes and each one must
// be reported. (If a check were removed or weakened, one of these would fail.)
#include <gtest/gtest.h>

#include <string>

#include "test_helpers.hpp"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::test {
namespace {

using plan::LaunchSpec;
using plan::SimOptions;
using plan::SimResult;

bool mentions(const SimResult& r, const std::string& what) { return test::mentions(r.violations, what); }
std::string all(const SimResult& r) { return listing(r.violations); }

SimResult run(const GemmProblem& p, const TileConfig& c, const SimOptions& o, uint32_t clusters = 4) {
  const LaunchSpec launch{c, clusters};
  return plan::simulate(p, {&launch, 1}, o);
}

TEST(SimulatorCatchesFaults, TheCleanPlanPasses) {
  const SimResult r = run(dense(1000, 1000, 300), config(2, 2), {});
  EXPECT_TRUE(r.ok()) << all(r);
}

// DeepGEMM's 2-CTA peer rule, block_idx ^ 1, carried into a 2x2 cluster: rank ^ 1 flips the
// offset along M, so the "peer" computes other rows and must not share A.
TEST(SimulatorCatchesFaults, XorPeerInsideTwoByTwoSharesAAcrossMBlocks) {
  SimOptions o;
  o.mutate = [](const ClusterShape&, std::vector<TileWork>& w) {
    for (uint32_t r = 0; r < w.size(); ++r)
      if (w[r].valid && w[r ^ 1].valid) w[r].a_mask = static_cast<uint16_t>((1u << r) | (1u << (r ^ 1)));
    for (uint32_t r = 0; r < w.size(); ++r) w[r].issue_a = w[r].valid && lowest_rank(w[r].a_mask) == r;
  };
  const SimResult r = run(dense(512, 512, 128), config(2, 2), o);
  EXPECT_TRUE(mentions(r, "shares A with rank")) << all(r);
}

// Dropping the expert check: B multicast among the cluster's column regardless of expert.
TEST(SimulatorCatchesFaults, DroppedExpertCheckSharesBAcrossExperts) {
  std::vector<int32_t> layout(512);
  for (uint32_t i = 0; i < 512; ++i) layout[i] = i < 128 ? 0 : i < 384 ? 1 : 2;
  GemmProblem p = dense(512, 256, 128);
  p.type = GemmType::kMGroupedContiguous;
  p.num_groups = 3;
  p.group_data = layout.data();
  ASSERT_TRUE(run(p, config(4, 1), {}).ok());
  SimOptions o;
  o.mutate = [](const ClusterShape& cs, std::vector<TileWork>& w) {
    for (uint32_t r = 0; r < w.size(); ++r) {
      if (!w[r].valid) continue;
      uint16_t mask = 0;
      for (uint32_t x = 0; x < w.size(); ++x)
        if (w[x].valid && cs.offset_n(x) == cs.offset_n(r)) mask |= static_cast<uint16_t>(1u << x);
      w[r].b_mask = mask;
      w[r].issue_b = lowest_rank(mask) == r;
    }
  };
  const SimResult r = run(p, config(4, 1), o);
  EXPECT_TRUE(mentions(r, "shares B with rank")) << all(r);
}

// A dead peer left in the mask (a partial cluster at the edge that still multicasts to all 4).
TEST(SimulatorCatchesFaults, MulticastToAPhantom) {
  SimOptions o;
  o.mutate = [](const ClusterShape& cs, std::vector<TileWork>& w) {
    for (TileWork& t : w)
      if (t.valid) t.b_mask = cs.all_mask();
  };
  const SimResult r = run(dense(3 * 128, 128, 64), config(4, 1), o);
  EXPECT_TRUE(mentions(r, "multicasts B to phantom")) << all(r);
}

// A phantom that skips the k-steps instead of running them: its peers' barriers come up short.
TEST(SimulatorCatchesFaults, PhantomSkippingItsRoundsUnbalancesBarriers) {
  SimOptions o;
  o.mutate = [](const ClusterShape&, std::vector<TileWork>& w) {
    for (TileWork& t : w)
      if (!t.valid) t.num_k_steps = 0;
  };
  const SimResult r = run(dense(3 * 128, 128, 256), config(4, 1), o, 1);
  EXPECT_TRUE(mentions(r, "arrivals, its barrier counts")) << all(r);
  EXPECT_TRUE(mentions(r, "k-steps, rank 0 runs")) << all(r);
}

// A release rule that reaches only the releasing CTA, under the init count of the real rule:
// every empty barrier of a 2x2 cluster gets a quarter of its arrivals.
TEST(SimulatorCatchesFaults, ReleaseToSelfOnlyUnbalancesBarriers) {
  SimOptions o;
  o.protocol = [](uint32_t rank, RingProtocol& p) { p.release_mask = static_cast<uint16_t>(1u << rank); };
  const SimResult r = run(dense(512, 512, 256), config(2, 2), o, 1);
  EXPECT_TRUE(mentions(r, "gets 8 arrivals, its barrier counts 32")) << all(r);
}

// Two issuers for one operand (every CTA loads B and multicasts it): bytes land twice.
TEST(SimulatorCatchesFaults, TwoIssuersForOneTile) {
  SimOptions o;
  o.mutate = [](const ClusterShape&, std::vector<TileWork>& w) {
    for (TileWork& t : w) t.issue_b = t.valid;
  };
  const SimResult r = run(dense(512, 512, 64), config(2, 1), o);
  EXPECT_TRUE(mentions(r, "issuers per k-step, not one each")) << all(r);
}

// A tile computed by two clusters (a unit claimed twice) and one never computed.
TEST(SimulatorCatchesFaults, DuplicateAndMissingTiles) {
  SimOptions o;
  o.mutate = [](const ClusterShape&, std::vector<TileWork>& w) {
    for (TileWork& t : w)
      if (t.valid && t.m_block == 1) {
        t.row = 0;
        t.m_block = 0;
      }
  };
  const SimResult r = run(dense(256, 128, 64), config(1, 1), o);
  EXPECT_TRUE(mentions(r, "computed twice")) << all(r);
  EXPECT_TRUE(mentions(r, "never computed")) << all(r);
}

// Launches that number units differently cannot share a counter.
TEST(SimulatorCatchesFaults, CompanionWithAnotherUnitShapeIsRefused) {
  SimOptions o;
  o.mode = plan::ClaimMode::kDynamic;
  TileConfig main = config(2, 2);
  TileConfig companion = config(2, 1);  // unit left at its own cluster: 2x1, not 2x2
  const LaunchSpec launches[] = {{main, 3}, {companion, 2}};
  const SimResult r = plan::simulate(dense(1024, 1024, 64), launches, o);
  EXPECT_TRUE(mentions(r, "disagree on block sizes, unit shape")) << all(r);
}

}  // namespace
}  // namespace tilecast::test
