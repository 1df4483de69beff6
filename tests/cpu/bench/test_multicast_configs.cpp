// What `tilecast-bench --suite mcast` runs, checked without a GPU: one tile per problem, every
// cluster shape and its controls, traffic-model bytes that follow the closed form, the wave
// arithmetic multicast_configs.cpp gives for the partial-wave shape, and the energy loop's size.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "energy.hpp"
#include "gpu/gemm/gemm_cases.hpp"
#include "multicast_configs.hpp"
#include "problem_desc.hpp"
#include "suites.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {
namespace {

const plan::DeviceFacts kH200 = plan::DeviceFacts::h200_model();

BenchProblem problem_of(int64_t m, int64_t n, int64_t k) {
  for (const BenchProblem& p : make_suite("mcast"))
    if (p.m == m && p.n == n && p.k == k) return p;
  ADD_FAILURE() << m << "x" << n << "x" << k << " is not in the mcast suite";
  return {};
}

const McastConfig* find(const std::vector<McastConfig>& v, const std::string& label) {
  for (const McastConfig& c : v)
    if (c.label == label) return &c;
  return nullptr;
}

TEST(McastSuite, ThreeDenseProblemsEachWithAPinnedTile) {
  const std::vector<BenchProblem> suite = make_suite("mcast");
  ASSERT_EQ(suite.size(), 3u);
  for (const BenchProblem& p : suite) {
    EXPECT_EQ(p.kind, Kind::kDense) << p.label();
    EXPECT_TRUE(mcast_tile_pinned(p)) << p.label() << ": suites.cpp and multicast_configs.cpp disagree";
  }
  // Not part of "all": its problems would otherwise be timed twice, once without its mode.
  for (const BenchProblem& p : make_suite("all")) EXPECT_NE(p.suite, "mcast");
}

TEST(McastSuite, EveryConfigOfAProblemRunsTheSameTileAndRing) {
  for (const BenchProblem& p : make_suite("mcast")) {
    const std::vector<McastConfig> configs = mcast_configs(p, kH200);
    ASSERT_FALSE(configs.empty()) << p.label();
    const GemmConfig tile = mcast_tile(p, kH200);
    std::set<std::string> labels;
    for (const McastConfig& c : configs) {
      EXPECT_TRUE(labels.insert(c.label).second) << p.label() << ": label " << c.label << " twice";
      EXPECT_EQ(c.config.block_m, tile.block_m) << c.label;
      EXPECT_EQ(c.config.block_n, tile.block_n) << c.label;
      EXPECT_EQ(c.config.stages, configs.front().config.stages) << c.label;
      EXPECT_GT(c.config.stages, 0u) << c.label;
      EXPECT_EQ(c.config.k_splits, 1u) << c.label;
      const TrafficModel m = traffic_model(p, c.config, kH200);
      ASSERT_TRUE(m.ok) << p.label() << " " << c.label << ": " << m.why_not;
      // The plan that runs is the one asked for: its kernel has the pinned tile and cluster.
      const plan::GemmPlan pl = plan::plan_gemm(problem_desc(p), kH200, c.config);
      EXPECT_EQ(pl.main.kernel.block_m, tile.block_m);
      EXPECT_EQ(pl.main.kernel.block_n, tile.block_n);
      EXPECT_EQ(pl.main.kernel.stages, c.config.stages);
      EXPECT_EQ(pl.main.kernel.cluster.m, c.config.cluster_m) << c.label;
      EXPECT_EQ(pl.main.kernel.cluster.n, c.config.cluster_n) << c.label;
      EXPECT_EQ(pl.k_splits, 1u);
      // The row's config text (JSON, markdown) reruns the row: tilecast-bench --config TEXT.
      EXPECT_EQ(parse_config(format_config(c.config)), c.config) << format_config(c.config);
    }
    for (const char* want : {"1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "2x1 mc off", "1x2 mc off", "2x2 mc off",
                             "2x2+comp", "4x1+comp", "1x4+comp"})
      EXPECT_TRUE(labels.count(want)) << p.label() << " lacks " << want;
  }
}

TEST(McastSuite, TheGpuTestsRunEveryKernelConfigTheSuiteTimes) {
  // tests/gpu/gemm's GemmMulticastWorth cases hold each (tile, stages, cluster, multicast,
  // companion) of the suite, on a small ragged problem; a new config here needs a case there.
  const std::vector<test::GemmCase> cases = test::multicast_worth_cases();
  auto same_kernel_config = [](const GemmConfig& a, const GemmConfig& b) {
    return a.block_m == b.block_m && a.block_n == b.block_n && a.stages == b.stages && a.cluster_m == b.cluster_m &&
           a.cluster_n == b.cluster_n && (a.multicast_a == 0) == (b.multicast_a == 0) &&
           (a.multicast_b == 0) == (b.multicast_b == 0) && (a.companion == 1) == (b.companion == 1);
  };
  for (const BenchProblem& p : make_suite("mcast"))
    for (const McastConfig& c : mcast_configs(p, kH200)) {
      bool found = false;
      for (const test::GemmCase& g : cases) found = found || same_kernel_config(g.config, c.config);
      EXPECT_TRUE(found) << p.label() << " " << c.label << ": " << format_config(c.config);
    }
}

TEST(McastSuite, ConfigTextNamesTileClusterAndMulticast) {
  const std::vector<McastConfig> configs = mcast_configs(problem_of(8192, 8192, 8192), kH200);
  const std::string off = format_config(find(configs, "2x1 mc off")->config);
  EXPECT_NE(off.find("block_m=128,block_n=256"), std::string::npos) << off;
  EXPECT_NE(off.find("cluster=2x1"), std::string::npos) << off;
  EXPECT_NE(off.find("multicast_a=0"), std::string::npos) << off;
  EXPECT_NE(off.find("multicast_b=0"), std::string::npos) << off;
  EXPECT_NE(format_config(find(configs, "4x1+comp")->config).find("companion=1"), std::string::npos);
  EXPECT_NE(format_config(find(configs, "4x1")->config).find("companion=0"), std::string::npos);
}

TEST(McastSuite, ModelBytesFollowTheClosedFormOn8192Cubed) {
  // 2048 tiles of 128x256 over K = 8192: A is read once per cluster_n CTAs, B once per cluster_m.
  const BenchProblem p = problem_of(8192, 8192, 8192);
  const std::vector<McastConfig> configs = mcast_configs(p, kH200);
  const double tiles = 64.0 * 32.0, k = 8192, elem = 2;
  auto expect_bytes = [&](const char* label, double a_share, double b_share) {
    const McastConfig* c = find(configs, label);
    ASSERT_NE(c, nullptr) << label;
    const TrafficModel m = traffic_model(p, c->config, kH200);
    EXPECT_DOUBLE_EQ(static_cast<double>(m.l2_to_sm_bytes), tiles * k * (128 * a_share + 256 * b_share) * elem)
        << label;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.l2_to_sm_bytes_unicast), tiles * k * (128 + 256) * elem) << label;
  };
  expect_bytes("1x1", 1, 1);
  expect_bytes("2x1", 1, 0.5);  // the two CTAs along M share B
  expect_bytes("1x2", 0.5, 1);  // along N they share A
  expect_bytes("2x2", 0.5, 0.5);
  expect_bytes("4x1", 1, 0.25);
  expect_bytes("1x4", 0.25, 1);
  // Multicast off: every CTA loads its own tiles, whatever the cluster.
  expect_bytes("2x1 mc off", 1, 1);
  expect_bytes("1x2 mc off", 1, 1);
  expect_bytes("2x2 mc off", 1, 1);
}

