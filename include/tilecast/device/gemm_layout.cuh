// How the operands of a GEMM are stored, in the BLAS letters DeepGEMM's bf16_gemm_nt/nn/tn/tt
// use: D = op_a(A) * op_b(B), where the first letter is op_a and the second op_b, N = the matrix
// as stored and T = its transpose. So with row-major views (a MatrixView always describes the
// stored matrix):
//   NT: A [m, k], B [n, k]   (both K-major: K is contiguous; the library's original layout)
//   NN: A [m, k], B [k, n]   (B N-major)
//   TN: A [k, m], B [k, n]   (both MN-major)
//   TT: A [k, m], B [n, k]   (A M-major)
// Shared by the public API, the planner and the kernels, so it includes nothing (types.hpp
// includes it).
#pragma once

namespace tilecast {

enum class GemmLayout : unsigned char { kNT = 0, kNN = 1, kTN = 2, kTT = 3 };

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TC_LAYOUT_HD __host__ __device__
#else
#define TC_LAYOUT_HD
#endif

// A is stored [k, m] (M contiguous): the first letter is T.
TC_LAYOUT_HD constexpr bool a_mn_major(GemmLayout l) { return l == GemmLayout::kTN || l == GemmLayout::kTT; }
// B is stored [k, n] (N contiguous): the second letter is N.
TC_LAYOUT_HD constexpr bool b_mn_major(GemmLayout l) { return l == GemmLayout::kNN || l == GemmLayout::kTN; }
TC_LAYOUT_HD constexpr bool is_gemm_layout(GemmLayout l) { return static_cast<unsigned>(l) <= 3u; }

inline constexpr const char* layout_name(GemmLayout l) {
  return l == GemmLayout::kNT ? "nt" : l == GemmLayout::kNN ? "nn" : l == GemmLayout::kTN ? "tn" : l == GemmLayout::kTT ? "tt" : "?";
}

#undef TC_LAYOUT_HD

}  // namespace tilecast
