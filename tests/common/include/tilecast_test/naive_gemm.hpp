// A naive CUDA-core GEMM, one thread per output element with a double accumulator: slow, simple,
// independent of cuBLASLt. It checks the cuBLASLt reference itself (and small cases directly).
// Same layout and views as reference_gemm(): D[m, n] = A[m, k] * B[n, k]^T (+ C), batched.
#pragma once

#include <cuda_runtime_api.h>

#include "tilecast/types.hpp"

namespace tilecast::test {

// Asynchronous on `stream`. Any mix of bf16 and fp32 views.
void naive_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                const MatrixView* c = nullptr);

}  // namespace tilecast::test
