// Small GEMMs: one per cluster shape (the compute-sanitizer run uses these:
// --gtest_filter='GemmSmall.*'), the cached call's host time, and argument errors that need real
// device pointers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "gemm_cases.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"

namespace tilecast::test {
namespace {

TEST(GemmSmall, EveryClusterShapeAndTheCompanion) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const GemmCase& c : small_cases()) EXPECT_TRUE(run_gemm_case(c, stream));
  cudaStreamDestroy(stream);
}

// Host time of a call whose plan and kernel are cached: the launch path alone.
TEST(GemmHostOverhead, CachedCallCostsMicroseconds) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceMatrix a = make_matrix(DType::kBF16, 256, 256);
  DeviceMatrix b = make_matrix(DType::kBF16, 256, 256);
  DeviceMatrix d = make_matrix(DType::kBF16, 256, 256);
  gemm(a.view, b.view, d.view, stream);  // plans, compiles or loads
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  constexpr int kCalls = 500;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) gemm(a.view, b.view, d.view, stream);
  const auto t1 = std::chrono::steady_clock::now();
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls;
  std::printf("[ measured ] cached tilecast::gemm call: %.2f us of host time\n", us);
  RecordProperty("host_us_per_call", std::to_string(us));
  EXPECT_LT(us, 100.0) << "a cached call should not plan or compile";
  cudaStreamDestroy(stream);
}

TEST(GemmErrors, HostPointersAndMisalignedViewsAreRefused) {
  DeviceMatrix a = make_matrix(DType::kBF16, 64, 64);
  DeviceMatrix b = make_matrix(DType::kBF16, 64, 64);
  DeviceMatrix d = make_matrix(DType::kBF16, 64, 64);
  std::vector<uint16_t> host(64 * 64);
  MatrixView on_host = a.view;
  on_host.data = host.data();
  EXPECT_THROW(gemm(on_host, b.view, d.view, nullptr), Error);
  MatrixView shifted = a.view;
  shifted.data = static_cast<char*>(a.view.data) + 2;
  EXPECT_THROW(gemm(shifted, b.view, d.view, nullptr), Error);
  MatrixView overlapping = d.view;
  overlapping.data = a.view.data;
  EXPECT_THROW(gemm(a.view, b.view, overlapping, nullptr), Error);
}

}  // namespace
}  // namespace tilecast::test
