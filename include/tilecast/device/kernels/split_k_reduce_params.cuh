// The split-K reduce kernel's launch parameters (split_k_reduce.cuh), shared with the host.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// Columns one thread reduces: one 16-byte FP32 load per slice.
inline constexpr uint32_t kReduceVector = 4;
inline constexpr uint32_t kReduceThreads = 256;

struct SplitKReduceParams {
  const float* workspace = nullptr;
  uint32_t k_splits = 1, batches = 1, m = 0, n = 0;
  uint64_t ws_ld = 0, ws_batch = 0, ws_slice = 0;  // elements between rows, batches and slices
  void* d = nullptr;
  uint64_t ldd = 0, d_batch = 0;
  const void* c = nullptr;  // D's dtype; read only by kernels with C
  uint64_t ldc = 0, c_batch = 0;
  const void* bias = nullptr;  // n elements of the bias dtype; read only by kernels with a bias
  float alpha = 1.0f, beta = 1.0f;
};

}  // namespace tilecast
