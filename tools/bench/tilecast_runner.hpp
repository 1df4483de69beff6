// The tilecast column: one call of tilecast::gemm (include/tilecast/gemm.hpp) on the workload's
// buffers; for problem kinds the API does not cover yet the call is unavailable and the row says
// why.
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
};

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg);

}  // namespace tilecast::bench
