// The test-support library checked on its own: cuBLASLt's row-major mapping against the naive
// kernel on small odd shapes, the grouped and masked loops, poison and region checks that must
// catch a planted fault, and the comparison's bounds.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "tilecast_test/compare.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/naive_gemm.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

// A poisoned matrix with random values in its view (padding stays poisoned).
DeviceMatrix random_matrix(DType t, int64_t rows, int64_t cols, int64_t batch = 1, int64_t ld = 0,
                           int64_t batch_stride = 0) {
  DeviceMatrix m = make_matrix(t, rows, cols, batch, ld, batch_stride);
  poison(m);
  fill_uniform(m.view, fresh_seed());
  return m;
}

struct Case {
  int64_t m, n, k;
  int64_t batch = 1;
  int64_t pad = 0;         // extra elements of row padding on every operand
  int64_t batch_gap = 0;   // extra elements between batches
  DType out = DType::kBF16;
  bool with_c = false;
};

std::string name_of(const Case& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "m=%lld n=%lld k=%lld batch=%lld pad=%lld gap=%lld out=%s%s",
                (long long)c.m, (long long)c.n, (long long)c.k, (long long)c.batch,
                (long long)c.pad, (long long)c.batch_gap, dtype_name(c.out), c.with_c ? " +C" : "");
  return buf;
}

DeviceMatrix operand(DType t, int64_t rows, int64_t cols, const Case& c, bool random) {
  const int64_t ld = cols + c.pad;
  const int64_t step = c.batch > 1 ? rows * ld + c.batch_gap : 0;
  if (random) return random_matrix(t, rows, cols, c.batch, ld, step);
  DeviceMatrix m = make_matrix(t, rows, cols, c.batch, ld, step);
  poison(m);
  return m;
}

class CublasVsNaive : public ::testing::TestWithParam<Case> {};

TEST_P(CublasVsNaive, AgreesAndWritesOnlyTheView) {
  const Case c = GetParam();
  SCOPED_TRACE(name_of(c));
  CublasLt lt;
  DeviceMatrix a = operand(DType::kBF16, c.m, c.k, c, true);
  DeviceMatrix b = operand(DType::kBF16, c.n, c.k, c, true);
  DeviceMatrix cm = operand(c.out, c.m, c.n, c, true);
  DeviceMatrix d = operand(c.out, c.m, c.n, c, false);
  DeviceMatrix naive = operand(DType::kFP32, c.m, c.n, c, false);
  const MatrixView* cv = c.with_c ? &cm.view : nullptr;

  reference_gemm(lt, a.view, b.view, d.view, nullptr, cv);
  naive_gemm(a.view, b.view, naive.view, nullptr, cv);
  TC_CUDA_CHECK(cudaDeviceSynchronize());

  EXPECT_TRUE(all_written(d));
  EXPECT_TRUE(all_written(naive));
  // The naive result is the FP64-accumulated one, stored as fp32: against it, a bf16 output is off
  // by its rounding only, an fp32 output by FP32 accumulation only.
  const CompareResult r = compare(d.view, naive.view);
  std::printf("[ measured ] %s: %s\n", name_of(c).c_str(), r.summary().c_str());
  EXPECT_TRUE(close_enough(r, default_tolerance(c.out, DType::kFP32)));
  if (c.out == DType::kFP32) {
    EXPECT_LT(r.rel_fro_error, 1e-4) << "fp32 output should match the FP64 sum to ~1e-6..1e-5";
  } else {
    EXPECT_LT(r.max_abs_over_rms, 0.05);
  }
}

INSTANTIATE_TEST_SUITE_P(
    OddShapes, CublasVsNaive,
    ::testing::Values(Case{1, 64, 64}, Case{17, 33, 40}, Case{17, 33, 40, 1, 0, 0, DType::kFP32},
                      Case{64, 1, 72}, Case{3, 5, 7}, Case{1, 1, 1},
                      Case{129, 257, 200, 1, 8}, Case{129, 257, 200, 1, 8, 0, DType::kFP32, true},
                      Case{256, 128, 1024}, Case{200, 136, 4096, 1, 0, 0, DType::kFP32},
                      Case{33, 48, 64, 3}, Case{33, 48, 64, 3, 8, 40},
                      Case{33, 48, 64, 3, 8, 40, DType::kFP32, true},
                      Case{100, 72, 96, 1, 0, 0, DType::kBF16, true}));

