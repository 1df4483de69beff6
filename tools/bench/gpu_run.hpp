// The measured run: for each problem, inputs, the cuBLAS baseline (which also computes the
// verification reference), then for each tilecast config a verified call and its timing.
#pragma once

#include <vector>

#include "options.hpp"
#include "report.hpp"

namespace tilecast::bench {

// Prints rows as they are measured; writes --json and --results-md at the end. Returns the
// process exit code: 0, or 1 when a tilecast result failed verification or the CUDA context
// was lost.
int run_on_gpu(const Options& o, const std::vector<BenchProblem>& problems, RunInfo& info);

}  // namespace tilecast::bench
