// What the CUDA-graph tests share (test_gemm_graphs, test_gemm_split_k): a case's buffers, which
// a graph replays over with new inputs, the capture itself, and the check of every replay
// against cuBLASLt.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "gemm_case.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {

// A case's operands, C (in D's dtype and in FP32 for the reference), D with padded rows (so that
// a write past a row shows) and the reference.
struct GraphBuffers {
  DeviceMatrix a, b, c, c32, d, ref;
  explicit GraphBuffers(const GemmCase& g)
      : a(make_matrix(DType::kBF16, g.m, g.k)),
        b(make_matrix(DType::kBF16, g.n, g.k)),
        c(make_matrix(g.out, g.m, g.n, 1, aligned_ld(g.n, g.out))),  // TMA-legal rows for a ragged n
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

// Replays `exec` `replays` times on `stream`, each over new inputs in x, and checks each D
// against cuBLASLt: D wholly written, nothing past it, and within the tolerance.
inline ::testing::AssertionResult replays_match(cudaGraphExec_t exec, GraphBuffers& x, bool with_c, int replays,
                                                cudaStream_t stream) {
  static CublasLt lt;
  for (int replay = 0; replay < replays; ++replay) {
    x.refill(stream, with_c);
    TC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    reference_gemm(lt, x.a.view, x.b.view, x.ref.view, stream, with_c ? &x.c32.view : nullptr);
    if (::testing::AssertionResult r = all_written(x.d, stream); !r) return r << " (replay " << replay << ")";
    if (::testing::AssertionResult r = matches(x.d.view, x.ref.view, std::nullopt, stream); !r)
      return r << " (replay " << replay << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tilecast::test
