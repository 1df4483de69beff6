// What the planner is told of a GEMM (GemmDesc): built from sizes, and where its rows start.
#include <algorithm>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {
namespace {
// Where the planner takes a k-group's first column to start: 16 bytes into a line, as the
// surrogate's even split of K puts them (4 groups of 4216 columns on the kgrouped suite's 16864:
// 8432 bytes apart, 7 in 8 starts off a line).
constexpr uint8_t kKGroupStartAlignment = 16;

}  // namespace

uint8_t row_alignment(uint64_t base, uint64_t row_stride_bytes, uint64_t batch_stride_bytes) {
  uint64_t a = kL2LineBytes;
  for (uint64_t v : {base, row_stride_bytes, batch_stride_bytes})
    while (a > 1 && v % a != 0) a /= 2;
  return static_cast<uint8_t>(a);
}

uint8_t box_row_alignment(const GemmDesc& d, bool kernel_a, bool swap) {
  const uint8_t rows = kernel_a != swap ? d.a_row_alignment : d.b_row_alignment;
  return d.problem.type == GemmType::kKGroupedContiguous ? std::min(rows, kKGroupStartAlignment) : rows;
}

void assume_padded_rows(GemmDesc& d, uint32_t row_bytes) {
  const GemmProblem& p = d.problem;
  constexpr uint64_t kTmaStrideBytes = 16, kBF16Bytes = 2;
  const uint64_t pad = std::max<uint64_t>(row_bytes, kTmaStrideBytes);
  const auto padded = [pad](uint64_t elements) { return row_alignment(0, (elements * kBF16Bytes + pad - 1) / pad * pad, 0); };
  // A stored row runs along K, or along M (N) where the layout stores A (B) MN-major.
  d.a_row_alignment = padded(a_mn_major(d.layout) ? p.m : p.k);
  d.b_row_alignment = padded(b_mn_major(d.layout) ? p.n : p.k);
}

GemmDesc dense_desc(int64_t m, int64_t n, int64_t k, int64_t batch, DType out, bool has_c, GemmLayout layout) {
  GemmDesc d;
  d.layout = layout;
  d.problem.type = batch > 1 ? GemmType::kBatched : GemmType::kNormal;
  d.problem.m = static_cast<uint32_t>(m);
  d.problem.n = static_cast<uint32_t>(n);
  d.problem.k = static_cast<uint32_t>(k);
  d.problem.num_groups = static_cast<uint32_t>(batch);
  d.out = out;
  d.has_c = has_c;
  return d;
}

GemmDesc mgrouped_contiguous_desc(ContiguousLayout layout, int64_t rows, int64_t n, int64_t k, int64_t experts,
                                  DType out) {
  GemmDesc d = dense_desc(rows, n, k, 1, out, false);
  d.problem.type = GemmType::kMGroupedContiguous;
  d.problem.contiguous_layout = layout;
  d.problem.num_groups = static_cast<uint32_t>(experts);
  return d;
}

GemmDesc mgrouped_masked_desc(int64_t max_m, int64_t n, int64_t k, int64_t experts, int64_t expected_m, DType out) {
  GemmDesc d = dense_desc(max_m, n, k, experts, out, false);
  d.problem.type = GemmType::kMGroupedMasked;
  d.expected_m = static_cast<uint32_t>(expected_m);
  return d;
}

GemmDesc kgrouped_desc(int64_t m, int64_t n, int64_t k, int64_t groups, DType out, bool accumulate) {
  GemmDesc d = dense_desc(m, n, k, groups, out, accumulate);
  d.problem.type = GemmType::kKGroupedContiguous;
  return d;
}

}  // namespace tilecast::plan
