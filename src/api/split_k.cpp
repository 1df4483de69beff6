#include "api/split_k.hpp"

#include <algorithm>

namespace tilecast::api {
namespace {

const char* dtype_expression(DType t) { return t == DType::kFP32 ? "tilecast::DType::kFP32" : "tilecast::DType::kBF16"; }

}  // namespace

jit::KernelSpec split_k_reduce_source(const plan::GemmDesc& desc) {
  const std::string name = std::string("SplitKReduce_") + (desc.out == DType::kFP32 ? "fp32" : "bf16") +
                           (desc.has_c ? "_c" : "") +
                           (desc.has_bias ? (desc.bias_type == DType::kFP32 ? "_bias32" : "_bias16") : "");
  return jit::KernelSource("tilecast::split_k_reduce_kernel", name)
      .include("tilecast/device/kernels/split_k_reduce.cuh")
      .field("tilecast::DType", "kOutput", dtype_expression(desc.out))
      .field("kHasC", desc.has_c)
      .field("kHasBias", desc.has_bias)
      .field("tilecast::DType", "kBiasType", dtype_expression(desc.bias_type))
      .spec();
}

uint32_t split_k_reduce_ctas(const SplitKReduceParams& p, uint32_t num_sms) {
  const uint64_t items = uint64_t{p.batches} * p.m * ceil_div(p.n, kReduceVector);
  const uint64_t ctas = (items + kReduceThreads - 1) / kReduceThreads;
  return static_cast<uint32_t>(std::clamp<uint64_t>(ctas, 1, uint64_t{num_sms} * kReduceCtasPerSm));
}

}  // namespace tilecast::api