// tilecast-bench's odd-size baselines time several of the heuristic's algorithms: each must
// compute the same product as the naive kernel, and a rank past the last is refused.
TEST(CublasAlgoRank, EveryRankComputesTheSameProduct) {
  constexpr int kRanks = 8;  // what the bench's "best of 8" variants ask for
  CublasLt lt;
  // n and k off a multiple of 8, rows padded to 16 bytes, as the bench's odd suite stores them.
  const int64_t m = 129, n = 257, k = 203;
  DeviceMatrix a = random_matrix(DType::kBF16, m, k, 1, aligned_ld(k, DType::kBF16));
  DeviceMatrix b = random_matrix(DType::kBF16, n, k, 1, aligned_ld(k, DType::kBF16));
  DeviceMatrix naive = make_matrix(DType::kFP32, m, n);
  naive_gemm(a.view, b.view, naive.view, nullptr, nullptr);
  int ranks = 0;
  for (int r = 0; r < kRanks; ++r) {
    DeviceMatrix d = make_matrix(DType::kBF16, m, n, 1, aligned_ld(n, DType::kBF16));
    poison(d);
    std::unique_ptr<LtMatmul> mm;
    try {
      mm = std::make_unique<LtMatmul>(lt, a.view, b.view, d.view, nullptr, LtEpilogue{}, GemmLayout::kNT, r);
    } catch (const CudaError& e) {
      EXPECT_NE(std::string(e.what()).find("none of rank " + std::to_string(r)), std::string::npos) << e.what();
      break;
    }
    mm->run(nullptr);
    TC_CUDA_CHECK(cudaDeviceSynchronize());
    const CompareResult res = compare(d.view, naive.view);
    std::printf("[ measured ] rank %d (%s): %s\n", r, mm->algo_summary().c_str(), res.summary().c_str());
    EXPECT_TRUE(all_written(d)) << "rank " << r;
    EXPECT_TRUE(close_enough(res, default_tolerance(DType::kBF16, DType::kFP32))) << "rank " << r;
    ++ranks;
  }
  EXPECT_GE(ranks, 1);
  EXPECT_THROW(LtMatmul(lt, a.view, b.view, naive.view, nullptr, LtEpilogue{}, GemmLayout::kNT, -1),
               std::invalid_argument);
}

// A transposed mapping would already fail on shapes with m != n; this pins exact small values.
TEST(CublasMapping, ExactSmallProduct) {
  CublasLt lt;
  DeviceMatrix a = make_matrix(DType::kBF16, 2, 3);  // [[1,2,3],[4,5,6]]
  DeviceMatrix b = make_matrix(DType::kBF16, 4, 3);  // rows: e0, e1, e2, (1,1,1)
  DeviceMatrix d = make_matrix(DType::kFP32, 2, 4);
  from_host(a.view, {1, 2, 3, 4, 5, 6});
  from_host(b.view, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  reference_gemm(lt, a.view, b.view, d.view, nullptr);
  const std::vector<float> got = to_host(d.view);
  const std::vector<float> want = {1, 2, 3, 6, 4, 5, 6, 15};
  EXPECT_EQ(got, want);
}

TEST(GroupedReference, OffsetsWithAnEmptyExpertMatchNaive) {
  CublasLt lt;
  const int64_t n = 72, k = 136;
  const std::vector<int64_t> offsets = {0, 40, 40, 97, 128};
  const int64_t rows = offsets.back(), groups = 4;
  DeviceMatrix a = random_matrix(DType::kBF16, rows, k);
  DeviceMatrix b = random_matrix(DType::kBF16, n, k, groups);
  DeviceMatrix d = make_matrix(DType::kBF16, rows, n);
  DeviceMatrix naive = make_matrix(DType::kFP32, rows, n);
  poison(d);
  poison(naive);
  const auto spans = spans_from_offsets(offsets);
  reference_grouped_gemm(lt, a.view, b.view, d.view, spans, nullptr);
  for (const GroupSpan& s : spans)
    naive_gemm(rows_of(a.view, s.row_begin, s.row_end), batch_of(b.view, s.group),
               rows_of(naive.view, s.row_begin, s.row_end), nullptr);
  EXPECT_TRUE(all_written(d));
  EXPECT_TRUE(matches(d.view, naive.view));
}

TEST(GroupedReference, MaskedLeavesInvalidRowsAlone) {
  CublasLt lt;
  const int64_t groups = 3, max_m = 64, n = 40, k = 96;
  const std::vector<int64_t> valid = {20, 0, 64};
  DeviceMatrix a = random_matrix(DType::kBF16, max_m, k, groups);
  DeviceMatrix b = random_matrix(DType::kBF16, n, k, groups);
  DeviceMatrix d = make_matrix(DType::kFP32, max_m, n, groups);
  DeviceMatrix naive = make_matrix(DType::kFP32, max_m, n, groups);
  poison(d);
  poison(naive);
  reference_grouped_gemm(lt, a.view, b.view, d.view, spans_from_masked(valid, max_m), nullptr);
  for (int64_t g = 0; g < groups; ++g)
    naive_gemm(rows_of(batch_of(a.view, g), 0, valid[g]), batch_of(b.view, g),
               rows_of(batch_of(naive.view, g), 0, valid[g]), nullptr);
  EXPECT_TRUE(all_written(check_written(d, d.view, valid)));
  EXPECT_TRUE(matches(d.view, naive.view, std::nullopt, nullptr, valid));
}

// k-grouped: groups of 0, 37, 64 and 5 columns (their starts 2-byte aligned: cuBLASLt or, where it
// has no algorithm, the naive kernel), written and accumulated, against naive group by group.
TEST(GroupedReference, KGroupedMatchesNaivePerGroup) {
  CublasLt lt;
  const int64_t m = 48, n = 40;
  const std::vector<int64_t> ks = {0, 37, 64, 5};
  const int64_t k = 37 + 64 + 5, groups = 4;
  DeviceMatrix a = random_matrix(DType::kBF16, m, k, 1, aligned_ld(k, DType::kBF16));
  DeviceMatrix b = random_matrix(DType::kBF16, n, k, 1, aligned_ld(k, DType::kBF16));
  for (bool accumulate : {false, true}) {
    DeviceMatrix d = random_matrix(DType::kFP32, m, n, groups);
    DeviceMatrix naive = make_matrix(DType::kFP32, m, n, groups);
    copy_convert(d.view, naive.view);  // C for the accumulating run
    const LtKGroupedMatmul loop(lt, a.view, b.view, d.view, ks, accumulate);
    loop.run(nullptr);
    int64_t base = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const MatrixView ng = batch_of(naive.view, g);
      if (ks[g] == 0) {
        if (!accumulate) TC_CUDA_CHECK(cudaMemset2D(ng.data, ng.ld() * 4, 0, ng.cols * 4, ng.rows));
        continue;
      }
      MatrixView ag = a.view, bg = b.view;
      ag.data = static_cast<uint16_t*>(a.view.data) + base;
      bg.data = static_cast<uint16_t*>(b.view.data) + base;
      ag.cols = bg.cols = ks[g];
      naive_gemm(ag, bg, ng, nullptr, accumulate ? &ng : nullptr);
      base += ks[g];
    }
    EXPECT_EQ(loop.launches(), 3u);
    std::printf("[ measured ] k-grouped reference: %zu of 3 groups by the naive kernel\n", loop.naive_groups());
    EXPECT_TRUE(matches(d.view, naive.view)) << (accumulate ? "accumulating" : "writing");
  }
}

