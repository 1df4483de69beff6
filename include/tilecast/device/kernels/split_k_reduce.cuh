// The split-K reduce: D = alpha * sum over slices of the FP32 partial results + beta * C + bias,
// the GEMM epilogue's meaning (epilogue.cuh), converted to D's dtype.
//
// The workspace holds [k_splits][batches][m][ld] FP32 partial sums (the split-K GEMM's D). Each
// thread owns four adjacent columns of one row: it reads them with one 16-byte load per slice
// (ld is a multiple of 4 and the workspace 256-byte aligned, so every such load is aligned) and
// sums the slices in slice order, always, so that the same input gives the same bits run after
// run (and the fused reduce's bits: epilogue_fused_split.cuh); no atomics. The loads of up to
// kReduceLoadsInFlight slices are issued before any of them is summed. A row's last columns past a
// multiple of 4 go element by element.
#pragma once

#include <cuda_bf16.h>

#include "tilecast/device/dtype.cuh"
#include "tilecast/device/kernels/epilogue_value.cuh"
#include "tilecast/device/kernels/split_k_reduce_params.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

// Slices whose loads a thread has in flight at once before it sums them (in slice order): with one
// at a time each thread waited out a round trip per slice, and the reduce of 255x576x7168's 12
// slices ran 7% slower end to end (8 slices of 129x2052x7168 5%; A/B on the H200,
// bench/results/2026-12-02-h200-tall-tiles.md).
inline constexpr uint32_t kReduceLoadsInFlight = 8;

template <class Traits>
__global__ void __launch_bounds__(kReduceThreads) split_k_reduce_kernel(const __grid_constant__ SplitKReduceParams p) {
  using Out = pick_type<Traits::kOutput == DType::kFP32, float, __nv_bfloat16>;
  using Bias = pick_type<Traits::kBiasType == DType::kFP32, float, __nv_bfloat16>;
  // Launched with programmatic stream serialization behind the GEMM (which says so at its start):
  // resident early on the SMs the GEMM leaves idle, it starts reading once the GEMM has finished.
  ptx::griddepcontrol_wait();
  const uint32_t groups_per_row = ceil_div(p.n, kReduceVector);
  const uint64_t items = uint64_t{p.batches} * p.m * groups_per_row;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < items; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t col = static_cast<uint32_t>(i % groups_per_row) * kReduceVector;
    const uint64_t row_index = i / groups_per_row;  // batch * m + row
    const uint32_t row = static_cast<uint32_t>(row_index % p.m);
    const uint32_t batch = static_cast<uint32_t>(row_index / p.m);
    const float* src = p.workspace + batch * p.ws_batch + row * p.ws_ld + col;
    float4 sum = *reinterpret_cast<const float4*>(src);
    for (uint32_t first = 1; first < p.k_splits; first += kReduceLoadsInFlight) {
      float4 v[kReduceLoadsInFlight];
#pragma unroll
      for (uint32_t j = 0; j < kReduceLoadsInFlight; ++j)
        if (first + j < p.k_splits) v[j] = *reinterpret_cast<const float4*>(src + (first + j) * p.ws_slice);
#pragma unroll
      for (uint32_t j = 0; j < kReduceLoadsInFlight; ++j) {
        if (first + j >= p.k_splits) break;
        sum.x += v[j].x;
        sum.y += v[j].y;
        sum.z += v[j].z;
        sum.w += v[j].w;
      }
    }
    const float acc[kReduceVector] = {sum.x, sum.y, sum.z, sum.w};
    Out* d = static_cast<Out*>(p.d) + batch * p.d_batch + row * p.ldd + col;
    const Out* c = static_cast<const Out*>(p.c) + batch * p.c_batch + row * p.ldc + col;
    const Bias* bias = static_cast<const Bias*>(p.bias) + col;
    const uint32_t cols = p.n - col < kReduceVector ? p.n - col : kReduceVector;
#pragma unroll
    for (uint32_t e = 0; e < kReduceVector; ++e) {
      if (e >= cols) break;
      const float c_e = Traits::kHasC ? static_cast<float>(c[e]) : 0.0f;
      const float bias_e = Traits::kHasBias ? static_cast<float>(bias[e]) : 0.0f;
      d[e] = static_cast<Out>(epilogue_value<Traits::kHasC, Traits::kHasBias>(acc[e], p.alpha, p.beta, c_e, bias_e));
    }
  }
}

}  // namespace tilecast
