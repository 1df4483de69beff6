// The scheduler at group edges, over grouped problems built to strain them (random_problem.hpp,
// make_grouped): every invariant of the simulator; multicast masks that join exactly the live
// CTAs of one expert that share the operand (so multicast is switched off per tile where an
// expert edge cuts a cluster of 4 or 2x2, and on everywhere else); clusters that never straddle
// two k-groups; and group data the problem cannot mean found by the kernel's check
// (group_data_check.cuh) and clamped in bounds by the scheduler.
#include <gtest/gtest.h>

#include <set>

#include "random_problem.hpp"
#include "test_helpers.hpp"
#include "tilecast/device/scheduler/group_data_check.cuh"
#include "tilecast/plan/expected_tiles.hpp"
#include "tilecast/plan/pipeline_model.hpp"
#include "tilecast/plan/simulator.hpp"

namespace tilecast::test {
namespace {

std::string shape(const ClusterShape& cs) { return std::to_string(cs.m) + "x" + std::to_string(cs.n); }

// Every CTA's work in every step of every unit of the problem, one cluster at a time.
template <class Visit>
void for_each_cluster_step(const GemmProblem& p, const TileConfig& c, Visit&& visit) {
  std::vector<TileScheduler> ctas;
  for (uint32_t r = 0; r < c.cluster.size(); ++r) ctas.emplace_back(p, c, r);
  std::vector<TileWork> work(c.cluster.size());
  for (uint32_t unit = 0;; ++unit) {
    for (TileScheduler& s : ctas)
      if (!s.seek(unit)) return;
    for (uint32_t step = 0; step < c.steps_per_unit(); ++step) {
      for (uint32_t r = 0; r < c.cluster.size(); ++r) work[r] = ctas[r].work(step);
      visit(unit, work);
    }
  }
}

// 6 cluster shapes x 3 grouped types x 300 problems, launches of 1 to 40 clusters.
TEST(GroupedSchedule, StrainedEdgesHoldEveryInvariant) {
  ProblemGenerator gen(20261202);
  uint64_t problems = 0, phantoms = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (GemmType type : kGroupedTypes)
      for (int i = 0; i < 300; ++i) {
        const TileConfig c = gen.config(cs);
        const auto op = gen.make_grouped(type, c);
        plan::SimOptions o;
        o.stages = gen.uniform(2, 6);
        o.consumer_warps = gen.coin() ? 4 : 8;
        const plan::LaunchSpec launch{c, gen.uniform(1, 40)};
        const plan::SimResult r = plan::simulate(op->problem, {&launch, 1}, o);
        ASSERT_TRUE(r.ok()) << op->describe() << " cluster " << shape(cs) << "\n" << listing(r.violations);
        ++problems;
        phantoms += r.stats.phantom_k_steps;
      }
  EXPECT_EQ(problems, 6u * 3 * 300);
  EXPECT_GT(phantoms, 0u);
}

// The multicast plan is not only safe (the simulator checks that) but complete: with multicast on,
// each valid CTA's A mask is every valid CTA of its cluster with its rows and its expert, its B
// mask every one with its columns and its expert. Row-index layouts with experts of 1 to 3 blocks
// put expert edges inside clusters of 4 and 2x2, where B's multicast must split.
TEST(GroupedSchedule, MulticastJoinsExactlyTheLiveCtasOfOneExpert) {
  ProblemGenerator gen(99);
  uint64_t split_steps = 0, shared_steps = 0;
  for (const ClusterShape& cs : kClusterShapes) {
    for (int i = 0; i < 400; ++i) {
      TileConfig c = gen.config(cs);
      c.multicast_a = c.multicast_b = true;
      const auto op = gen.make_grouped(i % 2 ? GemmType::kMGroupedContiguous : GemmType::kMGroupedMasked, c);
      for_each_cluster_step(op->problem, c, [&](uint32_t unit, const std::vector<TileWork>& w) {
        std::set<uint32_t> experts;
        for (uint32_t r = 0; r < cs.size(); ++r) {
          if (!w[r].valid) continue;
          experts.insert(w[r].group);
          uint16_t a = 0, b = 0;
          for (uint32_t x = 0; x < cs.size(); ++x) {
            if (!w[x].valid || w[x].group != w[r].group) continue;
            if (cs.offset_m(x) == cs.offset_m(r)) a |= static_cast<uint16_t>(1u << x);
            if (cs.offset_n(x) == cs.offset_n(r)) b |= static_cast<uint16_t>(1u << x);
          }
          ASSERT_EQ(w[r].a_mask, a) << op->describe() << " cluster " << shape(cs) << " unit " << unit << " rank " << r;
          ASSERT_EQ(w[r].b_mask, b) << op->describe() << " cluster " << shape(cs) << " unit " << unit << " rank " << r;
          if (popcount16(b) > 1 || popcount16(a) > 1) ++shared_steps;
        }
        if (experts.size() > 1) ++split_steps;
      });
    }
  }
  EXPECT_GT(split_steps, 100u) << "expert edges inside clusters were reached";
  EXPECT_GT(shared_steps, 1000u) << "and multicast inside experts";
}

// Edges inside a cluster of 4 along M and of 2x2, worked: experts of 1 and 3 blocks (row index).
TEST(GroupedSchedule, ExpertEdgeInsideClustersOf4And2x2SplitsB) {
  std::vector<int32_t> rows(4 * 128);
  for (uint32_t r = 0; r < rows.size(); ++r) rows[r] = r < 128 ? 0 : 1;  // expert 0: block 0; expert 1: blocks 1-3
  const GemmProblem p = grouped(GemmType::kMGroupedContiguous, 512, 256, 128, 2, rows);
  std::vector<TileWork> four, two_by_two;
  for_each_cluster_step(p, config(4, 1), [&](uint32_t unit, const std::vector<TileWork>& w) {
    if (unit == 0) four = w;
  });
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[0].b_mask, 0b0001) << "expert 0 alone";
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(four[r].b_mask, 0b1110) << r;
  EXPECT_TRUE(four[0].issue_b && four[1].issue_b && !four[2].issue_b && !four[3].issue_b);
  // 2x2: ranks 0 = (0,0), 1 = (1,0), 2 = (0,1), 3 = (1,1); rows 0 and 1 are experts 0 and 1.
  for_each_cluster_step(p, config(2, 2), [&](uint32_t unit, const std::vector<TileWork>& w) {
    if (unit == 0) two_by_two = w;
  });
  ASSERT_EQ(two_by_two.size(), 4u);
  EXPECT_EQ(two_by_two[0].b_mask, 0b0001);
  EXPECT_EQ(two_by_two[1].b_mask, 0b0010);
  EXPECT_EQ(two_by_two[0].a_mask, 0b0101) << "A still shared along N within expert 0's rows";
  EXPECT_EQ(two_by_two[3].a_mask, 0b1010);
}

// Every CTA of a cluster, valid or phantom, runs one k-group's k-steps in each step: the group's
// own unit grid keeps clusters from straddling two groups of different K (DeepGEMM #415, #429).
TEST(GroupedSchedule, KGroupedClustersRunOneGroupsKSteps) {
  ProblemGenerator gen(415429);
  uint64_t partial_clusters = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (int i = 0; i < 300; ++i) {
      const TileConfig c = gen.config(cs);
      const auto op = gen.make_grouped(GemmType::kKGroupedContiguous, c);
      std::set<uint32_t> groups_seen;
      for_each_cluster_step(op->problem, c, [&](uint32_t, const std::vector<TileWork>& w) {
        bool any_phantom = false;
        for (const TileWork& x : w) {
          ASSERT_EQ(x.group, w[0].group) << op->describe();
          ASSERT_EQ(x.k_begin, w[0].k_begin);
          ASSERT_EQ(x.k_end, w[0].k_end);
          ASSERT_EQ(x.num_k_steps, ceil_div(x.k_end - x.k_begin, c.block_k));
          any_phantom = any_phantom || !x.valid;
        }
        ASSERT_EQ(w[0].k_end - w[0].k_begin, static_cast<uint32_t>(op->data[w[0].group]));
        groups_seen.insert(w[0].group);
        partial_clusters += any_phantom;
      });
      ASSERT_EQ(groups_seen.size(), op->problem.num_groups) << "every group has tiles, empty K included";
    }
  EXPECT_GT(partial_clusters, 0u) << "tile counts that are no multiple of the cluster's were reached";
}

// The ring protocol in time over the strained grouped problems (the pipeline model plays every
// producer, consumer warp and load in random orders): 5 multicasting shapes x 3 types x 12 problems.
TEST(GroupedSchedule, PipelineProtocolHoldsAtGroupEdges) {
  ProblemGenerator gen(7070);
  const ClusterShape shapes[] = {{2, 1}, {1, 2}, {4, 1}, {1, 4}, {2, 2}};
  for (const ClusterShape& cs : shapes)
    for (GemmType type : kGroupedTypes)
      for (int i = 0; i < 12; ++i) {
        const TileConfig c = gen.config(cs);
        const auto op = gen.make_grouped(type, c);
        plan::PipelineModelOptions o;
        o.stages = gen.uniform(2, 5);
        o.consumer_warps = 4;
        o.seed = gen.rng()();
        const plan::PipelineModelResult r = plan::play_pipeline(op->problem, {c, gen.uniform(1, 4)}, o);
        ASSERT_TRUE(r.ok()) << op->describe() << " cluster " << shape(cs) << "\n" << listing(r.violations);
      }
}

// The kernel's check of the group data (group_data_check.cuh) played on the CPU, all entries in
// order: 1 + the index of the first bad entry (k-grouped sums last, naming the first group whose
// columns pass K, as the kernel's record does), or 0.
uint32_t first_bad(const GemmProblem& p) {
  for (uint32_t i = 0; i < entries_to_check(p); ++i)
    if (entry_is_bad(p, i)) return i + 1;
  if (p.type == GemmType::kKGroupedContiguous) {
    uint64_t sum = 0;
    for (uint32_t g = 0; g < p.num_groups; ++g) sum += static_cast<uint64_t>(std::max(p.group_data[g], 0));
    if (!total_k_fits(p, sum)) {
      uint64_t before = 0;
      for (uint32_t g = 0; g < p.num_groups; ++g) {
        before += static_cast<uint64_t>(std::max(p.group_data[g], 0));
        if (before > p.k) return g + 1;
      }
    }
  }
  return 0;
}

TEST(GroupedSchedule, WellFormedGroupDataPassesTheKernelsCheck) {
  ProblemGenerator gen(5);
  for (const ClusterShape& cs : kClusterShapes)
    for (GemmType type : kGroupedTypes)
      for (int i = 0; i < 100; ++i) {
        const TileConfig c = gen.config(cs);
        const auto op = gen.make_grouped(type, c);
        ASSERT_EQ(first_bad(op->problem), 0u) << op->describe();
      }
}

TEST(GroupedSchedule, ImpossibleGroupDataFailsTheCheckAndIsClampedInBounds) {
  struct Case {
    GemmType type;
    ContiguousLayout layout;
    uint32_t m, k;
    std::vector<int32_t> data;
    uint32_t fault;  // 1 + index of the first bad entry
  };
  // The scheduler clamps what the check flags, so that the kernel reads and writes in bounds
  // until it traps.
  const std::vector<Case> cases = {
      {GemmType::kMGroupedMasked, {}, 300, 64, {0, 300, 301, 5}, 3},         // above max_m
      {GemmType::kMGroupedMasked, {}, 300, 64, {10, -1, 7}, 2},              // negative
      {GemmType::kMGroupedContiguous, ContiguousLayout::kOffsets, 500, 64, {0, 100, 90, 400}, 3},   // decreasing
      {GemmType::kMGroupedContiguous, ContiguousLayout::kOffsets, 500, 64, {0, 100, 200, 501}, 4},  // past the rows
      {GemmType::kMGroupedContiguous, ContiguousLayout::kOffsets, 500, 64, {5, 100, 200, 300}, 1},  // not 0 first
      {GemmType::kKGroupedContiguous, {}, 256, 300, {96, 152, 56}, 3},       // 304 columns of 300
      {GemmType::kKGroupedContiguous, {}, 256, 300, {96, -8, 48}, 2},        // negative
      {GemmType::kKGroupedContiguous, {}, 256, 300, {96, 130, 48}, 2},       // no multiple of 8
  };
  for (const Case& x : cases) {
    const uint32_t groups = static_cast<uint32_t>(x.data.size()) - (x.layout == ContiguousLayout::kOffsets ? 1 : 0);
    const GemmProblem p = grouped(x.type, x.m, 256, x.k, groups, x.data, x.layout);
    const TileConfig c = config(2, 1);
    EXPECT_EQ(first_bad(p), x.fault) << "type " << static_cast<int>(x.type);
    // Clamped: the tiles the scheduler plays stay inside A and D (the simulator's tile check).
    const plan::LaunchSpec launch{c, 3};
    const plan::SimResult r = plan::simulate(p, {&launch, 1}, {});
    EXPECT_TRUE(r.ok()) << listing(r.violations);
    for_each_cluster_step(p, c, [&](uint32_t, const std::vector<TileWork>& w) {
      for (const TileWork& t : w) {
        if (!t.valid) continue;
        EXPECT_LE(t.row + t.rows, x.m);
        EXPECT_LE(t.k_end, x.k);
      }
    });
  }
  // Row index: values naming no expert (-1 is padding and fine; -2 or 2 of 2 experts are not), and
  // runs of 128 rows that are not one expert's rows then padding (the epilogue relies on it).
  std::vector<int32_t> rows(384, -1);
  for (uint32_t r = 0; r < 100; ++r) rows[r] = 0;
  const GemmProblem p = grouped(GemmType::kMGroupedContiguous, 384, 128, 64, 2, rows);
  EXPECT_EQ(first_bad(p), 0u);
  rows[256] = 2;
  EXPECT_EQ(first_bad(p), 257u);
  rows[256] = -2;
  EXPECT_EQ(first_bad(p), 257u);
  rows[256] = 1;  // expert 1's run starts on a multiple of 128
  EXPECT_EQ(first_bad(p), 0u);
  rows[300] = 1;  // a second run of expert 1 inside the same 128 rows, after padding
  EXPECT_EQ(first_bad(p), 301u);
  rows[300] = -1;
  rows[100] = 1;  // expert 1 right after expert 0 inside one run of 128
  EXPECT_EQ(first_bad(p), 101u);
  rows[100] = -1;
  rows[50] = -1;  // a hole in expert 0's rows
  EXPECT_EQ(first_bad(p), 52u);
  // The scheduler stays in bounds on all of it.
  const plan::LaunchSpec launch{config(4, 1), 2};
  EXPECT_TRUE(plan::simulate(p, {&launch, 1}, {}).ok());
}

}  // namespace
}  // namespace tilecast::test
