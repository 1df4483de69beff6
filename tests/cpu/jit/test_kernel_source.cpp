// Generated sources from named template arguments: the text, its round trip, and NVRTC compiling
// what it names.
#include <gtest/gtest.h>

#include "jit/kernel_source.hpp"
#include "jit_test_util.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

using test::Contains;

KernelSource example() {
  return KernelSource("jit_test::scaled_copy")
      .include("jit_test/scaled_copy.cuh")
      .arg("kScale", 3)
      .arg_bool("kNegate", true)
      .arg_expr("Index", "cuda::std::integral_constant<int, 7>");
}

TEST(JitKernelSource, LabelsEveryArgument) {
  const KernelSource src = example();
  EXPECT_EQ(src.name_expression(),
            "jit_test::scaled_copy<3, true, cuda::std::integral_constant<int, 7>>");
  const std::string text = src.source();
  EXPECT_TRUE(Contains(text, "#include \"jit_test/scaled_copy.cuh\"\n"));
  EXPECT_TRUE(Contains(text, "//   /*kScale=*/3,\n"));
  EXPECT_TRUE(Contains(text, "//   /*kNegate=*/true,\n"));
  EXPECT_TRUE(Contains(text, "//   /*Index=*/cuda::std::integral_constant<int, 7>>\n"));
}

TEST(JitKernelSource, RoundTrips) {
  const KernelSource src = example();
  EXPECT_EQ(parse_template_args(src.source()), src.args());
  EXPECT_TRUE(parse_template_args(KernelSource("k").source()).empty());
}

TEST(JitKernelSource, RefusesBadNames) {
  EXPECT_THROW(KernelSource("k").arg("", 1), Error);
  EXPECT_THROW(KernelSource("k").arg("a=b", 1), Error);
  EXPECT_THROW(KernelSource("k").arg_expr("a", "1\n2"), Error);
  EXPECT_THROW(KernelSource(""), Error);
}

TEST(JitKernelSource, CompilesWhatItNames) {
  const Compiler base;
  std::vector<SourceHeader> headers = base.headers();
  headers.push_back({"jit_test/scaled_copy.cuh", R"(
#pragma once
#include "tilecast/device/common.cuh"
#include <cuda/std/type_traits>
namespace jit_test {
template <int kScale, bool kNegate, class Index>
__global__ void scaled_copy(const int* in, int* out) {
  const int v = in[threadIdx.x + Index::value] * kScale;
  out[threadIdx.x] = kNegate ? -v : v;
}
}  // namespace jit_test
)"});
  const Compiler compiler(headers, base.cccl_include());
  KernelSource src = example();
  src.include("cuda/std/type_traits");
  const CompiledKernel k = compiler.compile(src.spec({"-DTC_UNUSED=1"}));
  EXPECT_TRUE(k.report.found);
  EXPECT_TRUE(Contains(k.lowered_name, "scaled_copy"));
}

}  // namespace
}  // namespace tilecast::jit