TEST(GroupedReference, RowIndexSpans) {
  const std::vector<int32_t> experts = {0, 0, -1, -1, 2, 2, 2, 1, -1};
  const auto spans = spans_from_row_index(experts);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].row_begin, 0); EXPECT_EQ(spans[0].row_end, 2); EXPECT_EQ(spans[0].group, 0);
  EXPECT_EQ(spans[1].row_begin, 4); EXPECT_EQ(spans[1].row_end, 7); EXPECT_EQ(spans[1].group, 2);
  EXPECT_EQ(spans[2].row_begin, 7); EXPECT_EQ(spans[2].row_end, 8); EXPECT_EQ(spans[2].group, 1);
}

// --- poison and region checks ----------------------------------------------------------------

TEST(Poison, FillWritesExactlyTheView) {
  for (DType t : {DType::kBF16, DType::kFP32}) {
    DeviceMatrix m = make_matrix(t, 37, 45, 2, 56, 37 * 56 + 24);
    poison(m);
    fill_uniform(m.view, fresh_seed());
    EXPECT_TRUE(all_written(m)) << dtype_name(t);
  }
}

TEST(Poison, CatchesAnUnwrittenElement) {
  DeviceMatrix m = make_matrix(DType::kBF16, 17, 33, 2, 40);
  poison(m);
  fill_uniform(m.view, fresh_seed());
  // Re-poison element (1, 5, 32): as if the kernel never wrote it.
  char* p = static_cast<char*>(m.view.data) + (1 * m.view.batch_step() + 5 * 40 + 32) * 2;
  poison(p, 1, DType::kBF16);
  const WriteCheck w = check_written(m);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.unwritten, 1);
  EXPECT_EQ(w.touched, 0);
  EXPECT_EQ(w.first_unwritten_b, 1);
  EXPECT_EQ(w.first_unwritten_r, 5);
  EXPECT_EQ(w.first_unwritten_c, 32);
  // And the comparison sees the poison as a NaN.
  DeviceMatrix ref = make_matrix(DType::kBF16, 17, 33, 2);
  fill_uniform(ref.view, 1);
  const CompareResult r = compare(m.view, ref.view);
  EXPECT_EQ(r.out_nonfinite, 1);
  EXPECT_FALSE(passes(r, Tolerance{1e9, 1e9}));
}

