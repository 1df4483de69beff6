// The tilecast column: one call of tilecast::gemm (include/tilecast/gemm.hpp) or of a grouped
// call (include/tilecast/grouped.hpp) on the workload's buffers.
#pragma once

#include <string>

#include "suites.hpp"
#include "tilecast_test/compare.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast/gemm.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {

struct TilecastCall {
  Enqueue run;              // writes w.d_tilecast; empty when unavailable
  std::string unavailable;  // why not, when run is empty
  // Before a checked run: what D must hold first (a k-grouped call that accumulates adds onto C's
  // values; the poison the check starts from would make every element NaN). Empty: nothing.
  Enqueue reset;
};

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg);

// What one checked call found: its writes (guards and padding untouched) and its output against
// the reference, with the tolerance for the problem's output dtype; verified false without one.
struct CheckedCall {
  bool verified = false;
  test::WriteCheck written;
  test::CompareResult cmp;
  test::Tolerance tol;
  bool passed() const { return verified && written.ok() && test::passes(cmp, tol); }
};

// Poisons w.d_tilecast, resets it where the call needs, runs the call once and waits; then, with
// a reference in w.d_check, checks the output. Throws on a CUDA error.
CheckedCall run_checked(const TilecastCall& call, const BenchProblem& p, Workload& w, bool have_reference,
                        cudaStream_t stream);

}  // namespace tilecast::bench
