// The SM90 planner on Hopper parts other than our H200 (an H100 PCIe, an H20, and made-up
// variants): properties every plan must have on the device it was made for, checked on
// MISSION.md's shapes (8192^3, the m = 4096 list, the m = 128 list), rather than expected plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {

struct Shape {
  uint32_t m, n, k;
};

// DeepGEMM's (n, k) list (MISSION.md), at m = 4096 and at m = 128, and 8192^3.
std::vector<Shape> mission_shapes() {
  constexpr Shape kNk[] = {{0, 2112, 7168}, {0, 576, 7168},   {0, 24576, 1536}, {0, 32768, 512},
                           {0, 7168, 16384}, {0, 4096, 7168}, {0, 7168, 2048}};
  std::vector<Shape> s{{8192, 8192, 8192}};
  for (uint32_t m : {4096u, 128u})
    for (const Shape& nk : kNk) s.push_back({m, nk.n, nk.k});
  return s;
}

std::string name(const Shape& s) { return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k); }

GemmDesc dense(const Shape& s) { return dense_desc(s.m, s.n, s.k, 1, DType::kBF16, false); }

// rank_plans of a shape on a device, made once for all the tests of this file (they take seconds).
const std::vector<GemmPlan>& ranked(const DeviceFacts& f, const Shape& s) {
  static std::map<std::string, std::vector<GemmPlan>> cache;
  auto [it, fresh] = cache.try_emplace(f.name + " " + name(s));
  if (fresh) it->second = rank_plans(dense(s), f);
  return it->second;
}

// Units of the launch (cluster-sized pieces of work) for a dense problem.
uint64_t units_of(const GemmPlan& p) {
  const GemmKernelSpec& k = p.main.kernel;
  const GemmProblem& q = p.desc.problem;
  // A cluster-summed split runs a tile's slices in one cluster: one unit per tile.
  return uint64_t{ceil_div(ceil_div(q.m, k.block_m), k.cluster.m)} * ceil_div(ceil_div(q.n, k.block_n), k.cluster.n) *
         (p.k_splits / k.k_cluster) * q.num_groups;
}

// Which resource bounds the plan's estimate (the largest of its terms).
bool mma_bound(const CostEstimate& c) { return c.mma_us >= std::max({c.ingress_us, c.l2_us, c.hbm_us, c.stream_us}); }

// The models, and two made-up parts that flush out a count taken from the H200: half its SMs,
// and an H20 on which clusters of 4 and 8 cannot be resident at all.
std::vector<DeviceFacts> devices() {
  DeviceAttributes half = DeviceFacts::h200_model().attributes;
  half.name = "half an H200";
  half.num_sms = 66;
  half.max_active_clusters = {66, 33, 15, 7};
  DeviceAttributes no_quads = DeviceFacts::h20_model().attributes;
  no_quads.name = "H20 without clusters of 4";
  no_quads.max_active_clusters[2] = no_quads.max_active_clusters[3] = 0;
  return {DeviceFacts::h100_pcie_model(), DeviceFacts::h20_model(), DeviceFacts::h200_model(), derive_facts(half),
          derive_facts(no_quads)};
}

TEST(PlansOnOtherParts, EveryPlanFitsTheDeviceItWasMadeFor) {
  for (const DeviceFacts& f : devices())
    for (const Shape& s : mission_shapes())
      for (const GemmPlan& p : ranked(f, s)) {
        const ClusterShape cs = p.main.kernel.cluster;
        const std::string what = f.name + " " + name(s) + ": " + p.describe();
        ASSERT_GE(p.main.clusters, 1u) << what;
        const uint32_t launch_cluster = cs.size() * p.main.kernel.k_cluster;
        EXPECT_LE(p.main.clusters * launch_cluster, f.num_sms) << what;
        EXPECT_LE(p.main.clusters, f.clusters_for(launch_cluster)) << "no more clusters than are resident: " << what;
        EXPECT_EQ(p.sm_budget, f.num_sms) << what;
      }
}

TEST(PlansOnOtherParts, ALaunchTakesEveryResidentClusterItHasWorkFor) {
  for (const DeviceFacts& f : devices())
    for (const Shape& s : mission_shapes())
      for (const GemmPlan& p : ranked(f, s)) {
        const std::string what = f.name + " " + name(s) + ": " + p.describe();
        const uint64_t units = units_of(p);
        const uint32_t resident = f.clusters_for(p.main.kernel.cluster.size() * p.main.kernel.k_cluster);
        EXPECT_EQ(p.main.clusters, std::min<uint64_t>(units, resident)) << what;
        // Waves on this device's clusters, not the H200's.
        EXPECT_NEAR(p.cost.waves, static_cast<double>(units) / p.main.clusters, 1e-9) << what;
      }
}

TEST(PlansOnOtherParts, NoEstimateBeatsTheDevicesOwnRoofline) {
  for (const DeviceFacts& f : devices())
    for (const Shape& s : mission_shapes()) {
      const double flops = 2.0 * s.m * s.n * s.k;
      const double m = s.m, n = s.n, k = s.k;
      const double bytes = 2.0 * (m * k + n * k + m * n);
      for (const GemmPlan& p : ranked(f, s)) {
        const std::string what = f.name + " " + name(s) + ": " + p.describe();
        EXPECT_GE(p.cost.mma_us * 1e-6 * f.peak_bf16_tflops * 1e12, flops * (1 - 1e-9)) << what;
        // With split-K, D's bytes move in the reduce kernel.
        EXPECT_GE((p.cost.hbm_us + p.cost.reduce_us) * 1e-6 * f.hbm_tb_per_s * 1e12, bytes * (1 - 1e-9)) << what;
      }
    }
}

