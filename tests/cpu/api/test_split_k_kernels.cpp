// The split-K kernels compile through NVRTC for sm_90a without local memory: the GEMM kernels
// the planner picks for the small-M shapes of issue #12 (and forced splits at every tile width
// class and a multicast cluster), and every reduce kernel (D's dtype x C x bias and its dtype).
// The full variant sweep (test_kernel_variants) covers more; this one runs in a minute.
#include <gtest/gtest.h>

#include <set>

#include "api/gemm_source.hpp"
#include "gpu/gemm/split_k_cases.hpp"
#include "api/split_k.hpp"
#include "jit/compiler.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {
namespace {

void expect_clean(const jit::Compiler& compiler, const jit::KernelSpec& spec) {
  const jit::CompiledKernel k = compiler.compile(spec);
  EXPECT_TRUE(k.report.found) << spec.name_expression;
  EXPECT_FALSE(k.report.has_spills()) << spec.name_expression << ": " << k.report.to_string();
  EXPECT_FALSE(k.report.uses_local_memory()) << spec.name_expression << ": " << k.report.to_string();
  std::printf("%-70s %s\n", spec.name_expression.c_str(), k.report.to_string().c_str());
}

TEST(SplitKKernels, GemmKernelsCompileWithoutLocalMemory) {
  const plan::DeviceFacts f = plan::DeviceFacts::h200_model();
  std::set<std::string> names;
  std::vector<GemmKernelSpec> specs;
  const auto add = [&](const plan::GemmPlan& p) {
    ASSERT_GT(p.k_splits, 1u) << p.describe();
    ASSERT_TRUE(p.main.kernel.split_k);
    if (names.insert(gemm_kernel_source(p.main.kernel).name_expression).second) specs.push_back(p.main.kernel);
  };
  // The planner's own choices.
  for (const auto& s : std::vector<std::array<int64_t, 3>>{{128, 576, 7168}, {128, 2112, 7168}, {1, 4096, 4096},
                                                          {255, 576, 7168}, {333, 2112, 7168}})
    add(plan::plan_gemm(plan::dense_desc(s[0], s[1], s[2], 1, DType::kBF16, false), f));
  // Forced: 64- and 128-row tiles, narrow, odd and the widest widths, a multicast cluster each way.
  const struct {
    uint32_t bm, bn, cm, cn;
  } forced[] = {{128, 256, 1, 1}, {128, 144, 2, 1}, {128, 96, 1, 2}, {64, 176, 1, 1}, {64, 256, 2, 1}, {128, 64, 2, 2}};
  for (const auto& x : forced) {
    GemmConfig o;
    o.block_m = x.bm;
    o.block_n = x.bn;
    o.cluster_m = x.cm;
    o.cluster_n = x.cn;
    o.k_splits = 3;
    add(plan::plan_gemm(plan::dense_desc(256, 4096, 4096, 2, DType::kBF16, true), f, o));
  }
  const jit::Compiler compiler;
  for (const GemmKernelSpec& s : specs) expect_clean(compiler, gemm_kernel_source(s));
  EXPECT_GE(specs.size(), 8u);
}

// Split-K summed across the cluster (cluster_reduce=1): 64- and 128-row tiles at narrow, odd and
// wide widths, with the most slices (8: the band sum's loads of every slice in flight) and with
// two beside FP32 output, C and a bias (the widest epilogue); wherever the stages fit beside the
// partial tile (128x256 do not).
TEST(SplitKKernels, ClusterReduceKernelsCompileWithoutLocalMemory) {
  const plan::DeviceFacts f = plan::DeviceFacts::h200_model();
  const jit::Compiler compiler;
  size_t compiled = 0;
  for (uint32_t bm : {64u, 128u})
    for (uint32_t bn : {64u, 144u, 192u, 256u})
      for (bool wide_epilogue : {false, true}) {
        GemmConfig o;
        o.block_m = bm;
        o.block_n = bn;
        o.cluster_reduce = 1;
        o.k_splits = wide_epilogue ? 2 : 8;
        plan::GemmDesc d = plan::dense_desc(255, 4096, 7168, 1, wide_epilogue ? DType::kFP32 : DType::kBF16, wide_epilogue);
        d.has_bias = wide_epilogue;
        plan::GemmPlan p;
        try {
          p = plan::plan_gemm(d, f, o);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("not even two stages fit"), std::string::npos) << e.what();
          continue;
        }
        ASSERT_EQ(p.main.kernel.k_cluster, o.k_splits) << p.describe();
        expect_clean(compiler, gemm_kernel_source(p.main.kernel));
        ++compiled;
      }
  EXPECT_GE(compiled, 12u);
}

// Every split kernel the SplitK GPU tests launch (tests/gpu/gemm/split_k_cases.cpp), so that the
// GPU run finds none that spills.
TEST(SplitKKernels, TheGpuTestsKernelsCompileWithoutLocalMemory) {
  const plan::DeviceFacts f = plan::DeviceFacts::h200_model();
  std::set<std::string> names;
  const jit::Compiler compiler;
  size_t split = 0;
  for (const auto& list : {test::split_k_cases(), test::split_k_graph_cases()})
    for (const test::GemmCase& c : list) {
      const plan::GemmPlan p = plan::plan_gemm(test::desc_of(c), f, c.config);
      if (c.config.k_splits > 1) {
        EXPECT_EQ(p.k_splits, c.config.k_splits) << c.name();
      }
      if (p.k_splits > 1) ++split;
      if (!names.insert(gemm_kernel_source(p.main.kernel).name_expression).second) continue;
      expect_clean(compiler, gemm_kernel_source(p.main.kernel));
    }
  EXPECT_GE(split, 30u) << "the GPU cases are meant to be split";
}

TEST(SplitKKernels, ReduceKernelsCompileWithoutLocalMemory) {
  const jit::Compiler compiler;
  for (DType out : {DType::kBF16, DType::kFP32})
    for (bool c : {false, true})
      for (int bias = 0; bias < 3; ++bias) {
        plan::GemmDesc d = plan::dense_desc(128, 576, 7168, 1, out, c);
        d.has_bias = bias > 0;
        d.bias_type = bias == 2 ? DType::kBF16 : DType::kFP32;
        expect_clean(compiler, split_k_reduce_source(d));
      }
}

}  // namespace
}  // namespace tilecast::api
