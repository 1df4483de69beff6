// tilecast::gemm inside CUDA graphs: after tilecast::prepare, a captured call records kernel
// launches only, and the graph replays correctly with new inputs in the same buffers (each replay
// checked against cuBLASLt); a call captured before its problem was prepared is refused with a
// clear error and leaves the capture intact.
#include <gtest/gtest.h>

#include <string>

#include "gemm_cases.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

struct Buffers {
  DeviceMatrix a, b, c, c32, d, ref;
  explicit Buffers(const GemmCase& g)
      : a(make_matrix(DType::kBF16, g.m, g.k)),
        b(make_matrix(DType::kBF16, g.n, g.k)),
        c(make_matrix(g.out, g.m, g.n)),
        c32(make_matrix(DType::kFP32, g.m, g.n)),
        d(make_matrix(g.out, g.m, g.n, 1, aligned_ld(g.n + 1, g.out))),
        ref(make_matrix(DType::kFP32, g.m, g.n)) {}
  // New random inputs in the same buffers; D poisoned.
  void refill(cudaStream_t s, bool with_c) {
    fill_uniform(a.view, fresh_seed(), s);
    fill_uniform(b.view, fresh_seed(), s);
    if (with_c) {
      fill_uniform(c.view, fresh_seed(), s);
      copy_convert(c.view, c32.view, s);
    }
    poison(d, s);
  }
};

// `record` captured into a graph on `stream` and instantiated (cudaStreamCaptureModeGlobal: any
// unsafe call inside fails).
template <typename Record>
cudaGraphExec_t capture(cudaStream_t stream, Record record, size_t* nodes = nullptr) {
  cudaGraph_t graph = nullptr;
  TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  record();
  TC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  if (nodes) TC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, nodes));
  cudaGraphExec_t exec = nullptr;
  TC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaGraphDestroy(graph);
  return exec;
}

class GemmGraph : public ::testing::TestWithParam<GemmCase> {
 protected:
  void SetUp() override { TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  void TearDown() override { cudaStreamDestroy(stream_); }
  cudaStream_t stream_ = nullptr;
};

// Capture once, replay 100 times with fresh inputs, compare every replay.
TEST_P(GemmGraph, ReplaysWithNewInputsMatchCublas) {
  const GemmCase& g = GetParam();
  const GemmConfig& config = g.config;
  const bool with_c = g.with_c;
  {
    Buffers x(g);
    const MatrixView* c = with_c ? &x.c.view : nullptr;
    prepare(x.a.view, x.b.view, x.d.view, c, config);

    size_t nodes = 0;
    const cudaGraphExec_t exec = capture(stream_, [&] { gemm(x.a.view, x.b.view, x.d.view, stream_, c, config); }, &nodes);
    EXPECT_GE(nodes, 1u) << "the captured call recorded its kernel launches";

    static CublasLt lt;
    for (int replay = 0; replay < 100; ++replay) {
      x.refill(stream_, with_c);
      TC_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      reference_gemm(lt, x.a.view, x.b.view, x.ref.view, stream_, with_c ? &x.c32.view : nullptr);
      ASSERT_TRUE(all_written(x.d, stream_)) << "replay " << replay;
      ASSERT_TRUE(matches(x.d.view, x.ref.view, std::nullopt, stream_)) << "replay " << replay;
    }
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
  Buffers first(shape), second(shape);
  prepare(first.a.view, first.b.view, first.d.view);
  const cudaGraphExec_t exec = capture(stream, [&] { gemm(second.a.view, second.b.view, second.d.view, stream); });
  static CublasLt lt;
  for (int replay = 0; replay < 3; ++replay) {
    second.refill(stream, false);
    TC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    reference_gemm(lt, second.a.view, second.b.view, second.ref.view, stream);
    EXPECT_TRUE(all_written(second.d, stream));
    EXPECT_TRUE(matches(second.d.view, second.ref.view, std::nullopt, stream));
  }
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(stream);
}

// Never seen before: compiling cannot be captured, so the call throws, names prepare(), and the
// capture goes on undamaged (it ends cleanly with nothing recorded).
TEST(GemmGraphBuffers, AnUnpreparedProblemIsRefusedInsideACapture) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Buffers x(graph_unprepared_case());  // a shape no other test uses
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
