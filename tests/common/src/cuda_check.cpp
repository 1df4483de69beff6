#include "tilecast_test/cuda_check.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace tilecast::test {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                  cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                  cublasLtGetStatusString(static_cast<cublasStatus_t>(status)) + " (status " +
                  std::to_string(status) + ")");
}

void check_last_launch(const char* what, const char* file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, what, file, line);
}

}  // namespace tilecast::test
