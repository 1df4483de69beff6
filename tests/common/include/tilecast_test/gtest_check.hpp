// GoogleTest helpers over compare() and check_written(). Header-only, so that the support library
// itself does not depend on GoogleTest (the bench links it too).
//
//   EXPECT_TRUE(tilecast::test::matches(out.view, ref.view));            // default bounds
//   EXPECT_TRUE(tilecast::test::matches(out.view, ref.view, {1e-3, 1e-2}));
//   EXPECT_TRUE(tilecast::test::all_written(out));
#pragma once

#include <optional>
#include <span>

#include <gtest/gtest.h>

#include "tilecast_test/compare.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::test {

inline ::testing::AssertionResult close_enough(const CompareResult& r, const Tolerance& tol) {
  if (passes(r, tol)) return ::testing::AssertionSuccess() << r.summary();
  return ::testing::AssertionFailure() << failure_reason(r, tol) << "\n  " << r.summary()
                                       << "\n  (seed base " << seed_base()
                                       << "; set TILECAST_TEST_SEED to replay)";
}

// Compares (synchronizing `stream`) with default_tolerance(out.dtype, ref.dtype) unless given.
inline ::testing::AssertionResult matches(const MatrixView& out, const MatrixView& ref,
                                          std::optional<Tolerance> tol = std::nullopt,
                                          cudaStream_t stream = nullptr,
                                          std::span<const int64_t> rows_per_batch = {}) {
  const CompareResult r = compare(out, ref, stream, rows_per_batch);
  return close_enough(r, tol ? *tol : default_tolerance(out.dtype, ref.dtype));
}

inline ::testing::AssertionResult all_written(const WriteCheck& w) {
  if (w.ok()) return ::testing::AssertionSuccess() << w.summary();
  return ::testing::AssertionFailure() << w.summary();
}

inline ::testing::AssertionResult all_written(const DeviceMatrix& m, cudaStream_t stream = nullptr) {
  return all_written(check_written(m, stream));
}

}  // namespace tilecast::test
