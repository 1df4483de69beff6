// Where a consumer thread's FP32 accumulators sit in its warpgroup's m64 wgmma atom, stated once
// for every epilogue (epilogue.cuh, epilogue_fused_split.cuh, swapped_layout.cuh): for 8-column
// group j, accumulator index 4j + 2 half + e (half, e in 0..1) of thread t is row
// acc_atom_row(t, half) of the atom, column 8j + acc_first_col(t) + e (ptx/wgmma_bf16.cuh).
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// Row of accumulator half `half` (0: rows 0-7, 1: rows 8-15 of the warp's 16) within the atom, for
// thread `thread` (0..127) of the warpgroup.
TC_HOST_DEVICE constexpr uint32_t acc_atom_row(uint32_t thread, uint32_t half) {
  return (thread / 32) * 16 + (thread % 32) / 4 + 8 * half;
}

// Column of the thread's first accumulator of each 8-column group: its pair is this one and the next.
TC_HOST_DEVICE constexpr uint32_t acc_first_col(uint32_t thread) { return (thread % 32 % 4) * 2; }

}  // namespace tilecast
