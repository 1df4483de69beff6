// Where a tile's operands and output sit in the TMA tensors. All three tensors are 3-D
// (inner dimension first): A {K, rows, groups} (MN-major: {rows, K, groups}), B {K, N, groups}
// (MN-major: {N, K, groups}), D {N, rows, groups}, with one group for the forms that have none.
// With split-K, D is the FP32 workspace and its groups are the partial results (slice-major:
// slice * groups + group), which TileWork::d_group names.
#pragma once

#include "tilecast/device/kernels/gemm_sm90/operand_tile.cuh"
#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast {

// Which operands have one matrix per group.
TC_HOST_DEVICE constexpr bool a_per_group(GemmType t) {
  return t == GemmType::kBatched || t == GemmType::kMGroupedMasked;
}
TC_HOST_DEVICE constexpr bool b_per_group(GemmType t) {
  return t == GemmType::kBatched || t == GemmType::kMGroupedMasked || t == GemmType::kMGroupedContiguous;
}
TC_HOST_DEVICE constexpr bool d_per_group(GemmType t) {
  return t == GemmType::kBatched || t == GemmType::kMGroupedMasked || t == GemmType::kKGroupedContiguous;
}

// The group a tile-ring slot carries (TileInfo::group), from which the consumers and the epilogue
// loader rebuild both TileWork::group and d_group: they are the same value except with split-K,
// whose consumers need only D's (the workspace's) group, and for m-grouped contiguous tiles, whose
// D has no group and whose epilogue needs the expert.
TC_HOST_DEVICE constexpr uint32_t slot_group(GemmType t, const TileWork& w) {
  return t == GemmType::kMGroupedContiguous ? w.group : w.d_group;
}

template <GemmType kType>
struct TileCoords {
  // TMA coordinates of k-step kk's A and B boxes and of a D box at (row, col) of the tile. A
  // K-major operand is one box per tile, at (k, row). An MN-major one ([k, m] or [k, n] stored) is
  // one box per 64 rows of the tile (operand_tile.cuh): box j at (row + 64 j, k).
  static TC_HOST_DEVICE void a(const TileWork& w, uint32_t kk, uint32_t block_k, bool mn_major, uint32_t box,
                               int32_t (&c)[3]) {
    operand(w.row, w.k_begin + kk * block_k, mn_major, box, c);
    c[2] = a_per_group(kType) ? static_cast<int32_t>(w.group) : 0;
  }
  static TC_HOST_DEVICE void b(const TileWork& w, uint32_t kk, uint32_t block_k, bool mn_major, uint32_t box,
                               int32_t (&c)[3]) {
    operand(w.col, w.k_begin + kk * block_k, mn_major, box, c);
    c[2] = b_per_group(kType) ? static_cast<int32_t>(w.group) : 0;
  }
  static TC_HOST_DEVICE void d(const TileWork& w, uint32_t row_offset, uint32_t col_offset, int32_t (&c)[3]) {
    c[0] = static_cast<int32_t>(w.col + col_offset);
    c[1] = static_cast<int32_t>(w.row + row_offset);
    c[2] = d_per_group(kType) || kType == GemmType::kNormal ? static_cast<int32_t>(w.d_group) : 0;
  }

 private:
  static TC_HOST_DEVICE void operand(uint32_t row, uint32_t k, bool mn_major, uint32_t box, int32_t (&c)[3]) {
    c[0] = static_cast<int32_t>(mn_major ? row + box * kSwizzleSpanElems : k);
    c[1] = static_cast<int32_t>(mn_major ? k : row);
  }
};

}  // namespace tilecast
