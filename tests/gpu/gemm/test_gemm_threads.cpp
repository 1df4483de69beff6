// Calls of two launches (a split GEMM and its reduce kernel, a main launch and its companion)
// from several threads at once: each thread's results are the bytes the same call gives alone.
// Their per-stream state (the workspace, the unit counters) must not mix: on
// cudaStreamPerThread each thread has its own stream behind one handle, and on one shared stream
// another thread's launches must not land between a call's two.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"

namespace tilecast::test {
namespace {

constexpr int kThreads = 4;
constexpr int kOutputs = 8;  // D buffers a thread cycles through
constexpr int kCalls = 64;   // calls a thread makes

struct ThreadCase {
  const char* name;
  int64_t m, n, k;
  const char* config;
};

enum class Streams { kPerThread, kLegacy, kOneCreated };

// What a failure prints of its parameters (else gtest's bytes of the objects).
void PrintTo(const ThreadCase& c, std::ostream* os) {
  *os << c.name << " " << c.m << "x" << c.n << "x" << c.k << " " << c.config;
}
void PrintTo(Streams s, std::ostream* os) {
  static const char* names[] = {"per-thread streams", "the legacy stream", "one created stream"};
  *os << names[static_cast<int>(s)];
}

std::vector<uint8_t> bytes_of(const MatrixView& v) {
  std::vector<uint8_t> host(static_cast<size_t>(v.rows * v.ld()) * dtype_size(v.dtype));
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  TC_CUDA_CHECK(cudaMemcpy(host.data(), v.data, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

// One thread's operands, its outputs and what the call gives alone.
struct ThreadWork {
  DeviceMatrix a, b;
  std::vector<DeviceMatrix> d;
  std::vector<uint8_t> alone;
};

void run(const ThreadCase& tc, Streams mode) {
  const GemmConfig config = parse_config(tc.config);
  std::vector<ThreadWork> work;
  for (int t = 0; t < kThreads; ++t) {
    ThreadWork w{make_matrix(DType::kBF16, tc.m, tc.k), make_matrix(DType::kBF16, tc.n, tc.k), {}, {}};
    fill_uniform(w.a.view, fresh_seed());
    fill_uniform(w.b.view, fresh_seed());
    for (int i = 0; i < kOutputs; ++i) w.d.push_back(make_matrix(DType::kBF16, tc.m, tc.n));
    poison(w.d[0]);
    TC_CUDA_CHECK(cudaDeviceSynchronize());
    gemm(w.a.view, w.b.view, w.d[0].view, nullptr, nullptr, config);  // alone: nothing else runs
    ASSERT_TRUE(all_written(w.d[0])) << "thread " << t << "'s call alone";
    w.alone = bytes_of(w.d[0].view);
    for (const DeviceMatrix& d : w.d) poison(d);
    work.push_back(std::move(w));
  }
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t shared = nullptr;
  if (mode == Streams::kOneCreated) TC_CUDA_CHECK(cudaStreamCreateWithFlags(&shared, cudaStreamNonBlocking));
  const cudaStream_t stream = mode == Streams::kPerThread ? cudaStreamPerThread : shared;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kCalls; ++i)
          gemm(work[t].a.view, work[t].b.view, work[t].d[i % kOutputs].view, stream, nullptr, config);
        if (cudaStreamSynchronize(stream) != cudaSuccess) errors[t] = "cudaStreamSynchronize failed";
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& th : threads) th.join();
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  if (shared) cudaStreamDestroy(shared);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    for (int i = 0; i < kOutputs; ++i) {
      const std::vector<uint8_t> got = bytes_of(work[t].d[i].view);
      EXPECT_EQ(std::memcmp(got.data(), work[t].alone.data(), got.size()), 0)
          << "thread " << t << ", output " << i << ": not the bytes of the call alone";
    }
  }
}

const ThreadCase kCases[] = {
    {"SplitThroughTheReduceKernel", 256, 1024, 16384, "k_splits=8,fused_reduce=0,cluster_reduce=0"},
    {"MainAndCompanion", 2048, 8192, 512, "cluster=4x1,companion=1"},
};

using ThreadParam = std::tuple<ThreadCase, Streams>;

std::string param_name(const ::testing::TestParamInfo<ThreadParam>& info) {
  static const char* streams[] = {"PerThreadStreams", "LegacyStream", "OneCreatedStream"};
  return std::string(std::get<0>(info.param).name) + "On" + streams[static_cast<int>(std::get<1>(info.param))];
}

class GemmThreads : public ::testing::TestWithParam<ThreadParam> {};

TEST_P(GemmThreads, EachThreadGetsTheBytesOfItsCallAlone) {
  run(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GemmThreads,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(Streams::kPerThread, Streams::kLegacy, Streams::kOneCreated)),
    param_name);

// Each stream that runs a main + companion GEMM takes a pair of unit counters, and the pairs come
// in blocks: a server whose threads come and go with cudaStreamPerThread takes one per thread.
// Calls on more streams than two blocks hold (256 pairs a block, in device_state.cpp) run and give
// the bytes of the call on the legacy stream, and so do later calls on the first streams.
TEST(GemmStreams, CompanionGemmsOnMoreStreamsThanOneCounterBlockHolds) {
  constexpr int kStreams = 600;
  const ThreadCase& tc = kCases[1];
  const GemmConfig config = parse_config(tc.config);
  DeviceMatrix a = make_matrix(DType::kBF16, tc.m, tc.k), b = make_matrix(DType::kBF16, tc.n, tc.k);
  fill_uniform(a.view, fresh_seed());
  fill_uniform(b.view, fresh_seed());
  DeviceMatrix d = make_matrix(DType::kBF16, tc.m, tc.n);
  poison(d);
  gemm(a.view, b.view, d.view, nullptr, nullptr, config);
  ASSERT_TRUE(all_written(d));
  const std::vector<uint8_t> alone = bytes_of(d.view);
  std::vector<cudaStream_t> streams(kStreams);
  for (cudaStream_t& s : streams) TC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::string error;
  for (int round = 0; round < 2 && error.empty(); ++round)
    for (int i = 0; i < kStreams && error.empty(); ++i) {
      TC_CUDA_CHECK(cudaDeviceSynchronize());  // the last call, on a non-blocking stream, is done
      poison(d);
      TC_CUDA_CHECK(cudaDeviceSynchronize());
      try {
        gemm(a.view, b.view, d.view, streams[i], nullptr, config);
      } catch (const std::exception& e) {
        error = "round " + std::to_string(round) + ", stream " + std::to_string(i) + ": " + e.what();
        break;
      }
      if (round == 1 || i % 97 == 0 || i == kStreams - 1) {
        const std::vector<uint8_t> got = bytes_of(d.view);
        if (std::memcmp(got.data(), alone.data(), got.size()) != 0)
          error = "round " + std::to_string(round) + ", stream " + std::to_string(i) + ": not the bytes of the call alone";
      }
    }
  for (cudaStream_t s : streams) TC_CUDA_CHECK(cudaStreamDestroy(s));
  EXPECT_EQ(error, "");
}

}  // namespace
}  // namespace tilecast::test
