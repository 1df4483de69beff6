// One GEMM checked against cuBLASLt on fresh random data, the output poisoned first.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "tilecast/gemm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::test {

// What the epilogue reads of C.
enum class CSource {
  kSeparate,  // C in a buffer of its own
  kInPlace,   // C is D: D holds C's values before the call
  kNaN,       // C filled with NaN and beta = 0: C must not be read
};

// Rows of D's buffer past m that a case keeps unless it says otherwise: one 8-row group of a wgmma
// accumulator, the step an off-by-one in the epilogue's row arithmetic would move a store by.
inline constexpr int64_t kDefaultGuardRows = 8;

struct GemmCase {
  const char* what = "";
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DType out = DType::kBF16;
  bool with_c = false;
  GemmConfig config{};
  // The epilogue beyond D = A * B^T (+ C): alpha, beta (with C) and a bias along N.
  CSource c_source = CSource::kSeparate;
  float alpha = 1.0f, beta = 1.0f;
  bool with_bias = false;
  DType bias_dtype = DType::kFP32;
  // How A and B are stored (gemm_layout.cuh; the views are the stored matrices), and elements of
  // padding past each row of A, B, C and D beyond the 16-byte alignment (A's and B's padding is
  // NaN, so a kernel that reads past the stored rows fails).
  GemmLayout layout = GemmLayout::kNT;
  int64_t row_padding = 0;
  // Rows of D's buffer past its m rows (in every batch), which must keep their poison: a store past
  // row m (a partial tile's, or one into the next batch's rows, where without a gap it would land
  // on rows that the next batch's own stores then overwrite), or a kernel that writes D transposed
  // (swap_ab) and stores a column index as a row, hits them.
  int64_t guard_rows = kDefaultGuardRows;
  std::string name() const;  // a gtest-safe name: what, sizes, dtype, epilogue, config
};

// What the planner sees of this case (to compile its kernels ahead of the GPU run).
plan::GemmDesc desc_of(const GemmCase& c);

// The overrides of a config, gtest-safe: "_c2x1_b128x128_companion" (empty for the defaults).
std::string config_name(const GemmConfig& config);

// A parameterised GEMM test with a non-blocking stream of its own.
template <class Case>
class StreamTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) FAIL() << "cudaStreamCreate";
  }
  void TearDown() override { cudaStreamDestroy(stream_); }
  cudaStream_t stream_ = nullptr;
};

// Runs the case on `stream` and returns whether D matched the reference and only D's view was
// written (the failure message says what went wrong, with the seed to replay it).
::testing::AssertionResult run_gemm_case(const GemmCase& c, cudaStream_t stream);

}  // namespace tilecast::test
