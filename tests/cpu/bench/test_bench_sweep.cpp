// tilecast-bench --sweep's enumeration (tools/bench/sweep.cpp): every config is one the planner
// can emit, each forces exactly its plan, the planner's own candidates and choice are all there,
// the multicast and companion variants exist where the cluster allows them, and the limit keeps
// the model's cheapest.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "problem_desc.hpp"
#include "suites.hpp"
#include "sweep.hpp"

namespace tilecast::bench {
namespace {

const plan::DeviceFacts& h200() {
  static const plan::DeviceFacts f = plan::DeviceFacts::h200_model();
  return f;
}

BenchProblem dense_problem(int64_t m, int64_t n, int64_t k) {
  BenchProblem p = parse_shape(std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k));
  return p;
}

// The problems the properties are checked on: compute-bound, short K (the auto rule runs it in
// turns: pingpong), few tiles (split-K), odd extents, and one of each grouped kind.
std::vector<BenchProblem> sample_problems() {
  std::vector<BenchProblem> out{dense_problem(8192, 8192, 8192), dense_problem(4096, 24576, 1536),
                                dense_problem(4096, 576, 7168),  dense_problem(128, 2112, 7168),
                                dense_problem(4097, 4097, 4097),
                                dense_problem(1, 7168, 7168)};  // the auto rule swaps this one (swap_ab)
  for (const char* suite : {"mgrouped", "masked", "kgrouped"}) out.push_back(make_suite(suite).front());
  return out;
}

TEST(BenchSweep, EveryConfigForcesExactlyItsPlan) {
  for (const BenchProblem& p : sample_problems()) {
    SCOPED_TRACE(p.label());
    const plan::GemmDesc desc = problem_desc(p);
    const Sweep s = sweep_configs(desc, h200(), {}, 0);
    ASSERT_FALSE(s.configs.empty());
    EXPECT_EQ(s.total, s.configs.size());
    std::set<std::string> seen;
    for (const SweepConfig& c : s.configs) {
      const std::string key = plan_key(c.plan);
      EXPECT_TRUE(seen.insert(key).second) << "listed twice: " << key;
      // What the GPU run's call plans with these overrides is the plan the sweep listed.
      EXPECT_EQ(plan_key(plan::plan_gemm(desc, h200(), c.config)), key) << format_config(c.config);
    }
  }
}

TEST(BenchSweep, SmallMHasSwappedAndUnswappedConfigs) {
  // Auto swaps 1x7168x7168 (m <= 16, n >= 2048, and its unswapped plan is no split summed in the
  // cluster): the sweep times the unswapped plans beside it, each forced by an explicit swap_ab
  // (the first H200 sweep ran none of these: its forcing configs left swap_ab to the rule, and a
  // swapped width without swap_ab=1 was refused).
  const Sweep s = sweep_configs(problem_desc(dense_problem(1, 7168, 7168)), h200(), {}, 0);
  bool swapped = false, unswapped = false;
  for (const SweepConfig& c : s.configs) {
    EXPECT_EQ(c.config.swap_ab, c.plan.main.kernel.swap_ab ? 1 : 0) << format_config(c.config);
    (c.plan.main.kernel.swap_ab ? swapped : unswapped) = true;
  }
  EXPECT_TRUE(swapped && unswapped);
  EXPECT_TRUE(s.configs.front().plan.main.kernel.swap_ab) << "the pick";
}

TEST(BenchSweep, ThePickComesFirstThenTheCheapestPredicted) {
  for (const BenchProblem& p : sample_problems()) {
    SCOPED_TRACE(p.label());
    const plan::GemmDesc desc = problem_desc(p);
    const Sweep s = sweep_configs(desc, h200(), {}, 0);
    ASSERT_FALSE(s.configs.empty());
    EXPECT_TRUE(s.configs.front().heuristic_pick);
    EXPECT_EQ(plan_key(s.configs.front().plan), plan_key(plan::plan_gemm(desc, h200())));
    // Then the pick's serpentine twin where there is one, then the model's order.
    const size_t first_ranked = s.configs.size() > 1 && s.configs[1].serpentine_twin ? 2 : 1;
    for (size_t i = 1; i < s.configs.size(); ++i) {
      EXPECT_FALSE(s.configs[i].heuristic_pick);
      EXPECT_EQ(s.configs[i].serpentine_twin, i == 1 && first_ranked == 2) << i;
      if (i > first_ranked) { EXPECT_LE(s.configs[i - 1].plan.cost.total_us, s.configs[i].plan.cost.total_us) << i; }
    }
  }
}

// The pick's serpentine twin: the pick's own kernel with k_serpentine=1 and the band the planner
// gives that walk, second in the list and timed beyond the limit, wherever the launch is static
// and has a second wave and the caller left k_serpentine to the planner.
TEST(BenchSweep, TimesThePickWithSerpentineKBesideIt) {
  const plan::GemmDesc desc = problem_desc(dense_problem(8192, 8192, 8192));
  for (size_t limit : {size_t{0}, size_t{1}, size_t{3}}) {
    const Sweep s = sweep_configs(desc, h200(), {}, limit);
    ASSERT_GE(s.configs.size(), 2u);
    const SweepConfig& pick = s.configs[0];
    const SweepConfig& twin = s.configs[1];
    EXPECT_TRUE(twin.serpentine_twin);
    EXPECT_EQ(s.configs.size(), limit ? limit + 1 : s.total) << limit;
    EXPECT_EQ(twin.config.k_serpentine, 1);
    EXPECT_TRUE(twin.plan.main.kernel.k_serpentine);
    GemmKernelSpec forward = twin.plan.main.kernel;
    forward.k_serpentine = false;
    EXPECT_EQ(forward, pick.plan.main.kernel) << "the pick's kernel, serpentine K aside";
    EXPECT_EQ(twin.plan.main.clusters, pick.plan.main.clusters);
    // Its own band: the one the planner gives serpentine K asked for alone.
    GemmConfig asked;
    asked.k_serpentine = 1;
    EXPECT_EQ(twin.plan.schedule.swizzle, plan::plan_gemm(desc, h200(), asked).schedule.swizzle);
    EXPECT_EQ(plan_key(plan::plan_gemm(desc, h200(), twin.config)), plan_key(twin.plan));
    EXPECT_NE(plan_key(twin.plan), plan_key(pick.plan));
  }
  const auto has_twin = [](const plan::GemmDesc& d, const GemmConfig& base) {
    return std::ranges::any_of(sweep_configs(d, h200(), base, 0).configs,
                               [](const SweepConfig& c) { return c.serpentine_twin || c.config.k_serpentine == 1; });
  };
  EXPECT_FALSE(has_twin(problem_desc(dense_problem(4096, 576, 7168)), {})) << "one wave: nothing to reverse";
  EXPECT_FALSE(has_twin(problem_desc(make_suite("kgrouped").front()), {})) << "refused for k-grouped GEMMs";
  GemmConfig off;
  off.k_serpentine = 0;
  EXPECT_FALSE(has_twin(desc, off)) << "the caller's choice stays fixed";
  GemmConfig companion;
  companion.cluster_m = companion.cluster_n = 2;
  companion.companion = 1;
  EXPECT_FALSE(has_twin(desc, companion)) << "refused beside a companion launch";
  GemmConfig on;
  on.k_serpentine = 1;
  const Sweep all_serpentine = sweep_configs(desc, h200(), on, 0);
  EXPECT_TRUE(std::ranges::none_of(all_serpentine.configs, [](const SweepConfig& c) { return c.serpentine_twin; }));
  EXPECT_TRUE(std::ranges::all_of(all_serpentine.configs, [](const SweepConfig& c) {
    return c.plan.main.kernel.k_serpentine || c.plan.main.kernel.dynamic_units;
  }));
}

// A plan's key without its band: the planner gives the plan it chooses a band of its own
// (src/plan/band_height.cpp) and the others it ranks the default, so a candidate that one of the
// sweep's rankings chooses may carry another band than in the planner's own ranking.
std::set<std::string> candidates_of(const std::vector<plan::GemmPlan>& plans) {
  std::set<std::string> keys;
  for (const plan::GemmPlan& p : plans) {
    std::string key = plan_key(p);
    const size_t band = key.find(" swz");
    key.erase(band, key.find(' ', band + 1) - band);
    keys.insert(key);
  }
  return keys;
}

TEST(BenchSweep, HoldsEveryCandidateOfThePlannersOwnRanking) {
  for (const BenchProblem& p : sample_problems()) {
    SCOPED_TRACE(p.label());
    const plan::GemmDesc desc = problem_desc(p);
    std::vector<plan::GemmPlan> listed;
    for (SweepConfig& c : sweep_configs(desc, h200(), {}, 0).configs) listed.push_back(c.plan);
    const std::set<std::string> swept = candidates_of(listed);
    for (const std::string& key : candidates_of(plan::rank_plans(desc, h200()))) EXPECT_TRUE(swept.count(key)) << key;
  }
}

TEST(BenchSweep, VariesClustersMulticastAndTheCompanionWhereTheyExist) {
  const plan::GemmDesc desc = problem_desc(dense_problem(8192, 8192, 8192));
  // (cluster m, cluster n, multicast A, multicast B, companion) of every config.
  std::set<std::tuple<uint32_t, uint32_t, bool, bool, bool>> variants;
  std::set<std::pair<uint32_t, uint32_t>> tiles;
  for (const SweepConfig& c : sweep_configs(desc, h200(), {}, 0).configs) {
    const ClusterShape cs = c.plan.main.kernel.cluster;
    // A multicast switch is only ever off where the operand has peers: else it changes nothing.
    if (cs.n == 1) { EXPECT_NE(c.config.multicast_a, 0) << format_config(c.config); }
    if (cs.m == 1) { EXPECT_NE(c.config.multicast_b, 0) << format_config(c.config); }
    variants.insert({cs.m, cs.n, c.config.multicast_a != 0, c.config.multicast_b != 0, c.plan.companion.has_value()});
    tiles.insert({c.plan.main.kernel.block_m, c.plan.main.kernel.block_n});
  }
  using V = std::tuple<uint32_t, uint32_t, bool, bool, bool>;
  for (const V& v : {V{1, 1, true, true, false}, V{2, 1, true, true, false}, V{2, 1, true, false, false},
                     V{1, 2, true, true, false}, V{1, 2, false, true, false}, V{2, 2, true, true, false},
                     V{2, 2, false, true, false}, V{2, 2, true, false, false}, V{2, 2, false, false, false},
                     V{4, 1, true, false, false}, V{1, 4, false, true, false},
                     // Clusters of 4 fill 120 of 132 SMs: the companion takes the other 12.
                     V{4, 1, true, true, true}, V{1, 4, true, true, true}, V{2, 2, true, true, true},
                     V{2, 2, false, false, true}})
    EXPECT_TRUE(variants.count(v)) << std::get<0>(v) << "x" << std::get<1>(v) << " mc " << std::get<2>(v)
                                   << std::get<3>(v) << " companion " << std::get<4>(v);
  // Every tile width the kernel has, at both row blocks.
  EXPECT_EQ(tiles.size(), 2 * std::size(kWgmmaBF16Widths));
}

TEST(BenchSweep, SplitsKWhereThePlannerWouldWeighIt) {
  const plan::GemmDesc few_tiles = problem_desc(dense_problem(128, 2112, 7168));
  std::set<uint32_t> splits, planner_splits;
  for (const SweepConfig& c : sweep_configs(few_tiles, h200(), {}, 0).configs) {
    splits.insert(c.plan.k_splits);
    EXPECT_EQ(c.config.k_splits, c.plan.k_splits);  // 1 too: never left to the planner
    EXPECT_FALSE(c.plan.k_splits > 1 && c.plan.companion);
  }
  for (const plan::GemmPlan& p : plan::rank_plans(few_tiles, h200())) planner_splits.insert(p.k_splits);
  EXPECT_EQ(splits, planner_splits);
  EXPECT_GT(splits.size(), 1u);

  // A wave of the largest tiles or more: the planner never splits, nor does the sweep.
  for (const SweepConfig& c : sweep_configs(problem_desc(dense_problem(8192, 8192, 8192)), h200(), {}, 0).configs)
    EXPECT_EQ(c.plan.k_splits, 1u);
}

// A config's kind: tile height, swapped or not, in turns or not, and how its K slices are summed
// (none, the reduce kernel, in the GEMM, across a cluster).
using Kind = std::tuple<uint32_t, bool, bool, int>;
Kind kind(const SweepConfig& c) {
  const plan::GemmPlan& p = c.plan;
  return {p.main.kernel.block_m, p.main.kernel.swap_ab, p.main.kernel.pingpong,
          p.k_splits == 1 ? 0 : p.main.kernel.k_cluster > 1 ? 3 : p.main.kernel.fused_reduce ? 2 : 1};
}

// The pick, the cheapest config of every other kind the model puts within 1.5x of the cheapest
// (kKindReach), then the model's cheapest, in the model's order.
TEST(BenchSweep, TheLimitKeepsTheModelsCheapestAndEveryKind) {
  constexpr double kKindReach = 1.5;
  for (const auto& [m, n, k] : {std::tuple{4096u, 576u, 7168u}, std::tuple{150u, 32768u, 512u}, std::tuple{1u, 1024u, 7168u}}) {
    const plan::GemmDesc desc = problem_desc(dense_problem(m, n, k));
    const Sweep all = sweep_configs(desc, h200(), {}, 0);
    ASSERT_GT(all.configs.size(), kDefaultSweepLimit);
    double cheapest = all.configs[0].plan.cost.total_us;
    for (const SweepConfig& c : all.configs) cheapest = std::min(cheapest, c.plan.cost.total_us);
    const auto in_reach = [&](const SweepConfig& c) { return c.plan.cost.total_us <= kKindReach * cheapest; };
    std::set<Kind> kinds{kind(all.configs[0])};
    for (const SweepConfig& c : all.configs)
      if (in_reach(c)) kinds.insert(kind(c));
    ASSERT_GE(kinds.size(), 2u) << m;
    for (size_t limit : {size_t{1}, size_t{5}, size_t{10}, kDefaultSweepLimit}) {
      const Sweep s = sweep_configs(desc, h200(), {}, limit);
      EXPECT_EQ(s.total, all.total);
      const bool twin = s.configs.size() > 1 && s.configs[1].serpentine_twin;
      ASSERT_EQ(s.configs.size(), limit + twin);
      EXPECT_TRUE(s.configs[0].heuristic_pick);
      // Every kind's cheapest in reach is in (as far as the limit reaches), and the rest are the
      // cheapest of what is left: each kept config is either such a kind's first or comes before
      // every config left out.
      std::set<Kind> timed;
      for (const SweepConfig& c : s.configs)
        if (kinds.count(kind(c))) timed.insert(kind(c));
      EXPECT_EQ(timed.size(), std::min(limit, kinds.size())) << m << " limit " << limit;
      std::set<std::string> kept;
      for (const SweepConfig& c : s.configs) kept.insert(plan_key(c.plan));
      size_t first_left_out = all.configs.size();
      for (size_t i = 0; i < all.configs.size(); ++i)
        if (!kept.count(plan_key(all.configs[i].plan))) {
          first_left_out = i;
          break;
        }
      std::set<Kind> seen;
      for (size_t i = 0; i < all.configs.size(); ++i) {
        const bool kind_first = seen.insert(kind(all.configs[i])).second && in_reach(all.configs[i]);
        if (kept.count(plan_key(all.configs[i].plan))) {
          EXPECT_TRUE(i == 0 || kind_first || i < first_left_out) << m << " limit " << limit << " rank " << i;
        }
      }
      // In the model's order (after the pick and its serpentine twin).
      for (size_t i = 1 + twin; i + 1 < s.configs.size(); ++i)
        EXPECT_LE(s.configs[i].plan.cost.total_us, s.configs[i + 1].plan.cost.total_us);
    }
    EXPECT_EQ(sweep_configs(desc, h200(), {}, all.total + 10).configs.size(), all.total);
  }
  // 1x1024x7168 at a limit of 10: a split summed across a cluster is timed, though the model ranks
  // none of them among its first 10.
  const Sweep ten = sweep_configs(problem_desc(dense_problem(1, 1024, 7168)), h200(), {}, 10);
  EXPECT_TRUE(std::ranges::any_of(ten.configs, [](const SweepConfig& c) { return c.plan.main.kernel.k_cluster > 1; }));
}

TEST(BenchSweep, FieldsTheCallerSetStayFixed) {
  const plan::GemmDesc desc = problem_desc(dense_problem(8192, 8192, 8192));
  GemmConfig base;
  base.cluster_m = 2;
  base.cluster_n = 1;
  base.multicast_b = 0;
  const Sweep s = sweep_configs(desc, h200(), base, 0);
  ASSERT_FALSE(s.configs.empty());
  for (const SweepConfig& c : s.configs) {
    EXPECT_EQ(c.plan.main.kernel.cluster, (ClusterShape{2, 1}));
    EXPECT_FALSE(c.plan.schedule.multicast_b);
    EXPECT_EQ(c.config.multicast_b, 0);
    EXPECT_FALSE(c.plan.companion);
  }
  // One config per tile shape, cooperative or in turns: nothing else is left to vary at 8192^3 (no
  // split-K there). Ping-pong tiles hold at most 128 accumulators a thread: 64 rows of any width,
  // 128 rows up to 128 wide.
  const size_t narrow = std::ranges::count_if(kWgmmaBF16Widths, [](uint32_t w) { return w <= 128; });
  // And the pick's serpentine twin (TimesThePickWithSerpentineKBesideIt).
  EXPECT_EQ(s.total, 2 * std::size(kWgmmaBF16Widths) + std::size(kWgmmaBF16Widths) + narrow + 1);
  EXPECT_TRUE(std::ranges::any_of(s.configs, [](const SweepConfig& c) { return c.config.pingpong == 1; }));

  GemmConfig bad;
  bad.cluster_m = 4;
  bad.cluster_n = 4;
  EXPECT_THROW(sweep_configs(desc, h200(), bad, 0), Error);
}

TEST(BenchSweep, PlansEveryProblemButTheHostSuites) {
  std::vector<BenchProblem> problems = make_suite("host");
  problems.push_back(dense_problem(4096, 2112, 7168));
  const std::vector<ProblemSweep> sweeps = plan_sweeps(problems, {}, 3, h200());
  ASSERT_EQ(sweeps.size(), problems.size());
  for (size_t i = 0; i + 1 < problems.size(); ++i) {
    EXPECT_NE(sweeps[i].skipped.find("host suite"), std::string::npos);
    EXPECT_TRUE(sweeps[i].sweep.configs.empty());
  }
  EXPECT_TRUE(sweeps.back().skipped.empty());
  // The limit's 3, and the pick's serpentine twin beyond it (4096x2112x7168 runs 2.9 waves).
  EXPECT_EQ(sweeps.back().sweep.configs.size(), 4u);

  // The GPU run times the caller's own call first, then the sweep's configs in order.
  const std::vector<GemmConfig> timed = sweep_timed_configs({}, sweeps.back().sweep);
  ASSERT_EQ(timed.size(), 5u);
  EXPECT_EQ(timed[0], GemmConfig{});
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(timed[i + 1], sweeps.back().sweep.configs[i].config);
}

TEST(BenchSweep, ListingNamesEachConfigAndTheTotal) {
  const std::string text = sweep_listing({dense_problem(4096, 576, 7168), make_suite("host").front()}, {}, 4, h200());
  EXPECT_NE(text.find("== custom 4096x576x7168"), std::string::npos);
  EXPECT_NE(text.find("(pick)"), std::string::npos);
  EXPECT_NE(text.find("no sweep: the host suite"), std::string::npos);
  EXPECT_NE(text.find("sweep: 4 configs to time"), std::string::npos);
  EXPECT_NE(text.find("limit 4 per problem"), std::string::npos);
}

TEST(BenchSweep, GapAndProgress) {
  EXPECT_DOUBLE_EQ(pick_gap(100, 100), 0.0);
  EXPECT_NEAR(pick_gap(105, 100), kSweepTargetGap, 1e-12);
  EXPECT_NEAR(pick_gap(150, 100), 0.5, 1e-12);

  EXPECT_EQ(progress_text(0, 10, 0), "[sweep] 0/10 configs   0%  0s elapsed");
  // Halfway after 62 s: as long again to go.
  EXPECT_EQ(progress_text(5, 10, 62), "[sweep] 5/10 configs  50%  1m02s elapsed, ETA 1m02s");
  EXPECT_EQ(progress_text(10, 10, 125, "kernels"), "[sweep] 10/10 kernels 100%  2m05s elapsed");
}

TEST(BenchSweep, OddExtentsAreTheOddSuitesRowsWithNOrKOffEight) {
  std::vector<std::string> odd;
  for (const BenchProblem& p : make_suite("odd"))
    if (has_odd_extents(p)) odd.push_back(p.label());
  // Rows odd in m only (333x2112x7168, 255x576x7168) keep the cuBLAS column alone: issue #14's slow
  // rows are those with n or k off a multiple of 8.
  EXPECT_EQ(odd, (std::vector<std::string>{"4095x7167x4104", "4097x4097x4097", "129x24577x1536", "8191x8193x520"}));
  BenchProblem tn = dense_problem(4097, 4097, 4097);
  tn.layout = GemmLayout::kTN;
  EXPECT_FALSE(has_odd_extents(tn));
}

}  // namespace
}  // namespace tilecast::bench
