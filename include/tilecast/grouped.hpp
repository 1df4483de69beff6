// Grouped GEMMs for mixture-of-experts layers: D = A * B^T per expert or per k-group, on device
// pointers, stream-ordered, CUDA-graph capturable. The names follow DeepGEMM's.
//
// Group sizes (expert offsets, row indices, masked row counts, k-group sizes) stay in device
// memory: no call reads them on the host, so none synchronises, and a call captured into a CUDA
// graph can be replayed with new sizes written into the same array. The kernel checks them
// instead: sizes the problem cannot mean (a count above max_m, offsets out of order, K sizes past
// the total) make the kernel trap, the launch fail, and tilecast::take_layout_fault_report()
// (diagnostics.hpp) say which entry was wrong; they never yield a result. Every other argument is
// checked on the host before anything is launched, and a bad one throws tilecast::Error naming the
// argument and the rule.
//
// Operands are BF16 with K contiguous, as for tilecast::gemm (gemm.hpp); D is BF16 or FP32, row
// major, with rows and batches at any 16-byte multiple of stride. Planning uses sizes and hints
// only (docs/gemm.md, "Grouped GEMMs"); GemmConfig overrides it as for tilecast::gemm.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tilecast/device/scheduler/problem.cuh"
#include "tilecast/gemm.hpp"

namespace tilecast {

// Which rows of an m-grouped contiguous A (and D) each expert owns.
struct GroupedLayout {
  // kOffsets: data[g] .. data[g + 1] are expert g's rows: num_groups + 1 int32 entries,
  //   0 = data[0] <= data[1] <= ... <= data[num_groups] <= rows of A. Any expert may be empty and
  //   no row needs padding; rows from data[num_groups] on are left alone.
  // kRowIndex: data[r] is the expert of row r, or -1 for a padding row (one entry per row of A),
  //   DeepGEMM's m_indices: each expert's run of rows starts on a multiple of 128
  //   (kMGroupedRowAlignment), padding rows fill a run up to the next multiple. Padding rows of D
  //   are left alone.
  ContiguousLayout kind = ContiguousLayout::kOffsets;
  const int32_t* data = nullptr;  // device memory of the current device, 4-byte aligned

  bool operator==(const GroupedLayout&) const = default;
};

// m-grouped contiguous (prefill, training forward): every expert's tokens in one tall A.
//   A [rows, k] (batch 1), B [num_groups, n, k] (B.batch = num_groups experts), D [rows, n].
//   D rows of expert g = A rows of expert g * B[g]^T.
void gemm_mgrouped_contiguous(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GroupedLayout& layout, cudaStream_t stream, const GemmConfig& config = {});

// m-grouped masked (decode, under CUDA graphs): one fixed-size buffer per expert.
//   A [num_groups, max_m, k], B [num_groups, n, k], D [num_groups, max_m, n] (batch = num_groups,
//   rows = max_m). masked_m: num_groups int32 in device memory, 0 <= masked_m[g] <= max_m; rows
//   [0, masked_m[g]) of D[g] are computed, the rest are never written. expected_m
//   (1 <= expected_m <= max_m): the rows per expert the caller expects, which the plan is made for
//   (a replay with other counts runs the same plan). An empty expert costs a scan of its count.
void gemm_mgrouped_masked(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* masked_m,
                          int64_t expected_m, cudaStream_t stream, const GemmConfig& config = {});

// k-grouped contiguous (MoE weight gradients): groups side by side along K.
//   A [m, k], B [n, k] (batch 1 each, k = the sum of the groups' K), D [num_groups, m, n]
//   (D.batch = num_groups). k_sizes: num_groups int32 in device memory, each >= 0 and a multiple
//   of 8 (a group starts on a 16-byte column, as TMA loads need; 0 allowed: D[g] = 0, or D[g]
//   unchanged when accumulating), their sum at most k; group g takes the k_sizes[g] columns after
//   the groups before it. No multiple of 64 needed: a group's last partial k-step is computed
//   exactly (docs/gemm.md). D[g] = A_g * B_g^T, or with `accumulate` D[g] += A_g * B_g^T.
void gemm_kgrouped(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* k_sizes,
                   bool accumulate, cudaStream_t stream, const GemmConfig& config = {});

// As tilecast::prepare for tilecast::gemm: checks the arguments, plans, compiles and loads what the
// call with these arguments needs, launching nothing. After it the call may be captured into a
// CUDA graph (and the graph replayed with new sizes in the same device array).
void prepare_mgrouped_contiguous(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                                 const GroupedLayout& layout, const GemmConfig& config = {});
void prepare_mgrouped_masked(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* masked_m,
                             int64_t expected_m, const GemmConfig& config = {});
void prepare_kgrouped(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* k_sizes,
                      bool accumulate, const GemmConfig& config = {});

}  // namespace tilecast
