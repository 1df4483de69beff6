// The GEMM API: D = A * B^T (+ C) on device pointers, stream-ordered, CUDA-graph capturable.
//
// NT layout (the calls without a GemmLayout): A is [m, k] and B is [n, k], both row-major with K
// contiguous (BF16); D and the optional C are [m, n] row-major, BF16 or FP32 (C has D's dtype).
// The epilogue computes D = alpha * A * B^T + beta * C + bias in FP32, in cuBLAS's meaning of
// alpha and beta. A batch (MatrixView::batch > 1) runs batch independent products of equal sizes.
// Bad input throws tilecast::Error before anything is launched (README.md, "Bad input", lists
// every rule). m = 0, n = 0 or batch = 0 is valid and launches nothing, as in cuBLAS; k = 0 writes
// D = beta * C + bias, as cuBLAS does, and never reads A or B.
//
// Other layouts (GemmLayout, device/gemm_layout.cuh; DeepGEMM's bf16_gemm_nt/nn/tn/tt letters):
// D = op_a(A) * op_b(B), the first letter op_a, the second op_b, N = as stored, T = transposed.
// The views describe the stored matrices, row-major:
//   gemm_nt: A [m, k], B [n, k]     D = A * B^T
//   gemm_nn: A [m, k], B [k, n]     D = A * B
//   gemm_tn: A [k, m], B [k, n]     D = A^T * B
//   gemm_tt: A [k, m], B [n, k]     D = A^T * B^T
// D, C and the bias are the same in every layout. The grouped GEMMs (grouped.hpp) are NT only.
//
// The first call of a problem plans it, compiles its kernels through NVRTC (or loads them from the
// disk cache) and loads them; later calls of the same problem only launch. A call with the same
// views and config as one of the calling thread's recent calls skips even the argument checks:
// its descriptors and parameters are reused as they are.
//
// CUDA graphs: a call captured into a graph records its kernel launches only, if its problem was
// prepared before the capture (prepare(), or any earlier call); otherwise it throws, since
// compiling and loading cannot be captured.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tilecast/types.hpp"

namespace tilecast {

// Most split-K slices a GEMM may be cut into.
inline constexpr uint32_t kMaxKSplits = 32;

// Overrides for tests and benchmarks. Zero (or -1) fields are left to the heuristic.
struct GemmConfig {
  // Tile rows 64, 128 or 192 (192: dense and batched, at most 192 wide; auto weighs it only where
  // 128 < m <= 192), columns one of the wgmma widths, block_k 64.
  uint32_t block_m = 0, block_n = 0, block_k = 0;
  uint32_t stages = 0;
  uint32_t cluster_m = 0, cluster_n = 0;  // CTAs along M x along N: 1x1, 2x1, 1x2, 4x1, 1x4, 2x2
  int multicast_a = -1;                   // 0 off, 1 on where the plan allows
  int multicast_b = -1;
  // Unit-rows per L2 band (0: the planner's: 8, or where the operands overflow L2 the band that
  // reads least from HBM).
  uint32_t swizzle = 0;
  uint32_t max_sms = 0;                   // leave the other SMs to other work (0: use all)
  // With clusters of 4, 12 of an H200's 132 SMs cannot hold a cluster. A companion launch of
  // smaller clusters behind the main one on the same stream takes them, sharing the work through
  // an atomic counter.
  int companion = -1;                     // 0 off, 1 on
  // Split-K (dense and batched GEMMs): K cut into this many slices, summed in a fixed order by a
  // reduce kernel (bit-identical run to run). 0: the planner's choice, 1: off, 2..kMaxKSplits.
  uint32_t k_splits = 0;
  // Swapped operands for small M (m <= 64, NT, dense and batched): the kernel computes D^T = B * A^T
  // so that N runs along the 128-row tiles and M along a tile 8..64 wide. -1: the planner's choice
  // (swapped where m <= 16 and n >= 2048, where it measured faster on the H200: kAutoSwapMaxM in
  // gemm_plan.cpp), 0 off, 1 on (for another M, layout or GEMM type an error).
  int swap_ab = -1;
  // Where split-K's slices are summed: 0 by the reduce kernel launched behind the GEMM, 1 inside
  // the GEMM (the last slice of each tile to finish sums the slices and applies the epilogue: one
  // launch, the same bits; tiles up to 144 wide, unswapped only). -1, the planner's choice, is 0:
  // on the H200 the fused reduce ran 5-26% slower on every split row but one, which it tied.
  int fused_reduce = -1;
  // Split-K summed across a thread-block cluster: the k_splits CTAs of one cluster compute one
  // tile's k_splits slices and sum them through distributed shared memory, each CTA a band of the
  // tile (one launch, no workspace, the same bits as the reduce kernel). 1: on, with k_splits 2, 4
  // or 8 (0: the planner picks among those), cluster 1x1, unswapped, not with fused_reduce=1.
  // -1 (the planner's choice) and 0: off.
  int cluster_reduce = -1;
  // Consumer warpgroups split the tile's columns, not its rows (GemmKernelSpec::split_columns):
  // tiles of 128, 192 or 256 rows whose half-width is a wgmma width and whose warpgroup holds at
  // most 144 accumulators (192x192, 256x128, 128x256, ...), dense and batched, unsplit and
  // unswapped. 1: on (block_m, if given, 128, 192 or 256); 0: off; -1: the planner's choice,
  // which weighs 192-row ones in clusters of 1 and 2 where rows start off an L2 line.
  int split_columns = -1;
  // The two consumer warpgroups take whole tiles in turn, each one's epilogue under the other's
  // main loop (GemmKernelSpec::pingpong): tiles of 64 or 128 rows of at most 128 accumulators a
  // thread (128x128, 64x256, ...), dense, batched and k-grouped, unsplit and unswapped, with or
  // without C and a bias, no companion. 1: on; 0: off; -1: the planner's choice, which runs
  // 128x128 in turns where its dense or batched pick would be a cooperative 128x256 tile of few
  // k-steps, or with FP32 C a 128x192 or 128x256 one at any K (gemm_plan.cpp: PingpongReach).
  int pingpong = -1;
  // Serpentine K (GemmKernelSpec::k_serpentine): in a static launch the units of every other wave
  // walk their K backwards, starting on the K columns the wave before ended on, which L2 still
  // holds: where a wave's operands over all of K overflow L2 this reads fewer bytes from HBM (the
  // H200: 8192^3 1.09 GB against 1.23, 4096x2112x7168 0.14 against 0.18), and the planner takes its
  // band for it. Measured, it ran no faster on any row of the bench's suites (0.993-1.054x the
  // forward pick's time) nor at the power cap on 8192^3
  // (bench/results/2026-12-05-h200-serpentine-l2-share.md), so the planner never takes it. Sums in
  // another order: a reversed tile's bits differ from a forward one's, the same run to run. Not
  // with a companion launch, fused_reduce=1 or k-grouped GEMMs. 1: on; 0 and -1 (the planner's
  // choice): off.
  int k_serpentine = -1;

