// What a GEMM asks for, as the scheduler sees it: the gemm type, the sizes and the per-group data.
// Plain data, valid on the host and on the device (group_data points to memory the reader can see:
// device memory in a kernel, host memory in the CPU simulator).
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

enum class GemmType : uint32_t {
  kNormal = 0,              // D[m, n] = A[m, k] * B[n, k]^T
  kBatched = 1,             // num_groups independent problems of equal sizes
  kMGroupedContiguous = 2,  // MoE: experts' rows concatenated along M, one B per expert
  kMGroupedMasked = 3,      // MoE: a [num_groups, m, k] buffer, group_data[g] valid rows of expert g
  kKGroupedContiguous = 4,  // weight gradients: groups concatenated along K, one D per group
};

// How an m-grouped contiguous problem says which expert owns which rows.
enum class ContiguousLayout : uint32_t {
  // group_data[row] = expert of the row, or -1 for a padding row. Each expert's run of rows starts
  // on a multiple of kMGroupedRowAlignment, so a block of block_m <= that many rows never straddles
  // two experts; a block whose first row is padding is skipped.
  kRowIndex = 0,
  // group_data[g] .. group_data[g + 1] are the rows of expert g (num_groups + 1 entries, the first
  // one 0, non-decreasing): the "psum" layout. Any alignment; an expert may be empty.
  kOffsets = 1,
};

// Expert runs in the kRowIndex layout start on multiples of this many rows.
inline constexpr uint32_t kMGroupedRowAlignment = 128;
// K of every k-group is a multiple of this: a group starts at column k_base of A and B, and a TMA
// load's innermost coordinate must fall on 16 bytes (8 BF16), else the load is an illegal
// instruction (measured on the H200: a group of 130 columns brought the next one's load down).
inline constexpr uint32_t kKGroupAlignment = 8;

struct GemmProblem {
  GemmType type = GemmType::kNormal;
  ContiguousLayout contiguous_layout = ContiguousLayout::kRowIndex;
  // kNormal, kBatched: sizes of each problem. kMGroupedContiguous: m is the total rows.
  // kMGroupedMasked: m is the rows each expert's buffer holds. kKGroupedContiguous: m and n of
  // every group; k is the sum of the groups' K (their concatenation).
  uint32_t m = 0, n = 0, k = 0;
  uint32_t num_groups = 1;
  // Split-K (kNormal, kBatched only; 1 for every other type): K is cut into k_splits slices, each
  // one a k-group of the schedule with its own FP32 partial result (see split_k_slice).
  uint32_t k_splits = 1;
  uint32_t reserved_ = 0;  // explicit padding: the plan cache compares problems as bytes
  // kMGroupedContiguous: see ContiguousLayout. kMGroupedMasked: valid rows per expert.
  // kKGroupedContiguous: K of each group. Unused otherwise.
  const int32_t* group_data = nullptr;
};

// Which gemm types keep one tile grid per group (the others have one grid for the whole problem).
TC_HOST_DEVICE constexpr bool has_group_grids(const GemmProblem& p) {
  return p.type == GemmType::kBatched || p.type == GemmType::kMGroupedMasked ||
         p.type == GemmType::kKGroupedContiguous ||
         (p.type == GemmType::kMGroupedContiguous && p.contiguous_layout == ContiguousLayout::kOffsets);
}

// Where split-K slice `slice` of K columns lies: every slice but the last spans the same whole
// number of k-steps, the last ends at K (the TMA zero-fills its last box past the tensor's edge,
// so no column of it needs clearing), and with fewer k-steps than slices the trailing slices are
// empty (their partial result is zero).
struct KSlice {
  uint32_t begin = 0, size = 0;
};
TC_HOST_DEVICE constexpr uint32_t split_k_slice_cols(uint32_t k, uint32_t k_splits, uint32_t block_k) {
  return ceil_div(ceil_div(k, block_k), k_splits) * block_k;
}
TC_HOST_DEVICE constexpr KSlice split_k_slice(uint32_t k, uint32_t k_splits, uint32_t block_k, uint32_t slice) {
  const uint32_t cols = split_k_slice_cols(k, k_splits, block_k);
  const uint64_t begin = uint64_t{slice} * cols;
  if (begin >= k) return {k, 0};
  const uint32_t b = static_cast<uint32_t>(begin);
  return {b, k - b < cols ? k - b : cols};
}

}  // namespace tilecast
