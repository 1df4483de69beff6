// Generated sources that instantiate a kernel with a traits struct of named fields: the text, its
// round trip, NVRTC compiling what it names, and a missing field failing the compile; and the GEMM
// kernel's source carrying every field of its spec.
#include <gtest/gtest.h>

#include <map>

#include "api/gemm_source.hpp"
#include "jit/kernel_source.hpp"
#include "jit_test_util.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

using test::Contains;

KernelSource example() {
  return KernelSource("jit_test::scaled_copy", "CopyTraits")
      .include("jit_test/scaled_copy.cuh")
      .field("kScale", uint32_t{3})
      .field("kNegate", true)
      .field("int", "kOffset", "7");
}

TEST(JitKernelSource, NamesEveryField) {
  const KernelSource src = example();
  EXPECT_EQ(src.name_expression(), "jit_test::scaled_copy<CopyTraits>");
  const std::string text = src.source();
  EXPECT_TRUE(Contains(text, "#include \"jit_test/scaled_copy.cuh\"\n"));
  EXPECT_TRUE(Contains(text, "struct CopyTraits {\n"));
  EXPECT_TRUE(Contains(text, "  static constexpr tilecast::uint32_t kScale = 3u;\n"));
  EXPECT_TRUE(Contains(text, "  static constexpr bool kNegate = true;\n"));
  EXPECT_TRUE(Contains(text, "  static constexpr int kOffset = 7;\n"));
}

TEST(JitKernelSource, RoundTrips) {
  const KernelSource src = example();
  EXPECT_EQ(parse_traits_fields(src.source()), src.fields());
  EXPECT_TRUE(parse_traits_fields(KernelSource("k", "T").source()).empty());
}

TEST(JitKernelSource, RefusesBadNames) {
  EXPECT_THROW(KernelSource("k", "T").field("", true), Error);
  EXPECT_THROW(KernelSource("k", "T").field("a=b", true), Error);
  EXPECT_THROW(KernelSource("k", "T").field("int", "a", "1;2"), Error);
  EXPECT_THROW(KernelSource("k", "T").field("a", true).field("a", false), Error) << "a field given twice";
  EXPECT_THROW(KernelSource("", "T"), Error);
  EXPECT_THROW(KernelSource("k", "not a name"), Error);
}

// The GEMM kernel's source holds every field spec_of() reads, and the spec's fingerprint.
TEST(JitKernelSource, GemmSourceWritesEveryFieldOfTheSpec) {
  GemmKernelSpec s;
  s.block_m = 64;
  s.block_n = 176;
  s.stages = 7;
  s.cluster = {1, 4};
  s.consumer_warpgroups = 1;
  s.out = DType::kFP32;
  s.has_c = true;
  s.type = GemmType::kBatched;
  s.dynamic_units = true;
  const KernelSpec k = api::gemm_kernel_source(s);
  EXPECT_EQ(k.name_expression, "tilecast::gemm_sm90_kernel<Gemm_64x176_st7_c1x4_wg1_fp32_c_batched_dynamic>");
  std::map<std::string, std::string> fields;
  for (const TraitsField& f : parse_traits_fields(k.source)) fields[f.name] = f.value;
  EXPECT_EQ(fields["kBlockM"], "64u");
  EXPECT_EQ(fields["kBlockN"], "176u");
  EXPECT_EQ(fields["kStages"], "7u");
  EXPECT_EQ(fields["kClusterM"], "1u");
  EXPECT_EQ(fields["kClusterN"], "4u");
  EXPECT_EQ(fields["kConsumerWarpgroups"], "1u");
  EXPECT_EQ(fields["kOutput"], "tilecast::DType::kFP32");
  EXPECT_EQ(fields["kHasC"], "true");
  EXPECT_EQ(fields["kGemmType"], "tilecast::GemmType::kBatched");
  EXPECT_EQ(fields["kDynamicUnits"], "true");
  EXPECT_EQ(fields["kSplitK"], "false");
  EXPECT_EQ(fields["kContiguousLayout"], "tilecast::ContiguousLayout::kRowIndex");
  EXPECT_EQ(fields["kSpecFingerprint"], std::to_string(spec_fingerprint(s)) + "ull");
  EXPECT_EQ(fields["kHasBias"], "false");
  EXPECT_EQ(fields["kBiasType"], "tilecast::DType::kFP32");
  EXPECT_EQ(fields["kLayout"], "tilecast::GemmLayout::kNT");
  EXPECT_EQ(fields.size(), 16u) << "a field was added: check spec_of() reads it";
  // The m-grouped layout is a field of its own and part of the kernel's name.
  s.type = GemmType::kMGroupedContiguous;
  s.contiguous_layout = ContiguousLayout::kOffsets;
  s.has_c = false;
  const KernelSpec grouped = api::gemm_kernel_source(s);
  EXPECT_EQ(grouped.name_expression,
            "tilecast::gemm_sm90_kernel<Gemm_64x176_st7_c1x4_wg1_fp32_mgrouped_offsets_dynamic>");
  fields.clear();
  for (const TraitsField& f : parse_traits_fields(grouped.source)) fields[f.name] = f.value;
  EXPECT_EQ(fields["kContiguousLayout"], "tilecast::ContiguousLayout::kOffsets");
  EXPECT_EQ(fields["kGemmType"], "tilecast::GemmType::kMGroupedContiguous");
  // Another layout than NT is a field and part of the name too.
  s.type = GemmType::kBatched;
  s.contiguous_layout = ContiguousLayout::kRowIndex;
  s.layout = GemmLayout::kTN;
  const KernelSpec tn = api::gemm_kernel_source(s);
  EXPECT_EQ(tn.name_expression, "tilecast::gemm_sm90_kernel<Gemm_64x176_st7_c1x4_wg1_fp32_batched_dynamic_tn>");
  fields.clear();
  for (const TraitsField& f : parse_traits_fields(tn.source)) fields[f.name] = f.value;
  EXPECT_EQ(fields["kLayout"], "tilecast::GemmLayout::kTN");
  EXPECT_EQ(fields["kSpecFingerprint"], std::to_string(spec_fingerprint(s)) + "ull");
}

TEST(JitKernelSource, CompilesWhatItNames) {
  const Compiler base;
  std::vector<SourceHeader> headers = base.headers();
  headers.push_back({"jit_test/scaled_copy.cuh", R"(
#pragma once
#include "tilecast/device/common.cuh"
#include <cuda/std/type_traits>
namespace jit_test {
template <class Traits>
__global__ void scaled_copy(const int* in, int* out) {
  const int v = in[threadIdx.x + Traits::kOffset] * static_cast<int>(Traits::kScale);
  out[threadIdx.x] = Traits::kNegate ? -v : v;
}
}  // namespace jit_test
)"});
  const Compiler compiler(headers, base.cccl_include());
  KernelSource src = example();
  src.include("cuda/std/type_traits");
  const CompiledKernel k = compiler.compile(src.spec({"-DTC_UNUSED=1"}));
  EXPECT_TRUE(k.report.found);
  EXPECT_TRUE(Contains(k.lowered_name, "scaled_copy"));
  // The kernel reads fields by name: a traits struct without one does not compile.
  KernelSource missing("jit_test::scaled_copy", "CopyTraits");
  missing.include("jit_test/scaled_copy.cuh").field("kScale", uint32_t{3}).field("int", "kOffset", "7");
  EXPECT_THROW(compiler.compile(missing.spec()), Error);
}

}  // namespace
}  // namespace tilecast::jit
