// One grouped GEMM (tilecast/grouped.hpp) checked against a per-group cuBLASLt loop on fresh
// random data, the output poisoned first: every row the call owns written and close to the
// reference, every other row (the next expert's, masked rows past a count, padding rows, spare
// rows past the last expert, row padding past n, the guards) still holding the poison.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "tilecast/grouped.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::test {

enum class GroupedForm {
  kOffsets,   // m-grouped contiguous, expert offsets (num_groups + 1 int32)
  kRowIndex,  // m-grouped contiguous, DeepGEMM's expert of each row (-1: padding)
  kMasked,    // m-grouped masked
  kKGrouped,  // k-grouped contiguous
};

struct GroupedCase {
  const char* what = "";
  GroupedForm form = GroupedForm::kOffsets;
  // Rows of each expert (m-grouped, masked), or K of each group (k-grouped).
  std::vector<int64_t> sizes;
  int64_t n = 0;
  int64_t k = 0;     // m-grouped and masked: K of every expert; k-grouped: the total (0: the sum of sizes)
  int64_t rows = 0;  // offsets: rows of A and D (0: the sum of sizes); masked: max_m; k-grouped: m
  int64_t expected_m = 0;   // masked (0: the mean of sizes, at least 1)
  DType out = DType::kBF16;
  bool accumulate = false;  // k-grouped
  GemmConfig config{};

  std::string name() const;  // gtest-safe: what, form, sizes summary, dtype, config
};

// What the planner sees of this case (to compile its kernels ahead of the GPU run).
plan::GemmDesc desc_of(const GroupedCase& c);

// The buffers of one case on one stream: inputs filled once (fresh seeds), the group data on the
// device, D and the FP32 reference. A CUDA-graph test keeps one and replays the captured call with
// new sizes in the same device array (set_sizes), checking each replay.
class GroupedRun {
 public:
  GroupedRun(const GroupedCase& c, cudaStream_t stream);
  ~GroupedRun();
  GroupedRun(const GroupedRun&) = delete;
  GroupedRun& operator=(const GroupedRun&) = delete;

  // New group sizes for the same buffers (masked counts up to max_m, offsets within the rows, K
  // sizes within the total), copied into the same device array on the stream.
  void set_sizes(const std::vector<int64_t>& sizes);
  // D poisoned (or, accumulating, set to its C again) before a call.
  void reset_output();
  void call();     // the tilecast call on the stream: capturable once prepared
  void prepare();  // tilecast::prepare_* with the same arguments
  // Synchronises; then D against the reference of the current sizes, and which rows were written.
  ::testing::AssertionResult check();

 private:
  struct Impl;
  Impl* impl_;
};

// One call of the case on a fresh GroupedRun, checked.
::testing::AssertionResult run_grouped_case(const GroupedCase& c, cudaStream_t stream);

}  // namespace tilecast::test
