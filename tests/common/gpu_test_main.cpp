// main() of every GPU test binary. Without a usable GPU it returns TILECAST_SKIP_CODE, which
// CTest reports as skipped: a GPU test must never pass on a machine that could not run it.
#include <cstdio>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA GPU found (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "device count 0");
    return TILECAST_SKIP_CODE;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
