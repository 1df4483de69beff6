#include "api/gemm_kernel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "jit/launch.hpp"
#include "jit/runtime.hpp"

namespace tilecast::api {

jit::KernelSpec gemm_kernel_spec(const plan::KernelConfig& kc, const ClusterShape& cluster, const plan::GemmShape& s,
                                 bool dynamic_units) {
  return jit::KernelSource("tilecast::gemm_sm90_kernel")
      .include("tilecast/device/kernels/gemm_sm90/kernel.cuh")
      .arg("kBlockM", kc.block_m)
      .arg("kBlockN", kc.block_n)
      .arg("kStages", kc.stages)
      .arg("kClusterM", cluster.m)
      .arg("kClusterN", cluster.n)
      .arg("kConsumerWarpgroups", kc.consumer_warpgroups)
      .arg_bool("kOutputFP32", s.out == DType::kFP32)
      .arg_bool("kHasC", s.has_c)
      .arg_expr("kGemmType", s.type == GemmType::kBatched ? "tilecast::GemmType::kBatched" : "tilecast::GemmType::kNormal")
      .arg_bool("kDynamicUnits", dynamic_units)
      .spec();
}

std::vector<jit::KernelSpec> gemm_kernel_specs(const plan::GemmShape& s, const GemmConfig& o,
                                               const plan::DeviceFacts& facts) {
  const plan::KernelConfig kc = plan::choose_kernel(s, facts, o);
  if (!kc.dynamic_units()) return {gemm_kernel_spec(kc, kc.cluster, s, false)};
  return {gemm_kernel_spec(kc, kc.cluster, s, true), gemm_kernel_spec(kc, kc.companion, s, true)};
}

GemmLaunchPlan make_launch_plan(const plan::GemmShape& s, const GemmConfig& o, DeviceState& dev) {
  GemmLaunchPlan lp;
  lp.config = plan::choose_kernel(s, dev.facts(), o);
  plan::KernelConfig& kc = lp.config;
  jit::Runtime& jit = jit::Runtime::instance();
  const dim3 block(128 * (1 + kc.consumer_warpgroups));
  // The dynamic-unit and static kernels have the same threads, shared memory and register cap,
  // so the occupancy of the one planned answers for both.
  lp.main = &jit.kernel(gemm_kernel_spec(kc, kc.cluster, s, kc.dynamic_units()));
  const uint32_t resident =
      static_cast<uint32_t>(jit::max_active_clusters(*lp.main, kc.cluster.size(), block, kc.smem_bytes));
  if (resident == 0)
    throw Error("no cluster of " + std::to_string(kc.cluster.size()) + " CTAs with " + std::to_string(kc.smem_bytes) +
                " bytes of shared memory fits on this device");
  lp.main_clusters = std::min(resident, kc.num_clusters);
  if (o.max_sms) lp.main_clusters = std::max(1u, std::min(lp.main_clusters, o.max_sms / kc.cluster.size()));
  if (kc.dynamic_units()) {
    // The SMs the main launch leaves (within the SM cap) go to the companion's smaller clusters.
    const uint32_t used = lp.main_clusters * kc.cluster.size();
    const uint32_t budget = o.max_sms ? std::min(o.max_sms, dev.facts().num_sms) : dev.facts().num_sms;
    lp.companion_clusters = budget > used ? (budget - used) / kc.companion.size() : 0;
    kc.companion_clusters = lp.companion_clusters;
    if (lp.companion_clusters > 0) {
      lp.companion = &jit.kernel(gemm_kernel_spec(kc, kc.companion, s, true));
    } else {
      // No SM left for a companion: a plain launch of the static kernel.
      kc.companion = {0, 0};
      lp.main = &jit.kernel(gemm_kernel_spec(kc, kc.cluster, s, false));
    }
  }
  if (const char* debug = std::getenv("TILECAST_PLAN_DEBUG"); debug && *debug == '1')
    std::fprintf(stderr, "tilecast: gemm %ux%ux%u batch %u -> %s (main %u clusters, companion %u)\n", s.m, s.n, s.k,
                 s.batch, kc.describe().c_str(), lp.main_clusters, lp.companion_clusters);
  return lp;
}

}  // namespace tilecast::api
