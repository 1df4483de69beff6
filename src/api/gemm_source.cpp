#include "api/gemm_source.hpp"

#include "jit/kernel_source.hpp"

namespace tilecast::api {
namespace {

const char* dtype_expression(DType t) { return t == DType::kFP32 ? "tilecast::DType::kFP32" : "tilecast::DType::kBF16"; }

const char* type_expression(GemmType t) {
  switch (t) {
    case GemmType::kNormal: return "tilecast::GemmType::kNormal";
    case GemmType::kBatched: return "tilecast::GemmType::kBatched";
    case GemmType::kMGroupedContiguous: return "tilecast::GemmType::kMGroupedContiguous";
    case GemmType::kMGroupedMasked: return "tilecast::GemmType::kMGroupedMasked";
    case GemmType::kKGroupedContiguous: return "tilecast::GemmType::kKGroupedContiguous";
  }
  return "?";  // refused by gemm_spec_error before a source is written
}

const char* layout_expression(GemmLayout l) {
  switch (l) {
    case GemmLayout::kNT: return "tilecast::GemmLayout::kNT";
    case GemmLayout::kNN: return "tilecast::GemmLayout::kNN";
    case GemmLayout::kTN: return "tilecast::GemmLayout::kTN";
    case GemmLayout::kTT: return "tilecast::GemmLayout::kTT";
  }
  return "?";  // refused by gemm_spec_error before a source is written
}

const char* type_name(GemmType t) {
  static const char* const kNames[] = {"normal", "batched", "mgrouped", "masked", "kgrouped"};
  const uint32_t i = static_cast<uint32_t>(t);
  return i < 5 ? kNames[i] : "unknown";
}

// The traits struct's name, which profilers and sanitizers show as the kernel's template
// argument: it says what the kernel is ("Gemm_128x144_st6_c2x1_bf16_normal"; other layouts than
// NT add theirs: "Gemm_128x128_st6_c2x1_bf16_normal_tn"; swapped operands "_swapab", a split-K
// kernel that reduces in the GEMM "_splitk_fused", one that reduces across a cluster of 4
// "_splitk_kc4", consumers that split the columns "_splitcols").
std::string traits_name(const GemmKernelSpec& s) {
  return "Gemm_" + std::to_string(s.block_m) + "x" + std::to_string(s.block_n) + "_st" + std::to_string(s.stages) +
         "_c" + std::to_string(s.cluster.m) + "x" + std::to_string(s.cluster.n) + "_wg" +
         std::to_string(s.consumer_warpgroups) + (s.out == DType::kFP32 ? "_fp32" : "_bf16") + (s.has_c ? "_c" : "") +
         (s.has_bias ? (s.bias_type == DType::kFP32 ? "_bias32" : "_bias16") : "") + "_" + type_name(s.type) +
         (s.type == GemmType::kMGroupedContiguous
              ? (s.contiguous_layout == ContiguousLayout::kOffsets ? "_offsets" : "_rowindex")
              : "") +
         (s.dynamic_units ? "_dynamic" : "") + (s.split_k ? "_splitk" : "") +
         (s.layout != GemmLayout::kNT ? std::string("_") + layout_name(s.layout) : std::string()) +
         (s.swap_ab ? "_swapab" : "") + (s.fused_reduce ? "_fused" : "") +
         (s.k_cluster > 1 ? "_kc" + std::to_string(s.k_cluster) : "") + (s.split_columns ? "_splitcols" : "") +
         (s.pingpong ? "_pingpong" : "") + (s.k_serpentine ? "_serpentine" : "");
}

}  // namespace

jit::KernelSpec gemm_kernel_source(const GemmKernelSpec& s) {
  jit::KernelSource source("tilecast::gemm_sm90_kernel", traits_name(s));
  source
      .include("tilecast/device/kernels/gemm_sm90/kernel.cuh")
      .field("kBlockM", s.block_m)
      .field("kBlockN", s.block_n)
      .field("kStages", s.stages)
      .field("kClusterM", s.cluster.m)
      .field("kClusterN", s.cluster.n)
      .field("kConsumerWarpgroups", s.consumer_warpgroups)
      .field("tilecast::DType", "kOutput", dtype_expression(s.out))
      .field("kHasC", s.has_c)
      .field("kHasBias", s.has_bias)
      .field("tilecast::DType", "kBiasType", dtype_expression(s.bias_type))
      .field("tilecast::GemmType", "kGemmType", type_expression(s.type))
      .field("tilecast::ContiguousLayout", "kContiguousLayout",
             s.contiguous_layout == ContiguousLayout::kOffsets ? "tilecast::ContiguousLayout::kOffsets"
                                                               : "tilecast::ContiguousLayout::kRowIndex")
      .field("kDynamicUnits", s.dynamic_units)
      .field("kSplitK", s.split_k)
      .field("tilecast::GemmLayout", "kLayout", layout_expression(s.layout));
  // Only where set: the other kernels' sources are the ones they were before swap_ab,
  // fused_reduce, k_cluster, split_columns, pingpong and k_serpentine existed, so their JIT cache
  // entries stay valid (spec_of reads a missing field as false).
  if (s.swap_ab) source.field("kSwapAB", true);
  if (s.fused_reduce) source.field("kFusedReduce", true);
  if (s.k_cluster > 1) source.field("kKCluster", s.k_cluster);
  if (s.split_columns) source.field("kSplitColumns", true);
  if (s.pingpong) source.field("kPingpong", true);
  if (s.k_serpentine) source.field("kKSerpentine", true);
  return source.field("kSpecFingerprint", spec_fingerprint(s)).spec();
}

}  // namespace tilecast::api
