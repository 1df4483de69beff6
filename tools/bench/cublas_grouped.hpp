// cuBLAS's grouped batched GEMM (cublasGemmGroupedBatchedEx, cuBLAS 12.5+) as a second baseline of
// the grouped suites: one call for every expert (or k-group) that has work, each a group of one
// problem, on the workload's buffers. Row-major D = A * B^T is column-major D^T = B * A^T, as in
// tests/common's LtMatmul: cuBLAS's A is our B (op T), its B our A's rows (op N), its C our D's.
#pragma once

#include <memory>
#include <string>

#include "suites.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {

class CublasGroupedBatched {
 public:
  // Throws CudaError when cuBLAS refuses the problem (a type it does not support, no GPU).
  CublasGroupedBatched(const BenchProblem& p, Workload& w);
  ~CublasGroupedBatched();
  CublasGroupedBatched(const CublasGroupedBatched&) = delete;
  CublasGroupedBatched& operator=(const CublasGroupedBatched&) = delete;

  void run(cudaStream_t stream) const;  // writes (or accumulates into) w.d_cublas
  size_t problems() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilecast::bench
