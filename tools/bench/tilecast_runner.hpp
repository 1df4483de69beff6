// The tilecast column: one call of tilecast::gemm (include/tilecast/gemm.hpp) on the workload's
// buffers. Built only where the `tilecast` library target exists (TILECAST_BENCH_HAVE_GEMM);
// otherwise, and for problem kinds the API does not cover yet, the call is unavailable and the
// row says why.
#pragma once

#include <string>
#include <vector>

#include "suites.hpp"
#include "tilecast/gemm.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace tilecast::bench {

struct TilecastCall {
  Enqueue run;              // writes w.d_tilecast; empty when unavailable
  std::string unavailable;  // why not, when run is empty
};

bool tilecast_linked();

// Compiles into the JIT cache every kernel the problems would launch under these configs; prints
// one line per kernel and returns the process exit code.
int warm_jit_cache(const std::vector<BenchProblem>& problems, const std::vector<GemmConfig>& configs,
                   unsigned threads);

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg);

}  // namespace tilecast::bench
