#include "sweep_run.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <thread>

#include "api/warm.hpp"
#include "problem_desc.hpp"

namespace tilecast::bench {

void warm_sweep_kernels(const std::vector<BenchProblem>& problems, const std::vector<ProblemSweep>& sweeps,
                        const GemmConfig& base, const plan::DeviceFacts& facts) {
  std::vector<api::WarmItem> items;
  for (size_t i = 0; i < problems.size() && i < sweeps.size(); ++i)
    if (sweeps[i].skipped.empty())
      for (const GemmConfig& c : sweep_timed_configs(base, sweeps[i].sweep)) items.push_back({problem_desc(problems[i]), c});
  if (items.empty()) return;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  try {
    std::vector<api::WarmKernel> others;
    const std::vector<GemmKernelSpec> specs = api::kernels_to_warm(items, facts, &others);
    std::fprintf(stderr, "[sweep] compiling %zu kernels with %u threads (cached ones load at once)\n",
                 specs.size() + others.size(), threads);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<api::WarmedKernel> done = api::warm_jit_cache(
        specs, threads,
        [t0](size_t n, size_t total) {
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::fprintf(stderr, "\r%s", progress_text(n, total, s, "kernels").c_str());
          if (n == total) std::fputc('\n', stderr);
        },
        others);
    size_t spilling = 0;
    for (const api::WarmedKernel& k : done) spilling += k.spill_bytes > 0;
    if (spilling) std::fprintf(stderr, "[sweep] %zu of the kernels spill registers\n", spilling);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[sweep] filling the JIT cache failed (%s): each config compiles in its call\n", e.what());
  }
}

SweepProgress::SweepProgress(size_t total) : total_(total), start_(std::chrono::steady_clock::now()) {}

void SweepProgress::tick() {
  ++done_;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r%s   ", progress_text(done_, total_, s).c_str());
  std::fflush(stderr);
}

void SweepProgress::finish() { std::fputc('\n', stderr); }

}  // namespace tilecast::bench
