// Small pieces shared by the support library's kernels (private to tests/common/src).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "tilecast/types.hpp"

namespace tilecast::test::detail {

// Where element (b, r, c) of a view sits, and how to walk all of them with one flat index.
struct Walk {
  int64_t rows, cols, ld, batch_step;
  __host__ __device__ int64_t offset_of_flat(int64_t i) const {  // i in [0, batch*rows*cols)
    const int64_t per_batch = rows * cols;
    const int64_t b = i / per_batch;
    const int64_t rc = i - b * per_batch;
    const int64_t r = rc / cols;
    return b * batch_step + r * ld + (rc - r * cols);
  }
};

inline Walk walk_of(const MatrixView& v) { return Walk{v.rows, v.cols, v.ld(), v.batch_step()}; }

__device__ __forceinline__ float load_as_float(const void* base, bool is_bf16, int64_t off) {
  if (is_bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[off]);
  return static_cast<const float*>(base)[off];
}

__device__ __forceinline__ void store_from_float(void* base, bool is_bf16, int64_t off, float v) {
  if (is_bf16) static_cast<__nv_bfloat16*>(base)[off] = __float2bfloat16_rn(v);
  else static_cast<float*>(base)[off] = v;
}

// Blocks for a grid-stride loop over n items with 256 threads a block.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 8192 ? 8192 : blocks));
}

}  // namespace tilecast::test::detail
