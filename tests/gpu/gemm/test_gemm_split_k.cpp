// Split-K on the GPU: correctness against cuBLASLt with D poisoned (split_k_cases), bit-identical
// output for the same input twice and through either reduce (the kernel's, the fused one), capture
// into a CUDA graph and replay with new inputs (on a stream that ran the call, and on fresh streams
// through prepare()'s spare workspace), and a capture that would need a new workspace refused with
// a clear error.
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
  ASSERT_TRUE(all_written(x.d, stream_)) << "two unwritten outputs would be identical too";
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
  if (g.config.fused_reduce == 0) { EXPECT_GE(nodes, 2u) << "the GEMM and the reduce kernel"; }
  if (g.config.fused_reduce == 1) { EXPECT_EQ(nodes, 1u) << "a fused reduce is the GEMM alone"; }
  if (g.config.cluster_reduce == 1) { EXPECT_EQ(nodes, 1u) << "a cluster reduce is the GEMM alone"; }
  ASSERT_TRUE(replays_match(exec, x, g.with_c, 20, stream_));
  cudaGraphExecDestroy(exec);
}

INSTANTIATE_TEST_SUITE_P(Cases, SplitKRuns, ::testing::ValuesIn(split_k_graph_cases()),
                         [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name(); });

// The slices summed inside the GEMM (fused_reduce=1), across a cluster of them (cluster_reduce=1,
// where the split can be one: 2, 4 or 8 slices, no multicast cluster) and by the reduce kernel
// give the same bytes: the same partial sums, added in the same slice order, with the same
// epilogue arithmetic (epilogue_value.cuh). Whichever slice of a tile finishes last, the order
// does not change: run twice each, and over every epilogue: C with alpha and beta, both bias
// dtypes, FP32 and BF16 D, a batch, an odd n, clusters, more slices than k-steps.
struct ReducePair {
  const char* what;
  int64_t m, n, k, batch;
  DType out;
  bool with_c;
  float alpha, beta;
  int bias;  // 0 none, 1 fp32, 2 bf16
  uint32_t k_splits, cluster_m, cluster_n;
};

class FusedReduce : public ::testing::TestWithParam<ReducePair> {};

TEST_P(FusedReduce, GivesTheReduceKernelsBytes) {
  const ReducePair& r = GetParam();
  cudaStream_t s = nullptr;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DeviceMatrix a = make_matrix(DType::kBF16, r.m, r.k, r.batch);
  DeviceMatrix b = make_matrix(DType::kBF16, r.n, r.k, r.batch);
  DeviceMatrix c = make_matrix(r.out, r.m, r.n, r.batch, aligned_ld(r.n, r.out));
  DeviceMatrix d = make_matrix(r.out, r.m, r.n, r.batch, aligned_ld(r.n + 1, r.out));
  const DType bias_type = r.bias == 2 ? DType::kBF16 : DType::kFP32;
  DeviceMatrix bias = make_matrix(bias_type, 1, r.n);
  fill_uniform(a.view, fresh_seed(), s);
  fill_uniform(b.view, fresh_seed(), s);
  fill_uniform(c.view, fresh_seed(), s);
  fill_uniform(bias.view, fresh_seed(), s);
  GemmEpilogue e;
  e.c = r.with_c ? &c.view : nullptr;
  e.alpha = r.alpha;
  e.beta = r.with_c ? r.beta : 1.0f;
  if (r.bias) e.bias = {bias.view.data, bias_type, r.n};
  enum Sum { kKernel, kFused, kCluster };
  static const char* const kNames[] = {"reduce kernel", "fused", "cluster reduce"};
  std::vector<Sum> sums{kKernel, kFused, kKernel, kFused};
  const bool clusterable = (r.k_splits == 2 || r.k_splits == 4 || r.k_splits == 8) && r.cluster_m == 0;
  if (clusterable) sums.insert(sums.end(), {kCluster, kCluster});
  std::vector<std::vector<uint8_t>> outs;
  for (Sum sum : sums) {
    GemmConfig cfg;
    cfg.k_splits = r.k_splits;
    cfg.cluster_m = r.cluster_m;
    cfg.cluster_n = r.cluster_n;
    cfg.fused_reduce = sum == kFused ? 1 : sum == kKernel ? 0 : -1;
    cfg.cluster_reduce = sum == kCluster ? 1 : 0;
    poison(d, s);
    gemm(a.view, b.view, d.view, s, e, cfg);
    TC_CUDA_CHECK(cudaStreamSynchronize(s));
    EXPECT_TRUE(all_written(d, s)) << kNames[sum];
    // The whole allocation, every batch and the guards around it.
    std::vector<uint8_t> host(d.buffer.bytes());
    TC_CUDA_CHECK(cudaMemcpyAsync(host.data(), d.alloc_begin(), host.size(), cudaMemcpyDeviceToHost, s));
    TC_CUDA_CHECK(cudaStreamSynchronize(s));
    outs.push_back(std::move(host));
  }
  for (size_t i = 1; i < outs.size(); ++i)
    EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), outs[0].size()), 0)
        << "run " << i << " (" << kNames[sums[i]] << ") differs from the reduce kernel's first";
  TC_CUDA_CHECK(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, FusedReduce,
    ::testing::Values(ReducePair{"bf16", 128, 4096, 7168, 1, DType::kBF16, false, 1.0f, 1.0f, 0, 3, 0, 0},
                      ReducePair{"c_alpha_beta_bias16", 129, 2052, 4104, 1, DType::kBF16, true, 0.5f, 2.0f, 2, 4, 0, 0},
                      ReducePair{"fp32_c_bias32", 65, 1000, 3000, 1, DType::kFP32, true, 1.0f, 0.5f, 1, 3, 0, 0},
                      ReducePair{"batched_odd_n", 64, 1001, 2048, 3, DType::kBF16, false, 2.0f, 1.0f, 1, 2, 0, 0},
                      ReducePair{"cluster_2x1", 255, 1100, 5000, 1, DType::kBF16, true, 1.0f, 1.0f, 0, 3, 2, 1},
                      ReducePair{"cluster_1x2", 255, 1100, 5000, 1, DType::kFP32, false, 1.0f, 1.0f, 0, 3, 1, 2},
                      ReducePair{"more_slices_than_k_steps", 7, 300, 136, 1, DType::kBF16, false, 1.0f, 1.0f, 0, 8, 0, 0},
                      ReducePair{"eight_slices_c_bias16", 255, 576, 7168, 1, DType::kBF16, true, 1.0f, 1.0f, 2, 8, 0, 0},
                      ReducePair{"four_slices_fp32_bias32", 333, 2112, 7168, 2, DType::kFP32, false, 1.0f, 1.0f, 1, 4, 0, 0}),
    [](const ::testing::TestParamInfo<ReducePair>& info) { return std::string(info.param.what); });

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
      if (!api::DeviceState::current().find_workspace(api::stream_key(s), 1)) return s;
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
