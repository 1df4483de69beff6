// Where a consumer thread's accumulators sit in the swapped kernel's tile, and so in D: the
// mapping epilogue_swapped.cuh stores by, stated once so that a CPU test can check that the
// threads of a tile cover each of its elements exactly once (tests/cpu/api/test_swap_ab.cpp).
#pragma once

#include "tilecast/device/kernels/gemm_sm90/accumulator_layout.cuh"

namespace tilecast {

// Accumulator acc[atom][index] of thread `thread` (0..127) of consumer warpgroup `warpgroup`:
// tile row `row` (the problem's N side, D's column) and tile column `col` (its M side, D's row).
struct SwappedAccPosition {
  uint32_t row, col, index;
};

// The unswapped position of the accumulator (accumulator_layout.cuh), read as the swapped tile's.
TC_HOST_DEVICE constexpr SwappedAccPosition swapped_acc_position(uint32_t warpgroup_m, uint32_t warpgroup,
                                                                 uint32_t thread, uint32_t atom, uint32_t j,
                                                                 uint32_t half, uint32_t e) {
  return {warpgroup * warpgroup_m + atom * 64 + acc_atom_row(thread, half), j * 8 + acc_first_col(thread) + e,
          4 * j + 2 * half + e};
}

}  // namespace tilecast