TEST(Poison, CatchesWritesIntoPaddingAndGuards) {
  DeviceMatrix m = make_matrix(DType::kFP32, 8, 10, 1, 16);
  poison(m);
  fill_uniform(m.view, fresh_seed());
  set_element(m.view, 0, 3, 12, 1.0f);  // row padding: column 12 of a 10-column row
  WriteCheck w = check_written(m);
  EXPECT_EQ(w.unwritten, 0);
  EXPECT_EQ(w.touched, 1);
  EXPECT_EQ(w.first_touched_offset, m.data_offset_elems() + 3 * 16 + 12);

  poison(m);
  fill_uniform(m.view, fresh_seed());
  const float one = 1.0f;  // one element before the matrix: the leading guard
  TC_CUDA_CHECK(cudaMemcpy(static_cast<float*>(m.view.data) - 1, &one, 4, cudaMemcpyHostToDevice));
  w = check_written(m);
  EXPECT_EQ(w.touched, 1);
  EXPECT_EQ(w.first_touched_offset, m.data_offset_elems() - 1);
}

TEST(Poison, SubRegionTreatsTheRestAsOutside) {
  DeviceMatrix m = make_matrix(DType::kBF16, 16, 8);
  poison(m);
  fill_uniform(rows_of(m.view, 4, 9), fresh_seed());
  EXPECT_TRUE(all_written(check_written(m, rows_of(m.view, 4, 9))));
  const WriteCheck whole = check_written(m);
  EXPECT_EQ(whole.unwritten, 16 * 8 - 5 * 8);
}

// --- random fill and comparison ---------------------------------------------------------------

TEST(Fill, FreshUniformSymmetricValues) {
  DeviceMatrix x = make_matrix(DType::kFP32, 256, 256);
  DeviceMatrix y = make_matrix(DType::kFP32, 256, 256);
  const uint64_t s1 = fresh_seed(), s2 = fresh_seed();
  EXPECT_NE(s1, s2);
  fill_uniform(x.view, s1);
  fill_uniform(y.view, s2);
  const std::vector<float> hx = to_host(x.view), hy = to_host(y.view);
  double sum = 0, sum2 = 0;
  size_t same = 0;
  for (size_t i = 0; i < hx.size(); ++i) {
    ASSERT_GE(hx[i], -1.0f);
    ASSERT_LT(hx[i], 1.0f);
    sum += hx[i];
    sum2 += double(hx[i]) * hx[i];
    same += hx[i] == hy[i];
  }
  const double n = static_cast<double>(hx.size());
  EXPECT_NEAR(sum / n, 0.0, 0.01);           // std of the mean: 0.577 / 256 = 0.0023
  EXPECT_NEAR(sum2 / n, 1.0 / 3.0, 0.01);    // variance of U(-1, 1)
  EXPECT_LT(same, hx.size() / 100);
  fill_uniform(y.view, s1);                   // same seed, same values
  EXPECT_EQ(to_host(y.view), hx);
}

TEST(Compare, CatchesOneWrongElementAndLocatesIt) {
  DeviceMatrix ref = random_matrix(DType::kFP32, 64, 80);
  DeviceMatrix out = make_matrix(DType::kBF16, 64, 80, 1, 88);
  poison(out);
  std::vector<float> v = to_host(ref.view);
  from_host(out.view, v);  // bf16 copy: rounding only
  CompareResult r = compare(out.view, ref.view);
  EXPECT_TRUE(close_enough(r, default_tolerance(DType::kBF16, DType::kFP32)));
  EXPECT_LT(r.rel_fro_error, 4e-3);  // half an ulp at most: 2^-9 relative

  set_element(out.view, 0, 40, 77, get_element(ref.view, 0, 40, 77) + 0.6f);  // ~1 RMS off
  r = compare(out.view, ref.view);
  EXPECT_FALSE(passes(r, default_tolerance(DType::kBF16, DType::kFP32))) << r.summary();
  EXPECT_EQ(r.worst_r, 40);
  EXPECT_EQ(r.worst_c, 77);
}

TEST(HostBf16, RoundTripAndRounding) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 1.0f / 256), 0x3F80);  // tie, to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3.0f / 256), 0x3F82);  // tie, to even (up)
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(kPoisonBF16)));
  float f;
  std::memcpy(&f, &kPoisonFP32, 4);
  EXPECT_TRUE(std::isnan(f));
}

}  // namespace
}  // namespace tilecast::test
