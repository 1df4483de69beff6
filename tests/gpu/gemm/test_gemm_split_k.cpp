// Split-K on the GPU: correctness against cuBLASLt with D poisoned (split_k_cases), bit-identical
// output for the same input twice, capture into a CUDA graph and replay with new inputs, and a
// capture on a stream whose workspace is too small refused with a clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "split_k_cases.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

using SplitKCorrectness = StreamTest<GemmCase>;

TEST_P(SplitKCorrectness, MatchesCublas) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }

INSTANTIATE_TEST_SUITE_P(Cases, SplitKCorrectness, ::testing::ValuesIn(split_k_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

std::vector<uint8_t> bytes_of(const DeviceMatrix& m, cudaStream_t s) {
  std::vector<uint8_t> host(static_cast<size_t>(m.view.rows * m.view.ld() * static_cast<int64_t>(dtype_size(m.view.dtype))));
  TC_CUDA_CHECK(cudaMemcpyAsync(host.data(), m.view.data, host.size(), cudaMemcpyDeviceToHost, s));
  TC_CUDA_CHECK(cudaStreamSynchronize(s));
  return host;
}

struct Buffers {
  DeviceMatrix a, b, c, c32, d, ref;
  explicit Buffers(const GemmCase& g)
      : a(make_matrix(DType::kBF16, g.m, g.k)),
        b(make_matrix(DType::kBF16, g.n, g.k)),
        c(make_matrix(g.out, g.m, g.n)),
        c32(make_matrix(DType::kFP32, g.m, g.n)),
        d(make_matrix(g.out, g.m, g.n)),
        ref(make_matrix(DType::kFP32, g.m, g.n)) {}
  void refill(cudaStream_t s) {
    fill_uniform(a.view, fresh_seed(), s);
    fill_uniform(b.view, fresh_seed(), s);
    fill_uniform(c.view, fresh_seed(), s);
    copy_convert(c.view, c32.view, s);
    poison(d, s);
  }
};

class SplitKRuns : public ::testing::TestWithParam<GemmCase> {
 protected:
  void SetUp() override { TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  void TearDown() override { cudaStreamDestroy(stream_); }
  cudaStream_t stream_ = nullptr;
};

// The slices are summed in one fixed order: the same input twice gives the same bytes.
TEST_P(SplitKRuns, SameInputTwiceGivesIdenticalBytes) {
  const GemmCase& g = GetParam();
  Buffers x(g);
  x.refill(stream_);
  const MatrixView* c = g.with_c ? &x.c.view : nullptr;
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  const std::vector<uint8_t> first = bytes_of(x.d, stream_);
  poison(x.d, stream_);
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  const std::vector<uint8_t> second = bytes_of(x.d, stream_);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size()), 0) << "split-K output differs between runs";
}

// Prepared, run once on the stream (which sizes its workspace), captured, replayed with new inputs.
TEST_P(SplitKRuns, CapturedInAGraphReplaysWithNewInputs) {
  const GemmCase& g = GetParam();
  Buffers x(g);
  const MatrixView* c = g.with_c ? &x.c.view : nullptr;
  prepare(x.a.view, x.b.view, x.d.view, c, g.config);
  x.refill(stream_);
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  cudaGraph_t graph = nullptr;
  TC_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  TC_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  size_t nodes = 0;
  TC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_GE(nodes, 2u) << "the GEMM and the reduce kernel";
  cudaGraphExec_t exec = nullptr;
  TC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaGraphDestroy(graph);
  static CublasLt lt;
  for (int replay = 0; replay < 20; ++replay) {
    x.refill(stream_);
    TC_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
    reference_gemm(lt, x.a.view, x.b.view, x.ref.view, stream_, g.with_c ? &x.c32.view : nullptr);
    ASSERT_TRUE(all_written(x.d, stream_)) << "replay " << replay;
    ASSERT_TRUE(matches(x.d.view, x.ref.view, std::nullopt, stream_)) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
}

INSTANTIATE_TEST_SUITE_P(Cases, SplitKRuns, ::testing::ValuesIn(split_k_graph_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

// A fresh stream has no workspace: capturing a split call on it is refused (no hidden allocation)
// with an error that says what to do, and the capture ends cleanly.
TEST(SplitKWorkspace, CaptureOnAStreamWithoutWorkspaceIsRefused) {
  const GemmCase g = split_k_graph_cases()[0];
  Buffers x(g);
  prepare(x.a.view, x.b.view, x.d.view, &x.c.view, g.config);
  cudaStream_t fresh;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking));
  TC_CUDA_CHECK(cudaStreamBeginCapture(fresh, cudaStreamCaptureModeGlobal));
  try {
    gemm(x.a.view, x.b.view, x.d.view, fresh, &x.c.view, g.config);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
  cudaGraph_t graph = nullptr;
  TC_CUDA_CHECK(cudaStreamEndCapture(fresh, &graph));
  cudaGraphDestroy(graph);
  cudaStreamDestroy(fresh);
}

}  // namespace
}  // namespace tilecast::test
