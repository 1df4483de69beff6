// Error checks for test and benchmark code: every CUDA runtime and cuBLASLt status is checked and
// a failure throws tilecast::test::CudaError naming the call, the file and the line. GoogleTest
// reports an exception escaping a TEST body as a failure; the bench catches it per row.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace tilecast::test {

class CudaError : public std::runtime_error {
 public:
  explicit CudaError(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);

// After a kernel launch: a launch error (bad configuration) shows up here at once; faults inside
// the kernel show up at the next synchronizing call, which is checked too.
void check_last_launch(const char* what, const char* file, int line);

}  // namespace tilecast::test

#define TC_CUDA_CHECK(call)                                                      \
  do {                                                                           \
    const cudaError_t tc_err_ = (call);                                          \
    if (tc_err_ != cudaSuccess)                                                  \
      ::tilecast::test::throw_cuda_error(tc_err_, #call, __FILE__, __LINE__);    \
  } while (0)

// cublasStatus_t is an int-sized enum; taking it as int keeps cublasLt.h out of this header.
#define TC_CUBLAS_CHECK(call)                                                    \
  do {                                                                           \
    const int tc_st_ = static_cast<int>(call);                                   \
    if (tc_st_ != 0) ::tilecast::test::throw_cublas_error(tc_st_, #call, __FILE__, __LINE__); \
  } while (0)

#define TC_CHECK_LAUNCH(what) ::tilecast::test::check_last_launch((what), __FILE__, __LINE__)
