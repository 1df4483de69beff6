// Every kernel the GPU JIT tests launch compiles for sm_90a without spills or local memory, so a
// GPU run does not find out first.
#include <gtest/gtest.h>

#include "gpu/jit/test_kernels.hpp"
#include "jit/compiler.hpp"

namespace tilecast::jit {
namespace {

void expect_clean(const Compiler& compiler, const KernelSpec& spec) {
  const CompiledKernel k = compiler.compile(spec);
  EXPECT_TRUE(k.report.found) << spec.name_expression;
  EXPECT_FALSE(k.report.has_spills()) << spec.name_expression << ": " << k.report.to_string();
  EXPECT_FALSE(k.report.uses_local_memory()) << spec.name_expression << ": "
                                             << k.report.to_string();
  std::printf("%-40s %s\n", spec.name_expression.c_str(), k.report.to_string().c_str());
}

TEST(JitGpuTestKernels, CompileCleanly) {
  const Compiler compiler;
  expect_clean(compiler, test::cluster_rank_spec());
  expect_clean(compiler, test::add_spec(1));
  for (const auto& [rank, rows, cols, swizzle] :
       std::vector<std::array<uint32_t, 4>>{{2, 64, 64, 128}, {2, 16, 40, 0}, {3, 32, 64, 128}}) {
    expect_clean(compiler, test::tma_load_spec(rank, rows, cols, swizzle));
  }
}

}  // namespace
}  // namespace tilecast::jit
