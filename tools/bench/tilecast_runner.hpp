// The tilecast column: one call of tilecast::gemm (include/tilecast/gemm.hpp) or of a grouped
// call (include/tilecast/grouped.hpp) on the workload's buffers.
#pragma once

#include <string>

#include "suites.hpp"
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

}  // namespace tilecast::bench
