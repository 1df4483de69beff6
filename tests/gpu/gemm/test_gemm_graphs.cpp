// tilecast::gemm inside CUDA graphs: after tilecast::prepare, a captured call records kernel
// launches only, and the graph replays correctly with new inputs in the same buffers (each replay
// checked against cuBLASLt); a call captured before its problem was prepared is refused with a
// clear error and leaves the capture intact.
#include <gtest/gtest.h>

#include <string>

#include "gemm_cases.hpp"
#include "graph_replay.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

using GemmGraph = StreamTest<GemmCase>;

// Capture once, replay 100 times with fresh inputs, compare every replay.
TEST_P(GemmGraph, ReplaysWithNewInputsMatchCublas) {
  const GemmCase& g = GetParam();
  const GemmConfig& config = g.config;
  const bool with_c = g.with_c;
  {
    GraphBuffers x(g);
    const MatrixView* c = with_c ? &x.c.view : nullptr;
    prepare(x.a.view, x.b.view, x.d.view, c, config);

    size_t nodes = 0;
    const cudaGraphExec_t exec = capture(stream_, [&] { gemm(x.a.view, x.b.view, x.d.view, stream_, c, config); }, &nodes);
    EXPECT_GE(nodes, 1u) << "the captured call recorded its kernel launches";

    ASSERT_TRUE(replays_match(exec, x, with_c, 100, stream_));
    cudaGraphExecDestroy(exec);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GemmGraph, ::testing::ValuesIn(graph_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

// A problem prepared with some buffers, captured with others of the same shape: the plan and its
// kernels are ready, so only the (host-side) argument checks and descriptors are new.
TEST(GemmGraphBuffers, OtherBuffersOfAPreparedShapeCanBeCaptured) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const GemmCase shape = graph_other_buffers_case();
  GraphBuffers first(shape), second(shape);
  prepare(first.a.view, first.b.view, first.d.view);
  const cudaGraphExec_t exec = capture(stream, [&] { gemm(second.a.view, second.b.view, second.d.view, stream); });
  EXPECT_TRUE(replays_match(exec, second, false, 3, stream));
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(stream);
}

// Never seen before: compiling cannot be captured, so the call throws, names prepare(), and the
// capture goes on undamaged (it ends cleanly with nothing recorded).
TEST(GemmGraphBuffers, AnUnpreparedProblemIsRefusedInsideACapture) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GraphBuffers x(graph_unprepared_case());  // a shape no other test uses
  TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    gemm(x.a.view, x.b.view, x.d.view, stream);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tilecast::prepare"), std::string::npos) << e.what();
  }
  cudaGraph_t graph = nullptr;
  TC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  size_t nodes = 1;
  TC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 0u);
  cudaGraphDestroy(graph);
  // Outside a capture the same call plans, compiles and runs.
  x.refill(stream, false);
  gemm(x.a.view, x.b.view, x.d.view, stream);
  static CublasLt lt;
  reference_gemm(lt, x.a.view, x.b.view, x.ref.view, stream);
  EXPECT_TRUE(all_written(x.d, stream));
  EXPECT_TRUE(matches(x.d.view, x.ref.view, std::nullopt, stream));
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tilecast::test
