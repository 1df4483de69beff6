// k = 0: A * B^T is an empty sum, so cuBLAS's D = alpha * A * B^T + beta * C + bias becomes
// D = beta * C + bias (0 without either). No GEMM kernel has a k-step to run, so an element-wise
// kernel, compiled into the library (nvcc, not the JIT), writes it.
#pragma once

#include <cuda_runtime_api.h>

#include "tilecast/gemm.hpp"

namespace tilecast::api {

// D = beta * C + bias on `stream`, for a validated call (C has D's shape and dtype; beta 0 or no
// C never reads C; bias null: none). Capturable into a CUDA graph. Throws Error on a launch error.
void launch_epilogue_only(const MatrixView& d, const MatrixView* c, float beta, const VectorView& bias,
                          cudaStream_t stream);

// Loads the kernel such a call launches on the current device (CUDA loads modules lazily, on
// first launch), so that tilecast::prepare leaves nothing to do under a graph capture.
void load_epilogue_only(const MatrixView& d, const VectorView& bias);

}  // namespace tilecast::api
