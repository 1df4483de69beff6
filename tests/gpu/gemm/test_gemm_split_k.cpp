// Split-K on the GPU: correctness against cuBLASLt with D poisoned (split_k_cases), bit-identical
// output for the same input twice, capture into a CUDA graph and replay with new inputs (on a
// stream that ran the call, and on fresh streams through prepare()'s spare workspace), and a
// capture that would need a new workspace refused with a clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/device_state.hpp"
#include "graph_replay.hpp"
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

using SplitKRuns = StreamTest<GemmCase>;

// The slices are summed in one fixed order: the same input twice gives the same bytes.
TEST_P(SplitKRuns, SameInputTwiceGivesIdenticalBytes) {
  const GemmCase& g = GetParam();
  GraphBuffers x(g);
  x.refill(stream_, true);
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
  GraphBuffers x(g);
  const MatrixView* c = g.with_c ? &x.c.view : nullptr;
  prepare(x.a.view, x.b.view, x.d.view, c, g.config);
  x.refill(stream_, true);
  gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config);
  size_t nodes = 0;
  const cudaGraphExec_t exec =
      capture(stream_, [&] { gemm(x.a.view, x.b.view, x.d.view, stream_, c, g.config); }, &nodes);
  EXPECT_GE(nodes, 2u) << "the GEMM and the reduce kernel";
  ASSERT_TRUE(replays_match(exec, x, g.with_c, 20, stream_));
  cudaGraphExecDestroy(exec);
}

INSTANTIATE_TEST_SUITE_P(Cases, SplitKRuns, ::testing::ValuesIn(split_k_graph_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

// Capturing on a stream that never ran a split call (as torch.cuda.graph does): each prepare()
// readies one spare workspace, which the first such capture takes (no allocation in the capture);
// a second fresh stream without another prepare() is refused with an error that says what to do,
// and its capture ends cleanly. The graph on the spare replays correctly.
TEST(SplitKWorkspace, EachPrepareReadiesOneCaptureOnAFreshStream) {
  const GemmCase g = split_k_graph_cases()[0];
  GraphBuffers x(g);
  const auto capture_on_fresh = [&](cudaStream_t s, bool expect_ok) -> cudaGraphExec_t {
    TC_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    bool ok = true;
    try {
      gemm(x.a.view, x.b.view, x.d.view, s, &x.c.view, g.config);
    } catch (const Error& e) {
      ok = false;
      EXPECT_FALSE(expect_ok) << e.what();
      EXPECT_NE(std::string(e.what()).find("tilecast::prepare() again"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ok, expect_ok);
    cudaGraph_t graph = nullptr;
    TC_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    if (ok) TC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaGraphDestroy(graph);
    return exec;
  };
  // Workspaces are kept by stream handle, and a destroyed stream's handle may come back: take
  // streams that hold none (the others stay alive until the end, so that none comes back).
  std::vector<cudaStream_t> made;
  const auto stream_without_workspace = [&] {
    for (;;) {
      cudaStream_t s;
      TC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      made.push_back(s);
      if (!api::DeviceState::current().find_workspace(s, 1)) return s;
    }
  };
  const cudaStream_t fresh[3] = {stream_without_workspace(), stream_without_workspace(), stream_without_workspace()};
  prepare(x.a.view, x.b.view, x.d.view, &x.c.view, g.config);
  const cudaGraphExec_t first = capture_on_fresh(fresh[0], true);
  capture_on_fresh(fresh[1], false);  // the spare is taken
  prepare(x.a.view, x.b.view, x.d.view, &x.c.view, g.config);
  const cudaGraphExec_t third = capture_on_fresh(fresh[2], true);
  for (cudaGraphExec_t exec : {first, third}) {
    ASSERT_NE(exec, nullptr);
    EXPECT_TRUE(replays_match(exec, x, /*with_c=*/true, 1, fresh[0]));
    cudaGraphExecDestroy(exec);
  }
  TC_CUDA_CHECK(cudaStreamSynchronize(fresh[0]));
  for (cudaStream_t s : made) cudaStreamDestroy(s);
}

}  // namespace
}  // namespace tilecast::test
