// `--suite mcast`: what multicast is worth, measured (issue #14). For each problem, one tile and
// every cluster shape it allows (and the same clusters with multicast off, and the clusters of 4
// with the companion launch), each against cuBLASLt in the same run:
//   - median time with the L2 flushed before every call (the bench's method, timing.hpp);
//   - sustained: a >= 2 s back-to-back loop (energy.hpp), its time per GEMM, mean SM clock,
//     joules per GEMM from NVML's energy counter and average watts, under the power cap;
//   - the traffic model's L2 -> SM bytes for the plan that ran (src/plan/traffic.cpp, through
//     the planner's cost), which scripts/multicast_report.py sets beside Nsight Compute's counts.
// `--ncu-pass` runs each config once instead (no timing, no energy), for ncu to count: per
// problem, inside an NVTX range named kProfileRange, each call after a marker kernel
// (test::copy_convert on a tiny buffer, which a dense run without C launches nowhere else) and
// one more marker after the last call, so that the report can cut the profiled kernels into
// calls: the JSON row with `profile_index` i is the i-th call.
// `--sustained` measures the --shape and --suite problems (any kind, with --config) the same way,
// one config each; cuBLAS's row is the fastest of the cuBLAS column's variants (for grouped
// problems a loop over groups, a strided batch, cuBLAS's grouped batched call), by the flushed
// median, and only it runs the sustained loop.
#pragma once

#include <vector>

#include "multicast_configs.hpp"
#include "multicast_output.hpp"
#include "options.hpp"
#include "report.hpp"
#include "suites.hpp"

namespace tilecast::bench {

// Runs the suite (or, with --ncu-pass, the profiling pass) on the GPU; writes --json and
// --results-md. Returns the exit code as run_on_gpu does.
int run_multicast_worth(const Options& o, const std::vector<BenchProblem>& problems, RunInfo& info);

// Whether the options ask for this mode: --suite mcast, --ncu-pass or --sustained.
bool wants_multicast_worth(const Options& o);

}  // namespace tilecast::bench
