// The epilogue of the swapped-operand kernel (GemmKernelSpec::swap_ab): the kernel computed
// D^T = B * A^T, so the tile's rows are columns of D (the problem's N) and its columns are rows of
// D (the problem's few M rows). Accumulator (tile row r, tile column c) is D[col + c][row + r].
//
// What it reads: C (D's dtype) at the same transposed place, and the bias by the accumulator's
// row (D's column), both straight from global memory: D is at most 64 rows, so the whole output
// is a few per cent of the operand bytes B streams, and the TMA's 2-D boxes could only store it
// through a transposing pass in shared memory. What it applies: alpha, beta and the bias, in FP32,
// in the order of every epilogue (epilogue_value.cuh). What it stores: BF16 or FP32, element
// by element, bounds checked on both sides; the 8 lanes that share a tile column write 8
// consecutive elements of one row of D.
//
// With split-K the kernel's D is the FP32 workspace in the unswapped layout ([slice][m][ws_ld]),
// written transposed here like D, so that the reduce kernel (split_k_reduce.cuh) is the one every
// split GEMM uses.
#pragma once

#include <cuda_bf16.h>

#include "tilecast/device/kernels/epilogue_value.cuh"
#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/kernels/gemm_sm90/swapped_layout.cuh"

namespace tilecast {

template <typename Cfg>
class SwappedEpilogue {
 public:
  static_assert(!Cfg::kSplitColumns, "column-split kernels store through Epilogue (spec.cuh)");
  using Out = pick_type<Cfg::kOutputFP32, float, __nv_bfloat16>;
  using Bias = pick_type<Cfg::kBiasFP32, float, __nv_bfloat16>;
  static constexpr uint32_t kGroups = Cfg::kBlockN / 8;  // 8-column accumulator groups

  // The signature of Epilogue's (consumer.cuh builds either): no shared memory, no descriptors.
  TC_DEVICE SwappedEpilogue(const GemmSm90Smem<Cfg>&, const TmaDescriptor&, const TmaDescriptor&,
                            const GemmParams& params, uint32_t warpgroup)
      : params_(params), warpgroup_(warpgroup), thread_(threadIdx.x % 128) {}

  TC_DEVICE void store(const TileWork& w, float (&acc)[Cfg::kAtomsM][Cfg::kBlockN / 2]) {
    const uint64_t group = w.d_group;  // the batch, or with split-K the workspace's slice
    Out* d = static_cast<Out*>(params_.d_ptr) + group * params_.d_batch;
    const Out* c = static_cast<const Out*>(params_.c_ptr) + group * params_.c_batch;
    const Bias* bias = static_cast<const Bias*>(params_.bias_ptr);
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
      for (uint32_t half = 0; half < 2; ++half) {
        const uint32_t tile_row = swapped_acc_position(Cfg::kWarpgroupM, warpgroup_, thread_, a, 0, half, 0).row;
        if (tile_row >= w.rows) continue;
        const uint32_t n = w.row + tile_row;  // D's column
        float add = 0.0f;
        if constexpr (Cfg::kHasBias) add = static_cast<float>(bias[n]);
#pragma unroll
        for (uint32_t j = 0; j < kGroups; ++j)
#pragma unroll
          for (uint32_t e = 0; e < 2; ++e) {
            const SwappedAccPosition pos = swapped_acc_position(Cfg::kWarpgroupM, warpgroup_, thread_, a, j, half, e);
            const uint32_t tile_col = pos.col;
            if (tile_col >= w.cols) continue;
            const uint64_t at = uint64_t{w.col + tile_col} * params_.ldd + n;  // D[m][n]
            float c_e = 0.0f;
            if constexpr (Cfg::kHasC) c_e = static_cast<float>(c[uint64_t{w.col + tile_col} * params_.ldc + n]);
            const float v =
                epilogue_value<Cfg::kHasC, Cfg::kHasBias>(acc[a][pos.index], params_.alpha, params_.beta, c_e, add);
            if constexpr (Cfg::kOutputFP32) {
              d[at] = v;
            } else {
              d[at] = __float2bfloat16_rn(v);
            }
          }
      }
  }

  // Nothing is in flight: every store was an ordinary global store.
  TC_DEVICE void drain() {}

 private:
  const GemmParams& params_;
  uint32_t warpgroup_;
  uint32_t thread_;
};

}  // namespace tilecast
