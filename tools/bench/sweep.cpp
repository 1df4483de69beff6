#include "sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "problem_desc.hpp"

namespace tilecast::bench {
namespace {

// Multicast switches of one operand: as the caller set it, or the planner's default (on where the
// cluster has peers) and off.
std::vector<int> multicast_choices(int given, bool has_peers) {
  if (given != -1 || !has_peers) return {given};
  return {-1, 0};
}

// The companion launch: as the caller set it, else off and on where it exists (beside clusters of
// 4, never with split-K).
std::vector<int> companion_choices(int given, const ClusterShape& cs, uint32_t k_splits) {
  if (given != -1 || cs.size() != 4 || k_splits > 1) return {given};
  return {-1, 1};
}

// Ping-pong kernels: as the caller set it, else the planner's own choice and forced on (where
// they do not apply, pingpong=1 plans nothing and is passed over).
std::vector<int> pingpong_choices(int given) {
  if (given != -1) return {given};
  return {-1, 1};
}

// Swapped operands (swap_ab): as the caller set it, else both; where they do not apply (m > 64,
// another layout) swap_ab=1 plans nothing and is passed over.
std::vector<int> swap_choices(int given) {
  if (given != -1) return {given};
  return {0, 1};
}

// The overrides that make the planner emit exactly `p` (rank_plans with them has p first).
GemmConfig forcing(const plan::GemmPlan& p, const GemmConfig& base) {
  GemmConfig c = base;
  const GemmKernelSpec& k = p.main.kernel;
  c.block_m = k.block_m;
  c.block_n = k.block_n;
  c.cluster_m = k.cluster.m;
  c.cluster_n = k.cluster.n;
  c.k_splits = p.k_splits;  // 1 too: left at 0 the planner could split a forced tile
  if (!p.schedule.multicast_a) c.multicast_a = 0;
  if (!p.schedule.multicast_b) c.multicast_b = 0;
  if (p.companion) c.companion = 1;
  c.swap_ab = k.swap_ab ? 1 : 0;  // explicit: the auto rule could swap an unswapped tile's problem
  c.split_columns = k.split_columns ? 1 : 0;  // explicit: auto weighs both kinds of some tiles
  c.pingpong = k.pingpong ? 1 : 0;            // explicit both ways: the config names its kernel
  // Explicit both ways: the slices summed across a cluster, or by the reduce kernel.
  if (p.k_splits > 1) c.cluster_reduce = k.k_cluster > 1 ? 1 : 0;
  // Explicit: the planner picks a band for the plan it chooses only (src/plan/band_height.cpp), so
  // a candidate ranked behind it carries the default band, and forced alone it would be chosen and
  // get its own.
  c.swizzle = p.schedule.swizzle;
  return c;
}

// How a plan's K slices are summed.
enum class SliceSum { kUnsplit, kReduceKernel, kInGemm, kAcrossCluster };

// What kind of plan a config is: its tile height (block_m), whether its operands are swapped, its
// columns split between the consumer warpgroups or its tiles taken in turns, and how its K slices
// are summed.
using PlanKind = std::tuple<uint32_t, bool, bool, bool, SliceSum>;
PlanKind kind_of(const plan::GemmPlan& p) {
  const GemmKernelSpec& k = p.main.kernel;
  SliceSum sum = SliceSum::kReduceKernel;
  if (p.k_splits == 1) sum = SliceSum::kUnsplit;
  else if (k.k_cluster > 1) sum = SliceSum::kAcrossCluster;
  else if (k.fused_reduce) sum = SliceSum::kInGemm;
  return {k.block_m, k.swap_ab, k.split_columns, k.pingpong, sum};
}

// A kind whose cheapest config the model puts more than this many times above the cheapest of
// all is out of reach. The furthest above the cheapest it has put a kind that then ran fastest is
// 25% (a split summed across a cluster on 1x768x16384; bench/results/2026-12-02-h200-decode-splits.md);
// an unsplit kernel on a row that needs a split is estimated 5x over.
constexpr double kKindReach = 1.5;

// The first `limit` of `ranked` (the pick, then the model's cheapest), except that the cheapest
// config of every kind (kind_of) within kKindReach comes in before the others: where the model
// prefers one kind by a margin it gets wrong, the sweep still times the other. Run 2 of
// bench/results/2026-12-02-h200-tall-tiles.md timed 16 configs of 150x32768x512, 11 of them
// 192-row ones; on 1x1024x7168 no split summed across a cluster was among the 16 the model ranked
// first, and one ran 5% faster than the best of them (bench/results/2026-12-02-h200-decode-splits.md,
// runs G and H). The order stays the model's.
std::vector<SweepConfig> within_limit(std::vector<SweepConfig> ranked, size_t limit) {
  std::vector<bool> keep(ranked.size(), false);
  keep[0] = true;
  size_t kept = 1;
  std::set<PlanKind> kinds{kind_of(ranked[0].plan)};
  const double reach = kKindReach * std::min(ranked[0].plan.cost.total_us, ranked[1].plan.cost.total_us);
  for (size_t i = 1; i < ranked.size() && kept < limit && ranked[i].plan.cost.total_us <= reach; ++i)
    if (kinds.insert(kind_of(ranked[i].plan)).second) keep[i] = true, ++kept;
  for (size_t i = 1; i < ranked.size() && kept < limit; ++i)
    if (!keep[i]) keep[i] = true, ++kept;
  std::vector<SweepConfig> out;
  for (size_t i = 0; i < ranked.size(); ++i)
    if (keep[i]) out.push_back(std::move(ranked[i]));
  return out;
}

// The pick with serpentine K (k_serpentine=1, its own band), where the caller left it to the
// planner and it changes what runs: a static launch of more than one wave, of a kind that takes
// it (the planner refuses it beside a companion, for k-grouped GEMMs and with fused_reduce).
// Serpentine K is asked for only, never picked, until measured; the model of L2 puts it 30% under
// forward K's HBM reads on 8192^3 and 11% over on 4096x2112x7168 (src/plan/l2_reuse.cpp), a
// difference the cost's terms do not see (they count each operand's first touch), so timing it
// beside every pick is what decides.
std::optional<SweepConfig> serpentine_twin(const plan::GemmDesc& desc, const plan::DeviceFacts& facts,
                                           const GemmConfig& base, const plan::GemmPlan& pick) {
  if (base.k_serpentine != -1 || pick.main.kernel.dynamic_units || pick.main.kernel.k_serpentine) return std::nullopt;
  if (pick.cost.waves <= 1.0) return std::nullopt;  // one wave: no odd wave to reverse
  GemmConfig c = forcing(pick, base);
  c.k_serpentine = 1;
  c.swizzle = 0;  // serpentine K's own band (band_height plays the walk it makes)
  try {
    plan::GemmPlan p = plan::rank_plans(desc, facts, c).front();
    return SweepConfig{c, std::move(p), false, true};
  } catch (const Error&) {
    return std::nullopt;  // refused for this plan's kind
  }
}

}  // namespace

std::string plan_key(const plan::GemmPlan& p) {
  const GemmKernelSpec& k = p.main.kernel;
  std::ostringstream s;
  s << layout_name(k.layout) << " " << k.block_m << "x" << k.block_n << " st" << k.stages << " c" << k.cluster.m << "x"
    << k.cluster.n << " mc" << (p.schedule.multicast_a && k.cluster.n > 1 ? "A" : "-")
    << (p.schedule.multicast_b && k.cluster.m > 1 ? "B" : "-") << " x" << p.main.clusters
    << (k.dynamic_units ? " dyn" : "") << " split" << p.k_splits << " swz" << p.schedule.swizzle << " sms"
    << p.sm_budget << (k.swap_ab ? " swap-AB" : "") << (k.k_cluster > 1 ? " in-cluster" : "")
    << (k.split_columns ? " split-columns" : "") << (k.pingpong ? " ping-pong" : "")
    << (k.k_serpentine ? " serpentine" : "");
  if (p.companion)
    s << " + " << p.companion->clusters << "x(" << p.companion->kernel.cluster.m << "x" << p.companion->kernel.cluster.n
      << ")";
  return s.str();
}

Sweep sweep_configs(const plan::GemmDesc& desc, const plan::DeviceFacts& facts, const GemmConfig& base, size_t limit) {
  const plan::GemmPlan pick = plan::rank_plans(desc, facts, base).front();  // throws for a bad base

  std::vector<ClusterShape> clusters;
  if (base.cluster_m) clusters = {{base.cluster_m, base.cluster_n}};
  else clusters.assign(std::begin(kClusterShapes), std::end(kClusterShapes));

  std::vector<SweepConfig> all;
  std::set<std::string> seen;
  for (const ClusterShape& cs : clusters)
    for (int mca : multicast_choices(base.multicast_a, cs.n > 1))    // A is shared along N
      for (int mcb : multicast_choices(base.multicast_b, cs.m > 1))  // B is shared along M
        for (int companion : companion_choices(base.companion, cs, base.k_splits))
          for (int swap : swap_choices(base.swap_ab))
            for (int turns : pingpong_choices(base.pingpong)) {
              GemmConfig o = base;
              o.cluster_m = cs.m;
              o.cluster_n = cs.n;
              o.multicast_a = mca;
              o.multicast_b = mcb;
              o.companion = companion;
              o.swap_ab = swap;
              o.pingpong = turns;
              std::vector<plan::GemmPlan> ranked;
              try {
                ranked = plan::rank_plans(desc, facts, o);
              } catch (const Error&) {
                continue;  // nothing of this cluster fits (the SM budget, shared memory): not a config
              }
              for (plan::GemmPlan& p : ranked)
                if (seen.insert(plan_key(p)).second) all.push_back({forcing(p, base), std::move(p), false});
            }

  std::stable_sort(all.begin(), all.end(),
                   [](const SweepConfig& a, const SweepConfig& b) { return a.plan.cost.total_us < b.plan.cost.total_us; });
  const std::string pick_key = plan_key(pick);
  auto it = std::find_if(all.begin(), all.end(), [&](const SweepConfig& c) { return plan_key(c.plan) == pick_key; });
  if (it == all.end()) throw Error("sweep: the planner's pick (" + pick_key + ") is not among its own candidates");
  std::rotate(all.begin(), it, it + 1);
  all.front().heuristic_pick = true;

  Sweep s;
  s.total = all.size();
  if (limit && all.size() > limit) all = within_limit(std::move(all), limit);
  if (std::optional<SweepConfig> twin = serpentine_twin(desc, facts, base, pick)) {
    all.insert(all.begin() + 1, std::move(*twin));
    ++s.total;
  }
  s.configs = std::move(all);
  return s;
}

std::vector<ProblemSweep> plan_sweeps(const std::vector<BenchProblem>& problems, const GemmConfig& base, size_t limit,
                                      const plan::DeviceFacts& facts) {
  std::vector<ProblemSweep> out(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) {
    if (problems[i].host_time) {
      out[i].skipped = "the host suite times the enqueue of a cached call, not configs";
      continue;
    }
    try {
      out[i].sweep = sweep_configs(problem_desc(problems[i]), facts, base, limit);
    } catch (const Error& e) {
      out[i].skipped = std::string("planning failed: ") + e.what();
    }
  }
  return out;
}

std::vector<GemmConfig> sweep_timed_configs(const GemmConfig& base, const Sweep& s) {
  std::vector<GemmConfig> out{base};
  for (const SweepConfig& c : s.configs) out.push_back(c.config);
  return out;
}

double pick_gap(double pick_us, double best_us) { return best_us > 0 ? pick_us / best_us - 1.0 : 0.0; }

namespace {

std::string minutes_seconds(double s) {
  const long total = std::lround(std::max(0.0, s));
  char buf[32];
  if (total >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
  else std::snprintf(buf, sizeof buf, "%lds", total);
  return buf;
}

}  // namespace

std::string progress_text(size_t done, size_t total, double elapsed_s, const char* what) {
  char buf[128];
  const double pct = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  std::snprintf(buf, sizeof buf, "[sweep] %zu/%zu %s %3.0f%%  %s elapsed", done, total, what, pct,
                minutes_seconds(elapsed_s).c_str());
  std::string s = buf;
  if (done > 0 && done < total)
    s += ", ETA " + minutes_seconds(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done));
  return s;
}

std::string sweep_listing(const std::vector<BenchProblem>& problems, const GemmConfig& base, size_t limit,
                          const plan::DeviceFacts& facts) {
  const std::vector<ProblemSweep> sweeps = plan_sweeps(problems, base, limit, facts);
  std::ostringstream out;
  size_t timed = 0, total = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    out << "== " << problems[i].suite << " " << problems[i].label() << "\n";
    if (!sweeps[i].skipped.empty()) {
      out << "   no sweep: " << sweeps[i].skipped << "\n";
      continue;
    }
    std::istringstream lines(format_sweep(sweeps[i].sweep));
    for (std::string line; std::getline(lines, line);) out << "   " << line << "\n";
    timed += sweeps[i].sweep.configs.size();
    total += sweeps[i].sweep.total;
  }
  out << "sweep: " << timed << " configs to time (of " << total << " the planner can emit) over " << problems.size()
      << " problems, limit " << (limit ? std::to_string(limit) : std::string("none")) << " per problem\n";
  return out.str();
}

std::string format_sweep(const Sweep& s) {
  std::ostringstream out;
  out << "sweep: " << s.configs.size() << " of " << s.total
      << " configs, cheapest predicted first (the heuristic's pick first, then the pick with serpentine K where it "
         "applies; \"auto\" is timed beside them)\n";
  char line[96];
  for (size_t i = 0; i < s.configs.size(); ++i) {
    const SweepConfig& c = s.configs[i];
    std::snprintf(line, sizeof line, "%4zu %9.1f us  ", i + 1, c.plan.cost.total_us);
    const char* mark = c.heuristic_pick ? "  (pick)" : c.serpentine_twin ? "  (the pick, serpentine K)" : "";
    out << line << format_config(c.config) << mark << "\n";
    out << "                    " << c.plan.describe() << "\n";
  }
  return out.str();
}

}  // namespace tilecast::bench
