// The reference GEMM: cuBLASLt with FP32 accumulation, for tilecast's layout
//   D[m, n] = A[m, k] * B[n, k]^T (+ C[m, n])
// A and B row-major with K contiguous (ld >= k), D and C row-major (ld >= n), bf16 or fp32, batched
// with strides (MatrixView), alpha = 1, beta = 1 with C and 0 without.
//
// Row-major onto cuBLASLt's column-major: a row-major [r, c] matrix with leading dimension ld is
// the column-major [c, r] matrix with the same ld. So cuBLASLt computes D^T = B * A^T:
//   cuBLAS A := our B, stored k x n (ld_b), op T  -> n x k
//   cuBLAS B := our A, stored k x m (ld_a), op N  -> k x m
//   cuBLAS C, D := our C, D, stored n x m (ld_c, ld_d)
// i.e. the "TN" problem with cuBLAS sizes (M, N, K) = (n, m, k).
//
// The other layouts (GemmLayout: D = op_a(A) * op_b(B), the views the stored matrices) flip the
// op of the operand stored MN-major: a B stored [k, n] is column-major [n, k] as it is (cuBLAS op
// N), an A stored [k, m] is column-major [m, k] and needs op T.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "tilecast/types.hpp"

namespace tilecast::test {

// A cuBLASLt handle and its workspace (32 MiB, what cuBLAS recommends for Hopper).
class CublasLt {
 public:
  explicit CublasLt(size_t workspace_bytes = size_t{32} << 20);
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

  void* handle() const { return handle_; }  // a cublasLtHandle_t
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  static std::string version();  // "cuBLASLt 130000" and the like

 private:
  void* handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// cuBLASLt's epilogue in tilecast's terms: D = alpha * A * B^T + beta * C + bias, bias[n] one per
// column of D (cuBLASLt's CUBLASLT_EPILOGUE_BIAS: a vector along the rows of its column-major D).
// beta applies with C only.
struct LtEpilogue {
  float alpha = 1.0f;
  float beta = 1.0f;
  VectorView bias;  // none when data is null
};

// One planned matmul: descriptors and the heuristic's first algorithm for these layouts. Planning
// costs tens of microseconds; run() costs one launch. Runs one at a time per CublasLt (shared
// workspace): use one CublasLt per stream.
class LtMatmul {
 public:
  // Throws std::invalid_argument on inconsistent views, CudaError when cuBLASLt has no algorithm.
  // algo_rank picks the heuristic's answer of that rank (0: its first, what torch runs), for a
  // baseline that times several (tilecast-bench's odd-size variants); CudaError when it has fewer.
  LtMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
           const MatrixView* c = nullptr, const LtEpilogue& epilogue = {}, GemmLayout layout = GemmLayout::kNT,
           int algo_rank = 0);
  ~LtMatmul();
  LtMatmul(LtMatmul&&) noexcept;
  LtMatmul& operator=(LtMatmul&&) noexcept;

  void run(cudaStream_t stream) const;  // on the views given to the constructor
  // The same layouts at other addresses (rotating buffers). c is ignored when planned without C.
  void run(cudaStream_t stream, const void* a, const void* b, void* d, const void* c = nullptr) const;
  std::string algo_summary() const;  // algo, tile, stages, split-K and cluster ids

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Plans and runs once (asynchronous on `stream`).
void reference_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                    cudaStream_t stream, const MatrixView* c = nullptr, const LtEpilogue& epilogue = {},
                    GemmLayout layout = GemmLayout::kNT);

// Grouped problems as a loop over experts: for each span, D rows [row_begin, row_end) =
// A rows [row_begin, row_end) * B[group]^T (+ C rows). A, D (and C) are tall matrices (a batch of
// matrices without gaps is flattened: masked layouts); B is a batch with one matrix per group.
struct GroupSpan {
  int64_t row_begin = 0, row_end = 0;
  int64_t group = 0;
};

// Expert g owns rows [offsets[g], offsets[g + 1]) (num_groups + 1 entries).
std::vector<GroupSpan> spans_from_offsets(std::span<const int64_t> offsets);
// Masked: expert g owns rows [g * max_m, g * max_m + valid_rows[g]).
std::vector<GroupSpan> spans_from_masked(std::span<const int64_t> valid_rows, int64_t max_m);
// Row-index layout: row r belongs to expert expert_of_row[r], -1 for padding rows; each maximal
// run of equal non-negative ids becomes one span.
std::vector<GroupSpan> spans_from_row_index(std::span<const int32_t> expert_of_row);

// One LtMatmul per non-empty span, run back to back on one stream.
class LtGroupedMatmul {
 public:
  LtGroupedMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                  std::span<const GroupSpan> spans, const MatrixView* c = nullptr);
  void run(cudaStream_t stream) const;
  size_t launches() const { return matmuls_.size(); }

 private:
  std::vector<LtMatmul> matmuls_;
};

void reference_grouped_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b,
                            const MatrixView& d, std::span<const GroupSpan> spans,
                            cudaStream_t stream, const MatrixView* c = nullptr);

// K-grouped problems as a loop over groups: group g owns the k_sizes[g] columns of A and B after
// the groups before it, and D[g] (batch g of d) = A_g * B_g^T, or with `accumulate` D[g] += it.
// A group of K = 0 gets D[g] = 0 (or keeps D[g]). One LtMatmul per group with K > 0; the sizes are
// the host's copy of the ones the kernel under test reads from the device. A group whose columns
// start where cuBLASLt has no algorithm for their alignment (a 2-byte aligned start) is computed by
// naive_gemm instead, and counted in naive_groups().
class LtKGroupedMatmul {
 public:
  LtKGroupedMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                   std::span<const int64_t> k_sizes, bool accumulate);
  void run(cudaStream_t stream) const;
  size_t launches() const { return matmuls_.size() + naive_.size(); }
  size_t naive_groups() const { return naive_.size(); }

 private:
  struct NaiveGroup {
    MatrixView a, b, d;
    bool accumulate;
  };
  std::vector<LtMatmul> matmuls_;
  std::vector<NaiveGroup> naive_;
  std::vector<MatrixView> zeroed_;  // the groups of K = 0 without accumulate
};

void reference_kgrouped_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                             std::span<const int64_t> k_sizes, bool accumulate, cudaStream_t stream);

// Checks the views of D = A * B^T (+ C) against each other (sizes, batch, dtypes, ld >= cols);
// throws std::invalid_argument with the reason. Used by both references.
void validate_gemm_views(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                         const MatrixView* c, GemmLayout layout = GemmLayout::kNT);

}  // namespace tilecast::test
