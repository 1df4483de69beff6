// Swapped operands (swap_ab=1: the kernel computes D^T = B * A^T) on the GPU: correctness against
// cuBLASLt with D poisoned and its buffer's rows past m and padding past n checked untouched
// (swap_ab_cases), unsplit and with split-K; bit-identical output for the same input twice; and a
// capture into a CUDA graph replayed with new inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "graph_replay.hpp"
#include "swap_ab_cases.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::test {
namespace {

using SwapAbCorrectness = StreamTest<GemmCase>;

TEST_P(SwapAbCorrectness, MatchesCublas) { EXPECT_TRUE(run_gemm_case(GetParam(), stream_)); }

INSTANTIATE_TEST_SUITE_P(Cases, SwapAbCorrectness, ::testing::ValuesIn(swap_ab_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

std::vector<uint8_t> bytes_of(const DeviceMatrix& m, cudaStream_t s) {
  std::vector<uint8_t> host(m.buffer.bytes());
  TC_CUDA_CHECK(cudaMemcpyAsync(host.data(), m.alloc_begin(), host.size(), cudaMemcpyDeviceToHost, s));
  TC_CUDA_CHECK(cudaStreamSynchronize(s));
  return host;
}

using SwapAbRuns = StreamTest<GemmCase>;

// No atomics and a fixed order of slices: the same input twice gives the same bytes, over the
// whole buffer (what lies outside D keeps its poison both times).
TEST_P(SwapAbRuns, SameInputTwiceGivesIdenticalBytes) {
  const GemmCase& g = GetParam();
  DeviceMatrix a = make_matrix(DType::kBF16, g.m, g.k);
  DeviceMatrix b = make_matrix(DType::kBF16, g.n, g.k);
  DeviceMatrix c = make_matrix(g.out, g.m, g.n, 1, aligned_ld(g.n, g.out));  // TMA-legal rows for a ragged n
  DeviceMatrix bias = make_matrix(g.bias_dtype, 1, g.n);
  DeviceMatrix d = make_matrix(g.out, g.m + g.guard_rows, g.n, 1, aligned_ld(g.n + 1, g.out));
  const MatrixView d_view = rows_of(d.view, 0, g.m);
  fill_uniform(a.view, fresh_seed(), stream_);
  fill_uniform(b.view, fresh_seed(), stream_);
  fill_uniform(c.view, fresh_seed(), stream_);
  fill_uniform(bias.view, fresh_seed(), stream_);
  GemmEpilogue e;
  e.alpha = g.alpha;
  if (g.with_c) {
    e.c = &c.view;
    e.beta = g.beta;
  }
  if (g.with_bias) e.bias = {bias.view.data, g.bias_dtype, g.n};
  poison(d, stream_);
  gemm(a.view, b.view, d_view, stream_, e, g.config);
  const std::vector<uint8_t> first = bytes_of(d, stream_);
  poison(d, stream_);
  gemm(a.view, b.view, d_view, stream_, e, g.config);
  const std::vector<uint8_t> second = bytes_of(d, stream_);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size()), 0) << "swapped output differs between runs";
  EXPECT_TRUE(check_written(d, d_view, {}, stream_).ok()) << check_written(d, d_view, {}, stream_).summary();
}

INSTANTIATE_TEST_SUITE_P(Cases, SwapAbRuns, ::testing::ValuesIn(swap_ab_determinism_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

using SwapAbGraphs = StreamTest<GemmCase>;

// Nothing on the swapped path allocates or compiles at launch: prepared, run once, captured, and
// every replay over new inputs matches cuBLASLt.
TEST_P(SwapAbGraphs, CapturedInAGraphReplaysWithNewInputs) {
  const GemmCase& g = GetParam();
  GraphBuffers x(g);
  const MatrixView* c = g.with_c ? &x.c.view : nullptr;
  prepare(x.a.view, x.b.view, x.d.view, c, g.config);
  x.refill(stream_, g.with_c);
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  const cudaGraphExec_t exec = capture(stream_, [&] { gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config); });
  ASSERT_TRUE(replays_match(exec, x, g.with_c, 5, stream_));
  cudaGraphExecDestroy(exec);
}

INSTANTIATE_TEST_SUITE_P(Cases, SwapAbGraphs, ::testing::ValuesIn(swap_ab_graph_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

}  // namespace
}  // namespace tilecast::test
