// Launch configurations refused before the driver is asked.
#include <gtest/gtest.h>

#include "jit/launch.hpp"
#include "jit_test_util.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

using test::Contains;

std::string error_of(const LaunchConfig& cfg) {
  try {
    validate_launch(cfg);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

LaunchConfig good() {
  LaunchConfig cfg;
  cfg.grid = dim3(132, 1, 1);
  cfg.block = dim3(384, 1, 1);
  cfg.cluster = dim3(2, 1, 1);
  cfg.dynamic_smem_bytes = 200 * 1024;
  return cfg;
}

TEST(JitLaunch, AcceptsAValidConfig) {
  EXPECT_NO_THROW(validate_launch(good()));
  LaunchConfig plain;  // dim3 defaults: one CTA of one thread, no cluster
  EXPECT_NO_THROW(validate_launch(plain));
  LaunchConfig two_by_two = good();
  two_by_two.grid = dim3(8, 6, 1);
  two_by_two.cluster = dim3(2, 2, 1);
  EXPECT_NO_THROW(validate_launch(two_by_two));
}

TEST(JitLaunch, RejectsBadConfigs) {
  LaunchConfig cfg = good();
  cfg.grid = dim3(131, 1, 1);
  EXPECT_TRUE(Contains(error_of(cfg), "multiple of the cluster's"));
  EXPECT_TRUE(Contains(error_of(cfg), "grid (131,1,1), block (384,1,1), cluster (2,1,1)"));

  cfg = good();
  cfg.cluster = dim3(32, 1, 1);
  cfg.grid = dim3(128, 1, 1);
  EXPECT_TRUE(Contains(error_of(cfg), "cluster of 32 CTAs exceeds 16"));

  cfg = good();
  cfg.block = dim3(64, 32, 1);
  EXPECT_TRUE(Contains(error_of(cfg), "2048 threads per CTA exceed 1024"));

  cfg = good();
  cfg.grid = dim3(0, 1, 1);
  EXPECT_TRUE(Contains(error_of(cfg), "grid has a zero dimension"));

  cfg = good();
  cfg.cluster = dim3(0, 1, 1);
  EXPECT_TRUE(Contains(error_of(cfg), "cluster has a zero dimension"));
}

}  // namespace
}  // namespace tilecast::jit
