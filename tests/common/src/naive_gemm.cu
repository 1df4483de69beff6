#include "tilecast_test/naive_gemm.hpp"

#include <cuda_runtime.h>

#include "kernel_util.cuh"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

struct Operand {
  const void* data;
  bool bf16;
  int64_t ld, batch_step;
};

__global__ void naive_gemm_kernel(Operand a, Operand b, Operand c, void* d, bool d_bf16, int64_t ldd,
                                  int64_t d_step, int64_t m, int64_t n, int64_t k, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t bt = i / (m * n);
    const int64_t row = (i - bt * m * n) / n;
    const int64_t col = i - bt * m * n - row * n;
    const int64_t a_row = bt * a.batch_step + row * a.ld;  // A[bt, row, :]
    const int64_t b_row = bt * b.batch_step + col * b.ld;  // B[bt, col, :]
    double acc = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      acc += static_cast<double>(detail::load_as_float(a.data, a.bf16, a_row + kk)) *
             static_cast<double>(detail::load_as_float(b.data, b.bf16, b_row + kk));
    if (c.data) acc += detail::load_as_float(c.data, c.bf16, bt * c.batch_step + row * c.ld + col);
    detail::store_from_float(d, d_bf16, bt * d_step + row * ldd + col, static_cast<float>(acc));
  }
}

Operand operand_of(const MatrixView& v) {
  return Operand{v.data, v.dtype == DType::kBF16, v.ld(), v.batch_step()};
}

}  // namespace

void naive_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
                const MatrixView* c) {
  validate_gemm_views(a, b, d, c);
  const int64_t total = d.batch * d.rows * d.cols;
  if (total == 0) return;
  const Operand none{nullptr, false, 0, 0};
  naive_gemm_kernel<<<detail::grid_for(total), 256, 0, stream>>>(
      operand_of(a), operand_of(b), c ? operand_of(*c) : none, d.data, d.dtype == DType::kBF16,
      d.ld(), d.batch_step(), d.rows, d.cols, a.cols, total);
  TC_CHECK_LAUNCH("naive_gemm_kernel");
}

}  // namespace tilecast::test
