#include "problem_desc.hpp"

namespace tilecast::bench {

namespace {

plan::GemmDesc sized_desc(const BenchProblem& p) {
  if (p.kind == Kind::kDense || p.kind == Kind::kBatched) {
    plan::GemmDesc d = plan::dense_desc(p.m, p.n, p.k, p.groups, p.out, p.with_c, p.layout);
    d.has_bias = p.with_bias;
    d.bias_type = p.out;  // the bench's bias has the output's dtype (workload.cpp)
    return d;
  }
  switch (p.kind) {
    case Kind::kMGrouped:  // expert offsets over every expert's rows
      return plan::mgrouped_contiguous_desc(ContiguousLayout::kOffsets, p.rows_total(), p.n, p.k, p.groups, p.out);
    case Kind::kMasked: return plan::mgrouped_masked_desc(p.m, p.n, p.k, p.groups, p.expected_m, p.out);
    case Kind::kKGrouped: return plan::kgrouped_desc(p.m, p.n, p.k, p.groups, p.out, p.with_c);
    default: return plan::dense_desc(p.m, p.n, p.k, p.groups, p.out, p.with_c);
  }
}

}  // namespace

plan::GemmDesc problem_desc(const BenchProblem& p) {
  plan::GemmDesc d = sized_desc(p);
  plan::assume_padded_rows(d, p.row_bytes);  // as the workload pads A's and B's rows (workload.cpp)
  return d;
}

}  // namespace tilecast::bench