TEST(PlansOnOtherParts, NoClusterThatCannotBeResident) {
  for (const DeviceFacts& f : devices())
    for (const Shape& s : mission_shapes())
      for (const GemmPlan& p : ranked(f, s))
        EXPECT_GT(f.clusters_for(p.main.kernel.cluster.size()), 0u) << f.name << " " << name(s) << ": " << p.describe();
  // And where clusters of 4 leave many SMs idle (the H100 PCIe's fit 100 of 114), they are not
  // chosen for the compute-bound shapes.
  const DeviceFacts pcie = DeviceFacts::h100_pcie_model();
  for (const Shape& s : mission_shapes())
    if (s.m >= 4096) { EXPECT_LT(ranked(pcie, s).front().main.kernel.cluster.size(), 4u) << name(s); }
}

TEST(PlansOnOtherParts, SplitKIsWeighedWhereTheLargestTilesAreFewerThanThisDevicesSms) {
  // 128 x 24576 has 96 tiles of 128 x 256: fewer than the H200's 132 and the H100 PCIe's 114 SMs,
  // more than the H20's 78.
  const Shape s{128, 24576, 1536};
  const auto any_split = [&](const DeviceFacts& f) {
    const std::vector<GemmPlan>& r = ranked(f, s);
    return std::any_of(r.begin(), r.end(), [](const GemmPlan& p) { return p.k_splits > 1; });
  };
  EXPECT_TRUE(any_split(DeviceFacts::h200_model()));
  EXPECT_TRUE(any_split(DeviceFacts::h100_pcie_model()));
  EXPECT_FALSE(any_split(DeviceFacts::h20_model()));
}

TEST(PlansOnOtherParts, FewTilesOnLongKSplitUnlessMemoryBindsAnyway) {
  // Where the best unsplit plan leaves more than half of this device's SMs idle and its estimate
  // is not HBM's (which no split can beat), the chosen plan splits K, unless the unsplit plan is
  // within the planner's tie (5%) of the cheapest: then fewer slices win.
  uint32_t cases = 0;
  for (const DeviceFacts& f : {DeviceFacts::h100_pcie_model(), DeviceFacts::h20_model(), DeviceFacts::h200_model()})
    for (const Shape& s : mission_shapes()) {
      if (s.m != 128) continue;
      GemmConfig unsplit;
      unsplit.k_splits = 1;
      const GemmPlan u = plan_gemm(dense(s), f, unsplit);
      const bool idle = u.main.clusters * u.main.kernel.cluster.size() * 2 < f.num_sms;
      const bool hbm_bound = u.cost.hbm_us >= std::max({u.cost.mma_us, u.cost.ingress_us, u.cost.l2_us, u.cost.stream_us});
      const GemmPlan p = plan_gemm(dense(s), f);
      const std::vector<GemmPlan>& all = ranked(f, s);
      const double cheapest = std::min_element(all.begin(), all.end(), [](const GemmPlan& a, const GemmPlan& b) {
                                return a.cost.total_us < b.cost.total_us;
                              })->cost.total_us;
      const bool tie = u.cost.total_us <= cheapest * 1.05;
      cases += idle && !hbm_bound && !tie;
      if (idle && !hbm_bound && !tie) { EXPECT_GT(p.k_splits, 1u) << f.name << " " << name(s) << ": " << u.describe(); }
      if (tie) { EXPECT_EQ(p.k_splits, 1u) << f.name << " " << name(s) << ": a tie goes to fewer slices"; }
      EXPECT_LE(p.cost.total_us, u.cost.total_us) << "a split is taken only when it pays";
    }
  EXPECT_GE(cases, 3u) << "the m = 128 list leaves SMs idle on every device";
}

TEST(PlansOnOtherParts, TheH20IsComputeBoundWhereTheH200IsNot) {
  const DeviceFacts h20 = DeviceFacts::h20_model(), h200 = DeviceFacts::h200_model();
  uint32_t mma_bound_h20 = 0, mma_bound_h200 = 0;
  for (const Shape& s : mission_shapes()) {
    const GemmPlan &a = ranked(h20, s).front(), &b = ranked(h200, s).front();
    if (s.m >= 4096) { EXPECT_TRUE(mma_bound(a.cost)) << name(s) << ": " << a.describe(); }
    if (s.m != 128) continue;
    mma_bound_h20 += mma_bound(a.cost);
    mma_bound_h200 += mma_bound(b.cost);
  }
  // At m = 128 the H200 is bound by memory on most of the list; the H20's quarter-rate tensor
  // cores bind on most of it.
  EXPECT_GT(mma_bound_h20, mma_bound_h200);
  EXPECT_GE(mma_bound_h20, 5u);
}

TEST(PlansOnOtherParts, ThePlannerTakesNoCountFromTheH200) {
  // Half an H200 (66 SMs, the same per-SM rates) runs 8192^3 on its 66 SMs in twice the time.
  DeviceAttributes half = DeviceFacts::h200_model().attributes;
  half.num_sms = 66;
  half.max_active_clusters = {66, 33, 15, 7};
  const Shape s{8192, 8192, 8192};
  const GemmPlan full = plan_gemm(dense(s), DeviceFacts::h200_model());
  const GemmPlan p = plan_gemm(dense(s), derive_facts(half));
  EXPECT_EQ(p.main.clusters * p.main.kernel.cluster.size(), 66u);
  EXPECT_NEAR(p.cost.total_us / full.cost.total_us, 2.0, 0.05);
}

}  // namespace
}  // namespace tilecast::plan
