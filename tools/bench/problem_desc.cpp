#include "problem_desc.hpp"

namespace tilecast::bench {

plan::GemmDesc problem_desc(const BenchProblem& p) {
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

}  // namespace tilecast::bench
