// More cuBLASLt baselines for dense and batched NT problems whose n or k is not a multiple of 8
// (issue #14: cuBLASLt runs 5-7x slower there). The cuBLAS column keeps what users get (the
// heuristic's first algorithm on the extents as given); these variants, each on its own copy of
// the inputs made outside the timed region, say what a careful user gets and what makes the
// difference:
//   careful     "padded extents, best of 8": n and k rounded up to 8, the inputs copied into
//               zero-filled buffers, the heuristic's first 8 algorithms each timed, the fastest kept
//   diagnostic  "padded extents, first algo": the same buffers, the heuristic's first algorithm
//               (padding alone, without the search)
//               "odd extents, best of 8": the extents as given (rows padded to 16 bytes, as the
//               cuBLAS column's), the first 8 algorithms (the search alone, without padding)
//               "odd extents, tight rows": the extents as given with ld = the row's length, rows
//               starting 2-byte aligned (what a contiguous torch tensor hands cuBLAS)
//               "n padded only", "k padded only": where both are odd, which one matters
// Every variant's output is checked against the FP32 reference before it is timed.
#pragma once

#include <memory>
#include <vector>

#include "cublas_runner.hpp"

namespace tilecast::bench {

// The heuristic's algorithms a "best of" variant times (issue #14's "top few").
inline constexpr int kOddBestOfAlgorithms = 8;
class OddSizeBaselines {
 public:
  // Allocates the copies and plans every variant; nothing runs yet.
  OddSizeBaselines(test::CublasLt& lt, const BenchProblem& p, Workload& w);
  ~OddSizeBaselines();
  // Copies the inputs into the padded buffers, runs each variant once on a poisoned output and
  // compares it with w.d_check (which must hold the reference by then); returns the variants that
  // matched (the others are reported on stderr and left out).
  std::vector<BaselineVariant> checked_variants(cudaStream_t stream);

 private:
  struct Operands;
  struct Candidate;
  const BenchProblem& problem_;
  Workload& w_;
  std::vector<std::shared_ptr<Operands>> operands_;
  std::vector<Candidate> candidates_;
};

}  // namespace tilecast::bench
