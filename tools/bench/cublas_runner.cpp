#include "cublas_runner.hpp"

#include <algorithm>
#include <cstdio>

#include "cublas_grouped.hpp"
#include "cublas_odd.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::bench {

CublasBaseline::CublasBaseline(test::CublasLt& lt, const BenchProblem& p, Workload& w) : problem_(p), w_(w) {
  if (p.kind != Kind::kDense && p.kind != Kind::kBatched) {
    try {
      grouped_ = std::make_shared<CublasGroupedBatched>(p, w);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cublasGemmGroupedBatchedEx left out: %s\n", e.what());
    }
  }
  const MatrixView* c = w.c_view();
  const MatrixView* c32 = w.c_check_view();
  if (p.kind == Kind::kDense || p.kind == Kind::kBatched) {
    test::LtEpilogue timed_epilogue, check_epilogue;
    timed_epilogue.bias = w.bias_vector();       // the output's dtype, as tilecast gets it
    check_epilogue.bias = w.bias_check_vector();  // FP32 for the FP32 reference
    auto mm = std::make_shared<test::LtMatmul>(lt, w.a.view, w.b.view, w.d_cublas.view, c, timed_epilogue, p.layout);
    auto ref =
        std::make_shared<test::LtMatmul>(lt, w.a.view, w.b.view, w.d_check.view, c32, check_epilogue, p.layout);
    plans_ = {mm, ref};
    variants_.push_back({"cublasLt", mm->algo_summary(), [mm](cudaStream_t s) { mm->run(s); }, "", ""});
    reference_ = [ref](cudaStream_t s) { ref->run(s); };
    if (has_odd_extents(p)) {
      try {
        odd_ = std::make_unique<OddSizeBaselines>(lt, p, w);
      } catch (const std::exception& e) {  // extra baselines only: the row itself goes on without them
        std::fprintf(stderr, "odd-size cuBLASLt variants left out: %s\n", e.what());
      }
    }
    return;
  }

  if (p.kind == Kind::kKGrouped) {
    auto loop = std::make_shared<test::LtKGroupedMatmul>(lt, w.a.view, w.b.view, w.d_cublas.view, w.k_sizes, p.with_c);
    auto ref = std::make_shared<test::LtKGroupedMatmul>(lt, w.a.view, w.b.view, w.d_check.view, w.k_sizes, p.with_c);
    k_loops_ = {loop, ref};
    variants_.push_back({"per-group loop", std::to_string(loop->launches()) + " cuBLASLt calls",
                         [loop](cudaStream_t s) { loop->run(s); }, "", ""});
    // The reference accumulates onto C's FP32 copy, afresh each time it runs.
    const MatrixView from = w.has_c ? w.c_check.view : MatrixView{}, to = w.d_check.view;
    const bool accumulate = p.with_c;
    reference_ = [ref, from, to, accumulate](cudaStream_t s) {
      if (accumulate) test::copy_convert(from, to, s);
      ref->run(s);
    };
    return;
  }

  auto loop = std::make_shared<test::LtGroupedMatmul>(lt, w.a.view, w.b.view, w.d_cublas.view, w.spans, c);
  auto ref = std::make_shared<test::LtGroupedMatmul>(lt, w.a.view, w.b.view, w.d_check.view, w.spans, c32);
  loops_ = {loop, ref};
  reference_ = [ref](cudaStream_t s) { ref->run(s); };
  std::string algo;
  const auto first = std::find_if(w.spans.begin(), w.spans.end(),
                                  [](const test::GroupSpan& s) { return s.row_end > s.row_begin; });
  if (first != w.spans.end()) {
    // The algorithm of the first expert's call (planned again only to name it).
    const MatrixView fa = test::flatten_batches(w.a.view), fd = test::flatten_batches(w.d_cublas.view);
    const MatrixView sub_c = c ? test::rows_of(test::flatten_batches(*c), first->row_begin, first->row_end)
                               : MatrixView{};
    algo = test::LtMatmul(lt, test::rows_of(fa, first->row_begin, first->row_end),
                          test::batch_of(w.b.view, first->group),
                          test::rows_of(fd, first->row_begin, first->row_end), c ? &sub_c : nullptr)
               .algo_summary() + " (first expert)";
  }
  variants_.push_back({"per-expert loop", algo, [loop](cudaStream_t s) { loop->run(s); }, "", ""});

  if (p.kind == Kind::kMGrouped &&
      std::all_of(p.group_rows.begin(), p.group_rows.end(), [&](int64_t r) { return r == p.m; })) {
    // Equal experts: the flat [groups*m, k] buffers seen as [groups, m, k] batches.
    auto as_batch = [&](const MatrixView& v) {
      MatrixView b = v;
      b.rows = p.m;
      b.batch = p.groups;
      b.batch_stride = p.m * v.ld();
      return b;
    };
    const MatrixView bc = c ? as_batch(*c) : MatrixView{};
    auto mm = std::make_shared<test::LtMatmul>(lt, as_batch(w.a.view), w.b.view,
                                               as_batch(w.d_cublas.view), c ? &bc : nullptr);
    plans_.push_back(mm);
    variants_.push_back({"strided batched", mm->algo_summary(), [mm](cudaStream_t s) { mm->run(s); }, "", ""});
  }
}

CublasBaseline::~CublasBaseline() = default;

void CublasBaseline::run_reference(cudaStream_t stream) {
  reference_(stream);
  if (grouped_) check_grouped_batched(stream);
  if (odd_) {
    try {
      for (BaselineVariant& v : odd_->checked_variants(stream)) variants_.push_back(std::move(v));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "odd-size cuBLASLt variants left out: %s\n", e.what());
    }
    odd_.reset();  // the variants own what they run on
  }
}

std::vector<BaselineBest> fastest_per_group(const std::vector<BaselineVariant>& variants,
                                            const std::vector<TimingStats>& times) {
  std::vector<BaselineBest> best;
  for (size_t i = 0; i < variants.size() && i < times.size(); ++i) {
    auto it = std::find_if(best.begin(), best.end(),
                           [&](const BaselineBest& b) { return b.variant->group == variants[i].group; });
    if (it == best.end()) best.push_back({&variants[i], times[i]});
    else if (times[i].median_us < it->t.median_us) *it = {&variants[i], times[i]};
  }
  return best;
}

void CublasBaseline::check_grouped_batched(cudaStream_t stream) {
  std::shared_ptr<CublasGroupedBatched> gb = std::move(grouped_);
  try {
    if (problem_.kind == Kind::kKGrouped && problem_.with_c) test::copy_convert(w_.c.view, w_.d_cublas.view, stream);
    gb->run(stream);
    const test::CompareResult r = test::compare(w_.d_cublas.view, w_.d_check.view, stream, w_.rows_per_batch);
    const test::Tolerance tol = test::default_tolerance(problem_.out, DType::kFP32);
    if (!test::passes(r, tol)) {
      std::fprintf(stderr, "cublasGemmGroupedBatchedEx left out: its output failed the check (%s)\n",
                   test::failure_reason(r, tol).c_str());
      return;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cublasGemmGroupedBatchedEx left out: %s\n", e.what());
    return;
  }
  variants_.push_back({"cublasGemmGroupedBatchedEx", std::to_string(gb->problems()) + " problems in one call",
                       [gb](cudaStream_t s) { gb->run(s); }, "", ""});
}

}  // namespace tilecast::bench
