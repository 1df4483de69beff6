// The cuBLAS column: cuBLASLt (the heuristic's first algorithm, as torch uses it) on the same
// buffers. Dense and batched problems are one call; m-grouped problems are timed as a loop over
// experts and, where every expert has the same rows, as one strided-batched call (the faster one
// is the baseline); masked problems as a loop over experts' valid rows; k-grouped problems as a
// loop over groups, each accumulating into its D in place (beta 1) where the problem accumulates.
// Grouped problems also get cuBLAS's grouped batched GEMM (cublas_grouped.hpp) as a variant, once
// its output has matched the reference (a baseline that computed something else would be timed
// for nothing).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "suites.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {

struct BaselineVariant {
  std::string name;  // "cublasLt", "per-expert loop", "strided batched"
  std::string algo;  // cuBLASLt's algorithm ids (first call of a loop)
  Enqueue run;       // writes the problem's output dtype into w.d_cublas (or its own buffer)
  // What the variant competes for: "" the cuBLAS column (the fastest of those variants is what
  // users get); else the extra row of that name (cublas_odd.hpp), whose fastest variant is kept.
  std::string group;
  std::string role;  // that extra row's Row::baseline_role
};

// The fastest variant of each group by median time (times[i] is variants[i]'s), in the order
// the groups first appear.
struct BaselineBest {
  const BaselineVariant* variant = nullptr;
  TimingStats t;
};
std::vector<BaselineBest> fastest_per_group(const std::vector<BaselineVariant>& variants,
                                            const std::vector<TimingStats>& times);

class CublasGroupedBatched;
class OddSizeBaselines;

class CublasBaseline {
 public:
  CublasBaseline(test::CublasLt& lt, const BenchProblem& p, Workload& w);
  ~CublasBaseline();
  const std::vector<BaselineVariant>& variants() const { return variants_; }
  // The same computation with an FP32 output into w.d_check: the verification reference. The first
  // run also checks the grouped batched variant and the odd-size ones (cublas_odd.hpp) against it
  // and adds those that matched to variants().
  void run_reference(cudaStream_t stream);

 private:
  void check_grouped_batched(cudaStream_t stream);
  const BenchProblem& problem_;
  Workload& w_;
  std::shared_ptr<CublasGroupedBatched> grouped_;  // until checked
  std::unique_ptr<OddSizeBaselines> odd_;           // until checked
  std::vector<std::shared_ptr<test::LtMatmul>> plans_;
  std::vector<std::shared_ptr<test::LtGroupedMatmul>> loops_;
  std::vector<std::shared_ptr<test::LtKGroupedMatmul>> k_loops_;
  std::vector<BaselineVariant> variants_;
  Enqueue reference_;
};

}  // namespace tilecast::bench
