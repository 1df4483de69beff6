// The pipeline model (plan/pipeline_model.hpp): the kernel's protocol holds over random problems
// and interleavings, and each fault planted in the release rule or the teardown is caught by the
// check named for it, on a problem and seed whose clean run passes (so it is the fault that is
// caught). The fault problems multicast for real: clusters of 2 and 4 CTAs, 8 k-steps a tile,
// 64 to 128 rounds a CTA on rings of 2 to 4 stages.
#include <gtest/gtest.h>

#include "random_problem.hpp"
#include "test_helpers.hpp"
#include "tilecast/device/kernels/gemm_sm90/spec.cuh"
#include "tilecast/plan/pipeline_model.hpp"

namespace tilecast::test {
namespace {

using plan::PipelineModelOptions;
using plan::PipelineModelResult;

// The multicasting cluster shapes.
constexpr ClusterShape kShared[] = {{2, 1}, {1, 2}, {4, 1}, {2, 2}};

// What each check's violations say.
const std::string kOverwrite = "overwrites stage";
const std::string kExited = "exited";
const std::string kDeadlock = "deadlock:";
const std::string kEarlyRead = "loads landed";
const std::string kOpenPhase = "ends inside phase";
const std::string kSkippedBlock = "which would block";
const std::string kBiasOverwrite = "overwrites bias slot";

PipelineModelResult play(const GemmProblem& p, const TileConfig& c, uint32_t clusters, const PipelineModelOptions& o) {
  return plan::play_pipeline(p, {c, clusters}, o);
}

std::string shape(const ClusterShape& cs) { return std::to_string(cs.m) + "x" + std::to_string(cs.n); }

// A random problem and launch for the model: the kernel's stage counts (2 at the least, see
// OneStageDeadlocks), 4 or 8 consumer warps, few clusters so that each CTA runs many rounds.
struct ModelCase {
  TileConfig config;
  std::unique_ptr<OwnedProblem> problem;
  PipelineModelOptions options;
  uint32_t clusters = 1;