TEST(McastSuite, ClustersOf4RunOn120SmsAloneAnd132WithTheCompanion) {
  for (const BenchProblem& p : make_suite("mcast")) {
    const std::vector<McastConfig> configs = mcast_configs(p, kH200);
    for (const char* label : {"2x2", "4x1", "1x4"}) {
      const TrafficModel alone = traffic_model(p, find(configs, label)->config, kH200);
      EXPECT_EQ(alone.sms, 120u) << p.label() << " " << label;
      EXPECT_FALSE(alone.companion);
      const TrafficModel both = traffic_model(p, find(configs, std::string(label) + "+comp")->config, kH200);
      EXPECT_TRUE(both.companion) << p.label() << " " << label;
      EXPECT_EQ(both.sms, 132u) << p.label() << " " << label;
    }
    EXPECT_EQ(traffic_model(p, find(configs, "1x1")->config, kH200).sms, 132u);
    EXPECT_EQ(traffic_model(p, find(configs, "2x1")->config, kH200).sms, 132u);
  }
}

TEST(McastSuite, PartialWaveShapeCostsClustersOf4NoWaveButThe1x4) {
  // The reason multicast_configs.cpp gives for 4096x2112x7168 at 128x256.
  const BenchProblem p = problem_of(4096, 2112, 7168);
  const std::vector<McastConfig> configs = mcast_configs(p, kH200);
  auto waves = [&](const char* label) {
    return std::ceil(plan::plan_gemm(problem_desc(p), kH200, find(configs, label)->config).cost.waves - 1e-9);
  };
  EXPECT_EQ(waves("1x1"), 3);
  EXPECT_EQ(waves("2x1"), 3);
  EXPECT_EQ(waves("4x1"), 3);
  EXPECT_EQ(waves("2x2"), 3);
  EXPECT_EQ(waves("1x4"), 4);
}

TEST(McastSuite, OtherProblemsTakeThePlannersTileAt1x1) {
  BenchProblem p = parse_shape("4096,576,7168");
  EXPECT_FALSE(mcast_tile_pinned(p));
  GemmConfig one;
  one.cluster_m = one.cluster_n = 1;
  one.k_splits = 1;
  const plan::GemmPlan pl = plan::plan_gemm(problem_desc(p), kH200, one);
  const GemmConfig t = mcast_tile(p, kH200);
  EXPECT_EQ(t.block_m, pl.main.kernel.block_m);
  EXPECT_EQ(t.block_n, pl.main.kernel.block_n);
}

TEST(EnergyLoop, SizedByTheWindowAndBounded) {
  EXPECT_EQ(gemms_for(2.0, 50.0, 2000000), 40000);
  EXPECT_EQ(gemms_for(2.0, 1641.0, 2000000), 1219);  // 8192^3: ceil(2e6 / 1641)
  EXPECT_EQ(gemms_for(2.0, 0.01, 1000), 1000);       // a bogus estimate cannot enqueue millions
  EXPECT_EQ(gemms_for(2.0, 0.0, 1000), 1);           // no estimate: one call
  EXPECT_EQ(gemms_for(0.0, 50.0, 1000), 1);
}

}  // namespace
}  // namespace tilecast::bench
