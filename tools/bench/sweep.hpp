// --sweep: every config the planner can emit for a problem, as GemmConfig overrides that force
// it, ranked by the cost model, so that a GPU run can time them all and say how far the
// heuristic's pick is from the best measured one (issue #14).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "suites.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::bench {

// Configs a sweep times per problem unless --sweep-limit says otherwise. The m4096 list at 48 is
// 7 x 49 configs (auto too) over 82 distinct kernels (multicast variants share one): about 25 s
// of NVRTC with 16 threads at the 4.5 s per kernel measured (bench/results/2026-12-01-h200-
// python.md), then 7 x 49 x 60 timed runs of 0.1-0.5 ms plus a 256 MiB flush each: a few
// minutes at most, inside one 10-minute device call.
inline constexpr size_t kDefaultSweepLimit = 48;

struct SweepConfig {
  GemmConfig config;  // the overrides that make the planner emit `plan`
  plan::GemmPlan plan;
  bool heuristic_pick = false;  // the planner's first choice for the caller's overrides
  // The pick with serpentine K (k_serpentine=1), listed second and timed beyond the limit: the
  // planner never takes it by itself, and the model's costs cannot tell it from the pick.
  bool serpentine_twin = false;
};

struct Sweep {
  std::vector<SweepConfig> configs;  // the pick first (then its serpentine twin), then cheapest predicted first
  size_t total = 0;                  // distinct plans before the limit (the twin included)
};

// The planner's candidates over every cluster shape, with each multicast operand that has peers
// in the cluster switched off in turn, and the companion launch for clusters of 4, each set of
// overrides ranked by plan::rank_plans (tile shapes and split-K counts are its enumeration).
// Fields `base` sets are kept: the sweep varies only what the caller left to the planner. Where
// the caller left k_serpentine to it and the pick is a static launch of more than one wave, the
// pick with serpentine K comes second (SweepConfig::serpentine_twin), beyond the limit.
// Duplicate plans (an override that changes nothing) are listed once. limit 0: no limit.
// Throws tilecast::Error when the planner refuses `base` itself.
Sweep sweep_configs(const plan::GemmDesc& desc, const plan::DeviceFacts& facts, const GemmConfig& base,
                    size_t limit);

// The plan's identity, without the estimate: two plans with the same key launch the same kernels
// on the same grids with the same schedule.
std::string plan_key(const plan::GemmPlan& p);

// A problem's sweep, or why it has none: host-suite problems time the enqueue only, and a problem
// the planner refuses has no configs.
struct ProblemSweep {
  Sweep sweep;
  std::string skipped;  // non-empty: why there is no sweep
};
std::vector<ProblemSweep> plan_sweeps(const std::vector<BenchProblem>& problems, const GemmConfig& base, size_t limit,
                                      const plan::DeviceFacts& facts);

// What a GPU run times for one problem: `base` itself (the heuristic's own call, "auto" unless
// --config set fields) first, then the sweep's configs in order.
std::vector<GemmConfig> sweep_timed_configs(const GemmConfig& base, const Sweep& s);

// Issue #14's target: the heuristic's pick within 5% of the best config measured.
inline constexpr double kSweepTargetGap = 0.05;
// pick time / best time - 1 (0: the pick is the best).
double pick_gap(double pick_us, double best_us);

// "[sweep] 37/168 configs  22%  1m02s elapsed, ETA 3m40s" (no ETA before the first config).
std::string progress_text(size_t done, size_t total, double elapsed_s, const char* what = "configs");

// What --sweep --plan-only prints: each problem's header and format_sweep, then the total.
std::string sweep_listing(const std::vector<BenchProblem>& problems, const GemmConfig& base, size_t limit,
                          const plan::DeviceFacts& facts);

// What --sweep --plan-only prints for one problem: each config with its rank, predicted time and
// plan.
std::string format_sweep(const Sweep& s);

}  // namespace tilecast::bench