  ModelCase(ProblemGenerator& gen, const ClusterShape& cluster, GemmType type) : config(gen.config(cluster)) {
    problem = gen.make(type, config.block_m, config.block_n, config.block_k);
    options.stages = gen.uniform(2, 6);
    options.consumer_warps = gen.coin() ? 4 : 8;
    clusters = gen.uniform(1, 6);
  }
  std::string describe() const {
    return problem->describe() + " cluster " + shape(config.cluster) + " x" + std::to_string(clusters) + " stages " +
           std::to_string(options.stages) + " warps " + std::to_string(options.consumer_warps) + " seed " +
           std::to_string(options.seed) + (options.exit_barrier ? "" : " no exit barrier");
  }
};

// 6 cluster shapes x 5 gemm types x 20 problems, each under 3 interleavings: two with the kernel's
// protocol and exit, one with the exit barrier off (the teardown alone must then keep every
// arrival off exited CTAs). The producer skips its first pass's waits, as the kernel does; each
// would have passed.
TEST(PipelineModel, KernelProtocolHoldsOverRandomProblems) {
  ProblemGenerator gen(20261201);
  uint64_t runs = 0, rounds = 0, multicasts = 0;
  for (const auto& [cluster, type] : every_shape_and_type()) {
    for (int i = 0; i < 20; ++i) {
      ModelCase c(gen, cluster, type);
      for (int run = 0; run < 3; ++run) {
        c.options.seed = gen.rng()();
        c.options.exit_barrier = run < 2;
        c.options.bias_slots = run == 1 ? 2 : 0;  // the epilogue's bias ring beside it
        const PipelineModelResult r = play(c.problem->problem, c.config, c.clusters, c.options);
        ASSERT_TRUE(r.ok()) << c.describe() << ":\n" << listing(r.violations);
        ++runs;
        rounds += r.stats.rounds;
        multicasts += r.stats.multicast_loads;
      }
    }
  }
  EXPECT_EQ(runs, 6u * 5 * 20 * 3);
  EXPECT_GT(multicasts, 0u);
  RecordProperty("rounds", std::to_string(rounds));
}

// Ping-pong: the same random problems with the two warpgroups taking tiles in turn, each round
// waited for and released by its turn's four warps only (GemmKernelSpec::pingpong), with the
// bias ring's slots read by the turn's warpgroup and passed over by the other.
TEST(PipelineModel, TakingTurnsHoldsOverRandomProblems) {
  ProblemGenerator gen(20261204);
  uint64_t runs = 0, multicasts = 0;
  for (const auto& [cluster, type] : every_shape_and_type()) {
    for (int i = 0; i < 10; ++i) {
      ModelCase c(gen, cluster, type);
      c.options.consumer_warps = 8;
      c.options.turns = true;
      for (int run = 0; run < 2; ++run) {
        c.options.seed = gen.rng()();
        c.options.exit_barrier = run == 0;
        c.options.bias_slots = run == 0 ? 2 : 0;
        const PipelineModelResult r = play(c.problem->problem, c.config, c.clusters, c.options);
        ASSERT_TRUE(r.ok()) << c.describe() << " in turns:\n" << listing(r.violations);
        ++runs;
        multicasts += r.stats.multicast_loads;
      }
    }
  }
  EXPECT_EQ(runs, 6u * 5 * 10 * 2);
  EXPECT_GT(multicasts, 0u);
}

// 8 x 8 tiles of 128, 8 k-steps each, played by two clusters.
const GemmProblem kProblem = dense(1024, 1024, 512);
constexpr uint32_t kClusters = 2;
constexpr uint64_t kSeeds = 64;

PipelineModelOptions options(uint32_t stages = 4) {
  PipelineModelOptions o;
  o.stages = stages;
  o.consumer_warps = 4;
  return o;
}

// Plays `faulty` on seeds 1, 2, ... until its first violation is `check`'s (or, with `first`
// false, any of them); under each seed the clean options must pass first.
::testing::AssertionResult caught(const ClusterShape& cluster, PipelineModelOptions clean, PipelineModelOptions faulty,
                                  const std::string& check, bool first = true) {
  const TileConfig c = config(cluster.m, cluster.n);
  std::string last;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    clean.seed = faulty.seed = seed;
    const PipelineModelResult ok = play(kProblem, c, kClusters, clean);
    if (!ok.ok())
      return ::testing::AssertionFailure() << shape(cluster) << ": the clean run fails on seed " << seed << ":\n"
                                           << listing(ok.violations);
    const PipelineModelResult r = play(kProblem, c, kClusters, faulty);
    if (first ? !r.ok() && r.violations.front().find(check) != std::string::npos : mentions(r.violations, check))
      return ::testing::AssertionSuccess();
    if (!r.ok()) last = listing(r.violations);
  }
  return ::testing::AssertionFailure() << shape(cluster) << ": no seed up to " << kSeeds << " shows \"" << check << "\""
                                       << (first ? " first" : "") << "; the last violations:\n"
                                       << last;
}

// S11's rule narrowed to the CTAs that share one operand, with the init count cut to match.
struct NarrowRelease {
  ClusterShape cluster;
  bool same_rows;  // release to the CTAs that share A (else to those that share B)

