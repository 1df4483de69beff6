// Split-K on the host: the reduce kernel's source, and its launch behind the split GEMM.
#pragma once

#include "jit/kernel_source.hpp"
#include "tilecast/device/kernels/split_k_reduce_params.cuh"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {

// The reduce kernel for a plan's epilogue (D's dtype, C, the bias and its dtype).
jit::KernelSpec split_k_reduce_source(const plan::GemmDesc& desc);

// CTAs of a reduce launch: enough to cover the items once, at most this many per SM (it is a
// grid-stride loop, and a few CTAs per SM keep enough loads in flight to stream at HBM rate).
inline constexpr uint32_t kReduceCtasPerSm = 8;
uint32_t split_k_reduce_ctas(const SplitKReduceParams& p, uint32_t num_sms);

}  // namespace tilecast::api
