// main() of every GPU test binary. Without a usable Hopper GPU (compute capability 9.0: the
// kernels are sm_90a) it returns TILECAST_SKIP_CODE, which CTest reports as skipped: a GPU test
// must never pass on a machine that could not run it. A binary whose tests all skipped themselves
// (GTEST_SKIP) exits with the skip code too.
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
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9 || prop.minor != 0) {
    std::printf("SKIPPED: device 0 (%s) is compute capability %d.%d, not a Hopper GPU (9.0)\n", prop.name, prop.major,
                prop.minor);
    return TILECAST_SKIP_CODE;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
  if (rc == 0 && u.test_to_run_count() > 0 && u.skipped_test_count() == u.test_to_run_count()) {
    std::printf("SKIPPED: every test of this binary skipped itself\n");
    return TILECAST_SKIP_CODE;
  }
  return rc;
}
