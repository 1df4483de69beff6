#include "sweep_report.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include "sweep.hpp"

namespace tilecast::bench {
namespace {

struct ProblemOutcome {
  const Row* pick = nullptr;  // the heuristic's own call
  const Row* best = nullptr;  // the fastest row that ran and passed its check, the pick included
  const Row* forced_pick = nullptr;  // the pick's plan forced by its config: auto's twin
  const Row* serpentine = nullptr;   // the pick's plan with serpentine K, where the sweep had it
  std::vector<const Row*> configs;
  size_t failed = 0, errors = 0;

  bool has_gap() const { return pick && best && passed(*pick); }
  double gap() const { return pick_gap(pick->tilecast.t.median_us, best->tilecast.t.median_us); }
  bool within_target() const { return has_gap() && gap() <= kSweepTargetGap; }
  static bool passed(const Row& r) { return r.tilecast.ran && r.verified && r.verify_pass; }
};

std::map<size_t, ProblemOutcome> outcomes(const std::vector<Row>& rows) {
  std::map<size_t, ProblemOutcome> out;
  for (const Row& r : rows)
    if (r.sweep) out[r.problem_index];
  for (const Row& r : rows) {
    auto it = out.find(r.problem_index);
    if (it == out.end() || !r.baseline_role.empty()) continue;  // odd-size baselines repeat the pick
    ProblemOutcome& o = it->second;
    if (r.sweep) {
      o.configs.push_back(&r);
      if (r.heuristic_pick) o.forced_pick = &r;
      if (r.serpentine_twin) o.serpentine = &r;
      o.failed += r.verified && !r.verify_pass;
      o.errors += r.tilecast_status == "error";
    } else if (!o.pick) {
      o.pick = &r;
    }
    if (ProblemOutcome::passed(r) && (!o.best || r.tilecast.t.median_us < o.best->tilecast.t.median_us)) o.best = &r;
  }
  return out;
}

std::string us(const Row* r) {
  if (!r || !r->tilecast.ran) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", r->tilecast.t.median_us);
  return buf;
}

std::string gap_text(const ProblemOutcome& o) {
  if (!o.has_gap()) return o.pick && o.pick->tilecast.ran ? "pick FAILED its check" : "pick did not run";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * o.gap());
  return buf;
}

std::string best_config(const ProblemOutcome& o) {
  if (!o.best) return "-";
  if (!o.best->sweep) return o.best->config + " (the pick)";
  return o.best->config + (o.best->heuristic_pick ? " (forced pick)" : "");
}

// Serpentine K's time over the forward pick's, both forced in the same loop (below 1: serpentine
// ran faster); "-" where the sweep had no twin or one of them did not run.
std::string serpentine_ratio(const ProblemOutcome& o) {
  if (!o.serpentine || !o.forced_pick || !o.serpentine->tilecast.ran || !o.forced_pick->tilecast.ran) return "-";
  if (!ProblemOutcome::passed(*o.serpentine)) return "FAIL";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", o.serpentine->tilecast.t.median_us / o.forced_pick->tilecast.t.median_us);
  return buf;
}

std::string target_line(const std::map<size_t, ProblemOutcome>& all) {
  size_t within = 0;
  for (const auto& [i, o] : all) within += o.within_target();
  char buf[128];
  std::snprintf(buf, sizeof buf, "heuristic within %.0f%% of best on %zu of %zu rows", 100.0 * kSweepTargetGap, within,
                all.size());
  return buf;
}

}  // namespace

std::string sweep_summary_text(const std::vector<Row>& rows) {
  const std::map<size_t, ProblemOutcome> all = outcomes(rows);
  if (all.empty()) return "";
  std::ostringstream s;
  char buf[512];
  s << "sweep (the heuristic's call against every config timed beside it; gap = pick / best - 1):\n";
  std::snprintf(buf, sizeof buf, "  %-9s %-24s %7s %4s %5s %10s %10s %9s  %s\n", "suite", "problem", "configs", "FAIL",
                "error", "pick us", "best us", "gap", "best config");
  s << buf;
  for (const auto& [i, o] : all) {
    const Row& any = *o.configs.front();
    std::snprintf(buf, sizeof buf, "  %-9s %-24s %7zu %4zu %5zu %10s %10s %9s  %s\n", any.problem.suite.c_str(),
                  any.problem.label().c_str(), o.configs.size(), o.failed, o.errors, us(o.pick).c_str(),
                  us(o.best).c_str(), gap_text(o).c_str(), best_config(o).c_str());
    s << buf;
  }
  s << "  " << target_line(all) << "\n";
  bool any_serpentine = false;
  for (const auto& [i, o] : all)
    if (o.serpentine) {
      s << (any_serpentine ? "; " : "  serpentine K / the pick's plan forced (below 1: serpentine faster): ")
        << o.configs.front()->problem.label() << " " << serpentine_ratio(o);
      any_serpentine = true;
    }
  if (any_serpentine) s << "\n";
  return s.str();
}

std::string sweep_markdown(const std::vector<Row>& rows) {
  const std::map<size_t, ProblemOutcome> all = outcomes(rows);
  if (all.empty()) return "";
  std::ostringstream s;
  s << "\n## sweep\n\n"
       "Per problem, the heuristic's own call (`auto`, the row above) against every config the planner can emit "
       "(tile and cluster shapes, multicast on and off, split-K counts, the companion; the model's cheapest first, "
       "`--sweep-limit` of them, the cheapest of each tile height among them), all timed in one loop with cuBLAS and each checked like the rows above. "
       "`gap` = pick time / best time - 1. The pick's plan forced by its config (the model's, with the H200's "
       "facts) is timed too: beside `auto` it shows the timing noise, or a device whose facts plan otherwise. So is "
       "that plan with serpentine K (`k_serpentine=1`, its own band) where it has more than one wave: the last "
       "columns, below 1 where serpentine ran faster.\n\n";
  s << "| suite | problem | configs | check FAIL | errors | pick (auto) us | pick's plan forced, us | best us | gap | "
       "pick's config | best config | best's model rank | best x cuBLAS | serpentine K us | serpentine / pick forced |\n"
       "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|--:|--:|--:|--:|\n";
  for (const auto& [i, o] : all) {
    const Row& any = *o.configs.front();
    char x[32] = "-";
    if (o.best && o.best->speedup() > 0) std::snprintf(x, sizeof x, "%.3f", o.best->speedup());
    s << "| " << any.problem.suite << " | " << any.problem.label() << " | " << o.configs.size() << " | " << o.failed
      << " | " << o.errors << " | " << us(o.pick) << " | " << us(o.forced_pick) << " | " << us(o.best) << " | "
      << gap_text(o) << " | `" << (o.forced_pick ? o.forced_pick->config : std::string("-")) << "` | `"
      << best_config(o) << "` | " << (o.best && o.best->sweep ? std::to_string(o.best->sweep_rank) : "-") << " | " << x
      << " | " << us(o.serpentine) << " | " << serpentine_ratio(o) << " |\n";
  }
  s << "\n**" << target_line(all) << "** (issue #14's target: every row).\n\n";
  s << "<details><summary>every config timed (suite <code>sweep</code>)</summary>\n\n" << markdown_table_header();
  for (const auto& [i, o] : all)
    for (const Row* r : o.configs) s << markdown_row(*r, "sweep");
  s << "\n</details>\n";
  return s.str();
}

}  // namespace tilecast::bench
