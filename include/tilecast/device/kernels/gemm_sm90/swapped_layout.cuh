// Where a consumer thread's accumulators sit in the swapped kernel's tile, and so in D: the
// mapping epilogue_swapped.cuh stores by, stated once so that a CPU test can check that the
// threads of a tile cover each of its elements exactly once (tests/cpu/api/test_swap_ab.cpp).
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// Accumulator acc[atom][index] of thread `thread` (0..127) of consumer warpgroup `warpgroup`:
// tile row `row` (the problem's N side, D's column) and tile column `col` (its M side, D's row).
struct SwappedAccPosition {
  uint32_t row, col, index;
};

// wgmma's accumulator layout (ptx/wgmma_bf16.cuh): for 8-column group j, index 4j + 2 half + e
// is row lane / 4 + 16 warp + 8 half of the atom, column 8j + 2 (lane % 4) + e.
TC_HOST_DEVICE constexpr SwappedAccPosition swapped_acc_position(uint32_t warpgroup_m, uint32_t warpgroup,
                                                                 uint32_t thread, uint32_t atom, uint32_t j,
                                                                 uint32_t half, uint32_t e) {
  const uint32_t lane = thread % 32;
  return {warpgroup * warpgroup_m + atom * 64 + (thread / 32) * 16 + lane / 4 + 8 * half, j * 8 + (lane % 4) * 2 + e,
          4 * j + 2 * half + e};
}

}  // namespace tilecast
