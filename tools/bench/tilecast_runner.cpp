#include "tilecast_runner.hpp"

#include "tilecast/device/kernels/gemm_sm90/spec.cuh"
#include "tilecast/grouped.hpp"
#include "tilecast_test/cuda_check.hpp"

namespace tilecast::bench {

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg) {
  TilecastCall call;
  // swap_ab=1 over a whole suite: the rows it cannot swap say so instead of failing.
  if (cfg.swap_ab == 1 && (p.m > kSwapMaxM || p.layout != GemmLayout::kNT ||
                           (p.kind != Kind::kDense && p.kind != Kind::kBatched))) {
    call.unavailable = "swap_ab=1 is for m <= 64, NT, dense and batched GEMMs";
    return call;
  }
  const MatrixView a = w.a.view, b = w.b.view, d = w.d_tilecast.view;
  const int32_t* group = w.group_ptr();
  switch (p.kind) {
    case Kind::kDense:
    case Kind::kBatched: {
      const bool has_c = w.has_c;
      const MatrixView c = has_c ? w.c.view : MatrixView{};
      const VectorView bias = w.bias_vector();
      const GemmLayout layout = p.layout;
      call.run = [a, b, d, c, has_c, bias, cfg, layout](cudaStream_t s) {
        GemmEpilogue e;
        e.c = has_c ? &c : nullptr;
        e.bias = bias;
        gemm(layout, a, b, d, s, e, cfg);
      };
      break;
    }
    case Kind::kMGrouped: {
      const GroupedLayout layout{ContiguousLayout::kOffsets, group};
      call.run = [a, b, d, layout, cfg](cudaStream_t s) { gemm_mgrouped_contiguous(a, b, d, layout, s, cfg); };
      break;
    }
    case Kind::kMasked: {
      const int64_t expected = p.expected_m;
      call.run = [a, b, d, group, expected, cfg](cudaStream_t s) { gemm_mgrouped_masked(a, b, d, group, expected, s, cfg); };
      break;
    }
    case Kind::kKGrouped: {
      const bool accumulate = p.with_c;
      call.run = [a, b, d, group, accumulate, cfg](cudaStream_t s) { gemm_kgrouped(a, b, d, group, accumulate, s, cfg); };
      if (accumulate) {
        const MatrixView c = w.c.view;
        call.reset = [c, d](cudaStream_t s) { test::copy_convert(c, d, s); };
      }
      break;
    }
  }
  return call;
}

CheckedCall run_checked(const TilecastCall& call, const BenchProblem& p, Workload& w, bool have_reference,
                        cudaStream_t stream) {
  test::poison(w.d_tilecast, stream);
  if (call.reset) call.reset(stream);
  call.run(stream);
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  TC_CUDA_CHECK(cudaGetLastError());
  CheckedCall c;
  if (!have_reference) return c;
  c.verified = true;
  c.written = test::check_written(w.d_tilecast, w.d_tilecast.view, w.rows_per_batch, stream);
  c.cmp = test::compare(w.d_tilecast.view, w.d_check.view, stream, w.rows_per_batch);
  c.tol = test::default_tolerance(p.out, DType::kFP32);
  return c;
}

}  // namespace tilecast::bench