  bool operator==(const GemmConfig&) const = default;
};

// What the epilogue reads and applies.
struct GemmEpilogue {
  const MatrixView* c = nullptr;  // C: D's dtype and shape, any strides; may be D itself (in place)
  float alpha = 1.0f;             // scales A * B^T
  float beta = 1.0f;              // scales C; 0 never reads C (it may then hold NaN). Without C it stays 1
  VectorView bias;                // bias[n], bf16 or fp32, added to every row (and batch); none when data is null
};

void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
          const GemmEpilogue& epilogue, const GemmConfig& config = {});

// D = A * B^T (+ C): the epilogue with alpha = beta = 1 and no bias.
void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
          const MatrixView* c = nullptr, const GemmConfig& config = {});

// Checks the arguments, plans, compiles and loads everything gemm() with these arguments needs on
// the current device, and makes the device's state, launching nothing. After it, the same call
// may be captured into a CUDA graph.
void prepare(const MatrixView& a, const MatrixView& b, const MatrixView& d, const GemmEpilogue& epilogue,
             const GemmConfig& config = {});
void prepare(const MatrixView& a, const MatrixView& b, const MatrixView& d, const MatrixView* c = nullptr,
             const GemmConfig& config = {});

// The same in any layout. (gemm(a, b, d, ...) above is gemm(GemmLayout::kNT, a, b, d, ...).)
// With B stored [k, n] (NN, TN) the tile width is a multiple of 64: a block_n override of 96, 144
// or 176 is refused.
void gemm(GemmLayout layout, const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
          const GemmEpilogue& epilogue = {}, const GemmConfig& config = {});
void prepare(GemmLayout layout, const MatrixView& a, const MatrixView& b, const MatrixView& d,
             const GemmEpilogue& epilogue = {}, const GemmConfig& config = {});

inline void gemm_nt(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                    const GemmEpilogue& epilogue = {}, const GemmConfig& config = {}) {
  gemm(GemmLayout::kNT, a, b, d, stream, epilogue, config);
}
inline void gemm_nn(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                    const GemmEpilogue& epilogue = {}, const GemmConfig& config = {}) {
  gemm(GemmLayout::kNN, a, b, d, stream, epilogue, config);
}
inline void gemm_tn(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                    const GemmEpilogue& epilogue = {}, const GemmConfig& config = {}) {
  gemm(GemmLayout::kTN, a, b, d, stream, epilogue, config);
}
inline void gemm_tt(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                    const GemmEpilogue& epilogue = {}, const GemmConfig& config = {}) {
  gemm(GemmLayout::kTT, a, b, d, stream, epilogue, config);
}

// "block=128x256x64,stages=4,cluster=2x1,multicast_a=0,swizzle=8,max_sms=66,companion=1,k_splits=4,swap_ab=1,
// fused_reduce=1,cluster_reduce=1,split_columns=1,pingpong=1,k_serpentine=1" (any
// subset, keys as GemmConfig's fields) -> GemmConfig; throws tilecast::Error naming a bad key or
// value. format_config is its inverse ("" for the defaults).
GemmConfig parse_config(const std::string& text);
std::string format_config(const GemmConfig& config);

}  // namespace tilecast
