// Which group data a grouped problem cannot mean, entry by entry: what the kernel traps on
// (kernels/gemm_sm90/layout_fault.cuh) rather than return a result for sizes nobody asked for.
//
// The scheduler clamps every entry so that nothing is read or written out of bounds whatever the
// data, and the epilogue relies on the row-index contract below to find where an expert's rows end
// in a block; these rules say which data is wrong. Each entry is checked on its own (or with the
// one before it), so that the CTAs of a launch can split the entries between them; k-grouped sizes
// also have to fit the total K together (total_k_fits). Host and device: the CPU tests play them.
#pragma once

#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast {

// Entries of p's group data to check: every masked count, offset, row-index row or k-group size.
TC_HOST_DEVICE constexpr uint32_t entries_to_check(const GemmProblem& p) {
  switch (p.type) {
    case GemmType::kMGroupedContiguous:
      return p.contiguous_layout == ContiguousLayout::kOffsets ? p.num_groups + 1 : p.m;
    case GemmType::kMGroupedMasked:
    case GemmType::kKGroupedContiguous:
      return p.num_groups;
    default:
      return 0;
  }
}

// Whether entry i fails its rule:
//   masked:    0 <= masked_m[g] <= m (max_m);
//   offsets:   offsets[0] == 0, offsets[g - 1] <= offsets[g] <= m (the rows of A);
//   row index: -1 (padding) or an expert 0..num_groups-1, and every run of kMGroupedRowAlignment
//              rows (starting on a multiple of it) is one expert's rows, then padding: a row that
//              is not a run's first holds the row before's expert, or -1;
//   k-grouped: k_sizes[g] >= 0 and a multiple of kKGroupAlignment (and, all together,
//              total_k_fits).
TC_HOST_DEVICE constexpr bool entry_is_bad(const GemmProblem& p, uint32_t i) {
  const int32_t v = p.group_data[i];
  switch (p.type) {
    case GemmType::kMGroupedMasked:
      return v < 0 || static_cast<uint32_t>(v) > p.m;
    case GemmType::kKGroupedContiguous:
      return v < 0 || v % static_cast<int32_t>(kKGroupAlignment) != 0;
    case GemmType::kMGroupedContiguous:
      if (p.contiguous_layout == ContiguousLayout::kOffsets)
        return i == 0 ? v != 0 : v < p.group_data[i - 1] || v < 0 || static_cast<uint32_t>(v) > p.m;
      if (v < -1 || (v >= 0 && static_cast<uint32_t>(v) >= p.num_groups)) return true;
      return i % kMGroupedRowAlignment != 0 && v != -1 && v != p.group_data[i - 1];
    default:
      return false;
  }
}

// k-grouped: whether sizes that are each >= 0 fit the total K together.
TC_HOST_DEVICE constexpr bool total_k_fits(const GemmProblem& p, uint64_t sum_of_k_sizes) {
  return sum_of_k_sizes <= p.k;
}

}  // namespace tilecast
