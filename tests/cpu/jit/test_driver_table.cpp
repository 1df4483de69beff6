// The driver table on any machine: complete where a driver is installed, a tilecast::Error naming
// the function where none is (CI), never a crash.
#include <gtest/gtest.h>

#include "driver/driver.hpp"
#include "jit_test_util.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

TEST(JitDriver, LoadsEverythingOrSaysWhatIsMissing) {
  try {
    const Driver& d = Driver::get();
    EXPECT_NE(d.cuLaunchKernelEx, nullptr);
    EXPECT_NE(d.cuTensorMapEncodeTiled, nullptr);
    EXPECT_NE(d.cuOccupancyMaxActiveClusters, nullptr);
    EXPECT_NE(d.cuMemCreate, nullptr);  // comm's symmetric heap shares the table
    EXPECT_NE(d.cuMemSetAccess, nullptr);
    EXPECT_NE(d.cuMemGetAddressRange, nullptr);  // the grouped GEMMs' argument checks
    EXPECT_TRUE(test::Contains(d.describe(CUDA_ERROR_INVALID_VALUE), "CUDA_ERROR_INVALID_VALUE"));
    EXPECT_THROW(d.check(CUDA_ERROR_INVALID_VALUE, "cuFoo"), Error);
  } catch (const Error& e) {
    EXPECT_TRUE(test::Contains(e.what(), "CUDA driver function cu"));
    std::printf("no CUDA driver here: %s\n", e.what());
  }
}

}  // namespace
}  // namespace tilecast::jit