  PipelineModelOptions options() const {
    PipelineModelOptions o = test::options();
    o.protocol = [*this](uint32_t rank, RingProtocol& p) {
      p.release_mask = same_rows ? cluster.same_rows_mask(rank) : cluster.same_cols_mask(rank);
      p.empty_arrivals = popcount16(p.release_mask) * p.releasers_per_cta;
    };
    return o;
  }
};
constexpr NarrowRelease kNarrowReleases[] = {
    {{2, 1}, true}, {{4, 1}, true}, {{1, 2}, false}, {{2, 2}, true}, {{2, 2}, false}};

// The counts balance (the simulator's balance check passes), but the CTAs that share the other
// operand no longer wait for each other, and a multicast lands in a stage its peer still reads.
TEST(PipelineModelCatchesFaults, ReleaseOnlyToOneOperandsSharersOverwrites) {
  for (const NarrowRelease& f : kNarrowReleases) {
    const PipelineModelOptions faulty = f.options();
    EXPECT_TRUE(caught(f.cluster, options(), faulty, kOverwrite));

    plan::SimOptions counts;
    counts.consumer_warps = faulty.consumer_warps;
    counts.protocol = faulty.protocol;
    const plan::LaunchSpec launch{config(f.cluster.m, f.cluster.n), kClusters};
    const plan::SimResult sim = plan::simulate(kProblem, {&launch, 1}, counts);
    EXPECT_TRUE(sim.ok()) << listing(sim.violations);
  }
}

// The same fault seen from the full barrier: the early multicast's bytes count toward the phase
// its peer is still waiting for, which then lets a consumer read before its own round's loads land.
TEST(PipelineModelCatchesFaults, ReleaseOnlyToOneOperandsSharersLetsAConsumerReadEarly) {
  for (const NarrowRelease& f : kNarrowReleases) {
    PipelineModelOptions faulty = f.options();
    faulty.max_violations = 100000;  // past the overwrites that come first
    EXPECT_TRUE(caught(f.cluster, options(), faulty, kEarlyRead, false));
  }
}

// Releasing on the own CTA only while the empty barriers still count the whole cluster: no
// phase after the first lap completes.
TEST(PipelineModelCatchesFaults, ReleaseToSelfOnlyDeadlocks) {
  for (const ClusterShape& cluster : kShared) {
    PipelineModelOptions faulty = options();
    faulty.protocol = [](uint32_t rank, RingProtocol& p) { p.release_mask = static_cast<uint16_t>(1u << rank); };
    EXPECT_TRUE(caught(cluster, options(), faulty, kDeadlock));
  }
}

// The producer skipping one wait more than its first pass over the ring: it fills a stage whose
// release has not come (the model reports the skip before the overwrite it leads to).
TEST(PipelineModelCatchesFaults, SkippingAWaitPastTheFirstPassIsCaught) {
  for (const ClusterShape& cluster : {ClusterShape{1, 1}, kShared[0], kShared[2], kShared[3]}) {
    for (uint32_t stages : {2u, 4u}) {
      PipelineModelOptions faulty = options(stages);
      faulty.fresh_rounds = stages + 1;
      EXPECT_TRUE(caught(cluster, options(stages), faulty, kSkippedBlock)) << stages << " stages";
    }
  }
}

PipelineModelOptions teardown(uint32_t stages, uint32_t rounds, bool exit_barrier) {
  PipelineModelOptions o = options(stages);
  o.exit_barrier = exit_barrier;
  o.protocol = [rounds](uint32_t, RingProtocol& p) { p.teardown_rounds = rounds; };
  return o;
}

// No teardown and no exit barrier: a CTA leaves while its peers' consumers still release on it.
TEST(PipelineModelCatchesFaults, NoTeardownWithoutExitBarrierArrivesAfterExit) {
  for (const ClusterShape& cluster : kShared)
    EXPECT_TRUE(caught(cluster, options(), teardown(4, 0, false), kExited));
}

// One teardown round short: the peers' releases of the last round are not waited for.
TEST(PipelineModelCatchesFaults, TeardownOneRoundShortArrivesAfterExit) {
  for (const ClusterShape& cluster : kShared) {
    EXPECT_TRUE(caught(cluster, options(4), teardown(4, 3, false), kExited));
    EXPECT_TRUE(caught(cluster, options(2), teardown(2, 1, false), kExited));
  }
}

// A consumer warp that never releases, where nothing waits on the phases it leaves short: 4
// rounds a CTA on a ring of 4, no teardown, the exit barrier on. Only the end check sees them.
TEST(PipelineModelCatchesFaults, AMissingReleaserLeavesPhasesOpen) {
  const GemmProblem small = dense(256, 256, 128);
  PipelineModelOptions clean = teardown(4, 0, true);
  const PipelineModelResult ok = play(small, config(2, 1), 1, clean);
  ASSERT_TRUE(ok.ok()) << listing(ok.violations);
  PipelineModelOptions faulty = clean;
  faulty.protocol = [](uint32_t, RingProtocol& p) {
    p.teardown_rounds = 0;   // as in the clean run
    --p.releasers_per_cta;  // the fault
  };
  const PipelineModelResult r = play(small, config(2, 1), 1, faulty);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.violations.front().find(kOpenPhase), std::string::npos) << listing(r.violations);
}

// What holds: a whole ring of teardown waits suffices for the operand ring without the exit
// barrier (S15), and the exit barrier suffices without the teardown.
TEST(PipelineModel, EitherAWholeTeardownOrTheExitBarrierSuffices) {
  for (const ClusterShape& cluster : kShared) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      for (const PipelineModelOptions& base : {teardown(4, 4, false), teardown(3, 3, false), teardown(4, 0, true)}) {
        PipelineModelOptions o = base;
        o.seed = seed;
        const PipelineModelResult r = play(kProblem, config(cluster.m, cluster.n), kClusters, o);
        ASSERT_TRUE(r.ok()) << shape(cluster) << " seed " << seed << ":\n" << listing(r.violations);
      }
    }
  }
}

