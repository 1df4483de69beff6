// The GPU side of --sweep around gpu_run.cpp's loop: the JIT cache filled for every config first
// (in parallel: one NVRTC compile is seconds, and a sweep has hundreds), then a progress line on
// stderr as configs are checked and timed, and the sweep's section of the report (report.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "sweep.hpp"

namespace tilecast::bench {

// Compiles every kernel the sweeps' timed configs launch (base included; planned on `facts`, as
// the calls will be) into the JIT disk cache
// with one thread per core, a progress line on stderr. A kernel that fails here fails again in
// its config's call, which reports it; so this only warns.
void warm_sweep_kernels(const std::vector<BenchProblem>& problems, const std::vector<ProblemSweep>& sweeps,
                        const GemmConfig& base, const plan::DeviceFacts& facts);

// Configs done / total with the elapsed time and an ETA, redrawn on one stderr line.
class SweepProgress {
 public:
  explicit SweepProgress(size_t total);
  void tick();    // one more config checked
  void finish();  // ends the line
 private:
  size_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tilecast::bench
