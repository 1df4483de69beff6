// The benchmark's problems: DeepGEMM's public BF16 shapes (MISSION.md), square sweeps and odd
// sizes, as suites that --suite picks by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilecast/types.hpp"

namespace tilecast::bench {

enum class Kind {
  kDense,     // D[m, n] = A[m, k] * B[n, k]^T
  kBatched,   // `groups` independent dense problems of equal sizes
  kMGrouped,  // MoE, contiguous: groups experts of m rows each, one B per expert
  kMasked,    // MoE, masked: [groups, m (max rows), k] buffers, group_rows[g] valid rows of each
  kKGrouped,  // MoE weight gradients: group_k[g] columns of A [m, k] and B [n, k] per group, one
              // m x n result each (with_c: accumulated into D)
};

const char* kind_name(Kind k);

inline constexpr uint32_t kLeastRowBytes = 16;

struct BenchProblem {
  std::string suite;
  Kind kind = Kind::kDense;
  // kMGrouped: m = mean rows per expert; kMasked: m = max rows per expert; kKGrouped: m x n per
  // group, k = the groups' columns in all.
  int64_t m = 0, n = 0, k = 0;
  int64_t groups = 1;
  int64_t expected_m = 0;            // kMasked: the expected valid rows per expert
  std::vector<int64_t> group_rows;   // kMGrouped, kMasked: rows of each expert
  std::vector<int64_t> group_k;      // kKGrouped: columns of each group
  DType out = DType::kBF16;
  bool with_c = false;               // kKGrouped: D += A_g * B_g^T; dense and batched: + C
  bool with_bias = false;  // a bias along N, of the output's dtype (cuBLASLt: CUBLASLT_EPILOGUE_BIAS)
  // Dense and batched: how A and B are stored (gemm_layout.cuh); cuBLASLt gets the same layout
  // through its op flags.
  GemmLayout layout = GemmLayout::kNT;
  // Each stored row of A and B starts on a multiple of this many bytes (--row-bytes): 16, the
  // least TMA takes, or up to 128, a whole L2 line (a row off a line reads two: src/plan/plan_cost.cpp).
  uint32_t row_bytes = kLeastRowBytes;
  // The host suite: its rows time the enqueue of one call (host microseconds per call, cached
  // plan and kernel, no GPU time), tilecast::gemm against cublasLtMatmul on the same buffers.
  bool host_time = false;

  int64_t rows_total() const;  // rows of A and D as stored (all groups; kKGrouped: m)
  int64_t valid_rows() const;  // rows that are computed (all groups)
  double flops() const;        // 2 * valid rows * n * k
  // Bytes a perfect kernel moves through HBM: A (valid rows), B, D (valid rows) and C, once each.
  double bytes() const;
  std::string label() const;   // "4096x7168x2112" style, with groups where there are some
};

// Suites by name: dense, m4096, m128, mgrouped, masked, kgrouped, deepseek-v3, square, odd, host,
// fp32c (8192^3 and the m = 4096 list with FP32 output and C), bias (the same with BF16 output and
// a bias), nn, tn, tt (8192^3 and the m = 4096 list in those layouts), mcast (three dense shapes
// that --suite mcast runs in its own mode, multicast_worth.hpp; not part of "all"); "default" is
// dense,m4096,m128,odd,host and "all" is every suite. Throws
// std::invalid_argument for unknown names.
std::vector<BenchProblem> make_suite(const std::string& name);
std::vector<std::string> suite_names();
// --out and --with-c on a problem: the output dtype where one is given (null: the suite's), and C
// where asked for and the kind has one (k-grouped: accumulating; the m-grouped and masked calls
// take no C).
void apply_epilogue(BenchProblem& p, const DType* out, bool with_c);

// The extents a careful cuBLASLt user rounds n and k up to: 8 BF16 elements, 16 bytes.
inline constexpr int64_t kOddPadElements = 8;
// A dense or batched NT problem (the odd suite's kind) whose n or k is not a multiple of
// kOddPadElements: where the bench adds its odd-size cuBLASLt variants (cublas_odd.hpp).
bool has_odd_extents(const BenchProblem& p);

// "m,n,k" or "m,n,k,batch". Throws std::invalid_argument.
BenchProblem parse_shape(const std::string& text);

}  // namespace tilecast::bench