// Why the kernel asks for 2 stages: a consumer warp releases a stage only after its wait for the
// next one, which with a single stage is the fill its own release would allow.
TEST(PipelineModel, OneStageDeadlocks) {
  const PipelineModelResult r = play(kProblem, config(1, 1), 1, options(1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.violations.front().find(kDeadlock), std::string::npos) << listing(r.violations);
}

// Turns without the hand-over: a warpgroup that skips the other's rounds waits for its own first
// round while the stage's barrier is still a phase behind, and its parity wait passes at once:
// it reads a stage before its round's loads land.
TEST(PipelineModelCatchesFaults, TakingTurnsWithoutTheHandOverReadsEarly) {
  for (const ClusterShape& cluster : {ClusterShape{1, 1}, kShared[0], kShared[3]}) {
    PipelineModelOptions clean = options(2);
    clean.consumer_warps = 8;
    clean.turns = true;
    PipelineModelOptions faulty = clean;
    faulty.skip_turn_waits = true;
    faulty.max_violations = 100000;
    EXPECT_TRUE(caught(cluster, clean, faulty, kEarlyRead, false)) << shape(cluster);
  }
}

// Turns with every consumer warp counted on the empty barriers (the cooperative count): the
// other warpgroup never releases the turn's rounds, so no phase after the first lap completes.
TEST(PipelineModelCatchesFaults, TakingTurnsWithTheCooperativeReleaseCountDeadlocks) {
  for (const ClusterShape& cluster : {ClusterShape{1, 1}, kShared[1]}) {
    PipelineModelOptions clean = options();
    clean.consumer_warps = 8;
    clean.turns = true;
    PipelineModelOptions faulty = clean;
    faulty.protocol = [](uint32_t, RingProtocol& p) { p.empty_arrivals *= 2; };
    EXPECT_TRUE(caught(cluster, clean, faulty, kDeadlock)) << shape(cluster);
  }
}

// Two consumer warpgroups (taking turns or not) and the kernel's two bias slots.
PipelineModelOptions with_bias(bool turns) {
  PipelineModelOptions o = options();
  o.consumer_warps = 8;
  o.turns = turns;
  o.bias_slots = 2;
  return o;
}

// The bias ring in turns without Epilogue::skip_tile: each warpgroup counts only its own tiles'
// slots, so the second warpgroup reads and releases slot 0 for the first tile's bias in slot 1:
// the loader refills a slot the other warpgroup still reads, and the ring stalls.
TEST(PipelineModelCatchesFaults, TakingTurnsWithoutTheBiasSkipOverwrites) {
  for (const ClusterShape& cluster : {ClusterShape{1, 1}, kShared[0]}) {
    const PipelineModelOptions clean = with_bias(true);
    PipelineModelOptions faulty = clean;
    faulty.bias_without_skip = true;
    faulty.max_violations = 100000;
    EXPECT_TRUE(caught(cluster, clean, faulty, kBiasOverwrite, false)) << shape(cluster);
  }
}

// The bias ring in turns with the cooperative release count (both warpgroups): the other never
// releases the turn's slot, so the loader waits forever.
TEST(PipelineModelCatchesFaults, TakingTurnsWithTheCooperativeBiasCountDeadlocks) {
  const PipelineModelOptions clean = with_bias(true);
  PipelineModelOptions faulty = clean;
  faulty.bias_releasers = kPingpongWarpgroups;
  EXPECT_TRUE(caught(ClusterShape{1, 1}, clean, faulty, kDeadlock));
}

// Cooperative warpgroups with a bias ring released by one of them: the loader refills a slot the
// other warpgroup still reads.
TEST(PipelineModelCatchesFaults, CooperativeBiasReleasedByOneWarpgroupOverwrites) {
  const PipelineModelOptions clean = with_bias(false);
  PipelineModelOptions faulty = clean;
  faulty.bias_releasers = 1;
  faulty.max_violations = 100000;
  EXPECT_TRUE(caught(ClusterShape{1, 1}, clean, faulty, kBiasOverwrite, false));
}

}  // namespace
}  // namespace tilecast::test
