// Every kernel variant the planner can emit compiles through NVRTC for sm_90a with no local
// memory: no spills, no stack frame. Variants differ in register use by block shape, output dtype,
// the epilogue (C, bias) and dynamic units; the cluster shape and gemm type only change the
// schedule's arithmetic, so they rotate through the list rather than multiply it. The widths the
// spec refuses (gemm_spec_error: heavy epilogues and dynamic units with C above 192) are skipped,
// so each such limit is also checked from the other side: the widest allowed one compiles clean.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "api/warm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {
namespace {

TEST(KernelVariants, AllCompileWithoutLocalMemory) {
  // A cache of its own, so that every variant really goes through NVRTC and ptxas.
  const auto dir = std::filesystem::temp_directory_path() / ("tilecast-variants-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("TILECAST_CACHE_DIR", dir.c_str(), 1);

  std::vector<WarmItem> items;
  // Epilogues: none, C, bias, C and bias (the bias of the other dtype than the output half the
  // time). 64-row tiles take the first two only.
  struct Epi {
    bool c, bias;
  };
  const Epi epilogues[] = {{false, false}, {true, false}, {false, true}, {true, true}};
  const auto add = [&](plan::GemmDesc desc, GemmConfig config) {
    GemmKernelSpec probe;  // the planner refuses what the kernel cannot build: skip those here
    probe.block_m = config.block_m;
    probe.block_n = config.block_n;
    probe.stages = 2;
    probe.consumer_warpgroups = config.block_m / 64;
    probe.out = desc.out;
    probe.has_c = desc.has_c;
    probe.has_bias = desc.has_bias;
    probe.bias_type = desc.bias_type;
    probe.dynamic_units = config.companion == 1;
    if (gemm_spec_error(probe) == nullptr) items.push_back({desc, config});
  };
  int rotate = 0;
  for (uint32_t bm : {64u, 128u})
    for (uint32_t bn : kWgmmaBF16Widths)
      for (DType out : {DType::kBF16, DType::kFP32})
        for (const Epi& e : epilogues) {
          if (bm == 64 && e.bias) continue;
          const ClusterShape& cs = kClusterShapes[rotate % 6];
          plan::GemmDesc desc = plan::dense_desc(4096, 4096, 4096, rotate % 2 ? 2 : 1, out, e.c);
          desc.has_bias = e.bias;
          desc.bias_type = rotate % 4 < 2 ? DType::kBF16 : DType::kFP32;
          ++rotate;
          GemmConfig config;
          config.block_m = bm;
          config.block_n = bn;
          config.cluster_m = cs.m;
          config.cluster_n = cs.n;
          add(desc, config);
        }
  // Clusters of 4 with the companion: the dynamic-unit main kernel and the companion kernel, at
  // the widest tile each epilogue allows there.
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}})
    for (int variant = 0; variant < 3; ++variant) {  // BF16, BF16 + C, FP32 + C + bias
      const bool c = variant > 0;
      plan::GemmDesc desc = plan::dense_desc(4096, 4096, 4096, 1, variant == 2 ? DType::kFP32 : DType::kBF16, c);
      desc.has_bias = variant == 2;
      for (uint32_t bn : {128u, c ? kWidestDynamicEpilogueBlockN : 256u}) {
        GemmConfig config;
        config.block_m = 128;
        config.block_n = bn;
        config.cluster_m = cs.m;
        config.cluster_n = cs.n;
        config.companion = 1;
        add(desc, config);
      }
    }
  const std::vector<GemmKernelSpec> specs = kernels_to_warm(items, plan::DeviceFacts::h200_model());
  const auto kernels = warm_jit_cache(specs, std::max(2u, std::thread::hardware_concurrency()));
  EXPECT_GE(kernels.size(), 100u);
  for (const WarmedKernel& k : kernels) {
    EXPECT_FALSE(k.from_cache) << k.name;
    ASSERT_TRUE(k.report_found) << k.name << ": no ptxas report (a GPU machine's driver cache answered; "
                                             "run with CUDA_CACHE_DISABLE=1)";
    EXPECT_EQ(k.spill_bytes, 0u) << k.name;
    EXPECT_EQ(k.stack_bytes, 0u) << k.name;
    // One CTA per SM by registers, as the occupancy probe assumes (src/api/device_state.cpp).
    EXPECT_GT(uint64_t{k.registers} * k.threads, kSm90RegistersPerSm / 2) << k.name << ": " << k.registers
                                                                          << " registers";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilecast::api
