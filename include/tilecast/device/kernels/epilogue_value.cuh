// One element of D from its summed accumulator, in the order every tilecast epilogue applies it:
// alpha first, then beta * C, then the bias. Every epilogue calls this (the slab, swapped and fused
// split-K ones, and the split-K reduce kernel), so that the same sum gives the same bits through
// any of them.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
template <bool kHasC, bool kHasBias>
TC_DEVICE TC_FORCEINLINE float epilogue_value(float sum, float alpha, float beta, float c, float bias) {
  float v = alpha * sum;
  if constexpr (kHasC) v = fmaf(beta, c, v);
  if constexpr (kHasBias) v += bias;
  return v;
}
#endif

}  // namespace tilecast
