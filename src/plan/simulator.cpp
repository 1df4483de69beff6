// The scheduler simulator: plays every CTA of the launches through the device scheduler code and
// checks, round by round, what the kernel's pipeline relies on.
//
// A round is one k-step of one CTA: one use of one stage of its ring. Because every CTA of a
// cluster walks the same units and steps, CTA rank x's round r is the same k-step for all ranks;
// the simulator still counts rounds per CTA from that CTA's own scheduler so that a plan which
// breaks the lockstep shows up as a violation rather than being assumed away. Each round's
// releases are counted with the ring protocol the kernel runs (pipeline/ring_protocol.cuh); in
// what order they come, and whether that order keeps stages and exits safe, is the pipeline
// model's part (pipeline_model.cpp).
#include "tilecast/plan/simulator.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "tilecast/plan/expected_tiles.hpp"

namespace tilecast::plan {

RingProtocol cta_ring_protocol(const ClusterShape& cluster, uint32_t consumer_warps, uint32_t stages, uint32_t rank,
                               const ProtocolHook& hook) {
  RingProtocol p = operand_ring_protocol(cluster, consumer_warps, stages);
  if (hook) hook(rank, p);
  return p;
}

namespace {

class Checker {
 public:
  Checker(const SimOptions& o) : opt_(o) {}

  template <typename... Parts>
  void fail(const Parts&... parts) {
    if (violations.size() >= opt_.max_violations) return;
    std::ostringstream s;
    (s << ... << parts);
    violations.push_back(s.str());
  }
  bool full() const { return violations.size() >= opt_.max_violations; }

  std::vector<std::string> violations;

 private:
  const SimOptions& opt_;
};

// Which A tile and which B tile a CTA needs: two CTAs may share an operand only if these match.
struct OperandId {
  uint32_t group, first, k_begin, k_end;
  bool operator==(const OperandId&) const = default;
};
// A's rows are group-local for the 3-D layouts (batched, masked): the group is part of the id.
OperandId a_id(const TileWork& w) { return {w.group, w.row, w.k_begin, w.k_end}; }
OperandId b_id(const TileWork& w) { return {w.group, w.col, w.k_begin, w.k_end}; }

// Rows of A's row space that hold data (what a TMA box can read in bounds).
uint32_t a_row_extent(const GemmProblem& p) { return p.m; }

struct ClusterSim {
  uint32_t launch = 0;
  uint32_t index = 0;  // cluster index within its launch
  std::vector<TileScheduler> ctas;
  uint64_t time = 0;   // k-steps done (the timing model)
  uint64_t next_static_unit = 0;
  bool done = false;
  std::vector<uint32_t> rounds;  // per CTA: rounds done
  // Per CTA, per round: empty-barrier arrivals received.
  std::vector<std::vector<uint32_t>> arrivals;
};

class Simulation {
 public:
  Simulation(const GemmProblem& p, std::span<const LaunchSpec> launches, const SimOptions& o)
      : p_(p), launches_(launches), opt_(o), check_(o) {}

  SimResult run() {
    if (!validate_launches()) return finish();
    // The tile map is for the checks alone: the planner's unchecked runs skip it (on 65536^3 it was
    // 80% of a plan's time, seconds).
    if (opt_.check)
      for (const TileKey& t : expected_tiles(p_, launches_[0].config.block_m, launches_[0].config.block_n))
        expected_[t.key()] = t;
    for (uint32_t l = 0; l < launches_.size(); ++l) {
      const ClusterShape& cluster = launches_[l].config.cluster;
      protocols_.emplace_back();
      for (uint32_t r = 0; r < cluster.size(); ++r)
        protocols_[l].push_back(cta_ring_protocol(cluster, opt_.consumer_warps, opt_.stages, r, opt_.protocol));
      for (uint32_t c = 0; c < launches_[l].num_clusters; ++c) {
        ClusterSim cs;
        cs.launch = l;
        cs.index = c;
        const uint32_t size = launches_[l].config.cluster.size();
        for (uint32_t r = 0; r < size; ++r) cs.ctas.emplace_back(p_, launches_[l].config, r);
        cs.rounds.assign(size, 0);
        cs.arrivals.assign(size, {});
        cs.next_static_unit = c;
        clusters_.push_back(std::move(cs));
        stats_.ctas += size;
      }
    }
    if (opt_.mode == ClaimMode::kStatic) {
      for (ClusterSim& cs : clusters_) {
        while (!cs.done && !check_.full()) {
          const uint64_t unit = cs.next_static_unit;
          cs.next_static_unit += launches_[cs.launch].num_clusters;
          claim(cs, unit);
        }
      }
    } else {
      run_dynamic();
    }
    for (ClusterSim& cs : clusters_) finish_cluster(cs);
    if (opt_.check) check_coverage();
    return finish();
  }

 private:
  bool validate_launches() {
    if (launches_.empty()) {
      check_.fail("no launch given");
      return false;
    }
    if (opt_.mode == ClaimMode::kStatic && launches_.size() != 1) {
      check_.fail("static mode plays one launch; two launches share work only through the counter");
      return false;
    }
    const TileConfig& c0 = launches_[0].config;
    for (const LaunchSpec& l : launches_) {
      const TileConfig& c = l.config;
      // Launches that share one unit counter must number units the same way.
      if (c.block_m != c0.block_m || c.block_n != c0.block_n || c.block_k != c0.block_k ||
          c.unit_tiles_m() != c0.unit_tiles_m() || c.unit_tiles_n() != c0.unit_tiles_n() ||
          c.swizzle != c0.swizzle) {
        check_.fail("launches disagree on block sizes, unit shape or swizzle");
        return false;
      }
      if (c.cluster.size() == 0 || c.cluster.size() > kMaxClusterSize ||
          c.unit_tiles_m() % c.cluster.m != 0 || c.unit_tiles_n() % c.cluster.n != 0) {
        check_.fail("unit ", c.unit_tiles_m(), "x", c.unit_tiles_n(), " is not a whole number of ",
                    c.cluster.m, "x", c.cluster.n, " clusters");
        return false;
      }
    }
    return true;
  }

  void run_dynamic() {
    uint64_t counter = 0;
    std::mt19937_64 rng(opt_.seed);
    while (!check_.full()) {
      // The claimer: the cluster that is free first (timing model), or any live one (seeded).
      std::vector<size_t> live;
      for (size_t i = 0; i < clusters_.size(); ++i)
        if (!clusters_[i].done) live.push_back(i);
      if (live.empty()) break;
      size_t pick = live[0];
      if (opt_.seed == 0) {
        for (size_t i : live)
          if (clusters_[i].time < clusters_[pick].time) pick = i;
      } else {
        pick = live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)];
      }
      claim(clusters_[pick], counter++);
    }
  }

  // Every CTA of the cluster moves to `unit` and plays its steps.
  void claim(ClusterSim& cs, uint64_t unit) {
    const TileConfig& cfg = launches_[cs.launch].config;
    const uint32_t size = cfg.cluster.size();
    if (unit > UINT32_MAX) {
      check_.fail("unit index overflow");
      cs.done = true;
      return;
    }
    bool any = false, all = true;
    for (TileScheduler& s : cs.ctas) {
      const bool has = s.seek(static_cast<uint32_t>(unit));
      any = any || has;
      all = all && has;
    }
    if (any != all) check_.fail("cluster ", cs.index, ": CTAs disagree whether unit ", unit, " exists");
    if (!all) {
      cs.done = true;
      return;
    }
    bool unit_has_work = false;
    std::vector<TileWork> work(size);
    for (uint32_t step = 0; step < cfg.steps_per_unit(); ++step) {
      for (uint32_t r = 0; r < size; ++r) work[r] = cs.ctas[r].work(step);
      if (opt_.mutate) opt_.mutate(cfg.cluster, work);
      bool any_valid = false;
      for (const TileWork& w : work) any_valid = any_valid || w.valid;
      unit_has_work = unit_has_work || any_valid;
      play_step(cs, cfg, work);
      cs.time += any_valid ? std::max<uint32_t>(work[0].num_k_steps, 1) : 0;
    }
    if (unit_has_work) ++stats_.units;
  }

  void play_step(ClusterSim& cs, const TileConfig& cfg, const std::vector<TileWork>& work) {
    if (!opt_.check) {
      count_traffic(cfg, work);
      return;
    }
    const uint32_t size = cfg.cluster.size();
    const uint32_t k_steps = work[0].num_k_steps;
    for (uint32_t r = 0; r < size; ++r) {
      const TileWork& w = work[r];
      if (w.num_k_steps != k_steps)
        check_.fail("cluster ", cs.index, ": rank ", r, " runs ", w.num_k_steps, " k-steps, rank 0 runs ", k_steps);
      if (!w.valid) {
        if (w.a_mask || w.b_mask || w.issue_a || w.issue_b)
          check_.fail("cluster ", cs.index, ": phantom rank ", r, " takes part in a multicast");
        continue;
      }
      record_tile(w);
      check_masks(cs, cfg, work, r);
    }
    // Rounds: each k-step is one round on each CTA, played from that CTA's own plan so that a
    // CTA that runs fewer k-steps than its peers shows up in the barrier counts.
    uint32_t most = 0;
    for (const TileWork& w : work) most = std::max(most, w.num_k_steps);
    for (uint32_t kk = 0; kk < most; ++kk) {
      for (uint32_t r = 0; r < size; ++r)
        if (kk < work[r].num_k_steps) play_round(cs, cfg, work, r, kk);
    }
  }

  // The fast path: a step's L2 -> SM bytes in one go (each issue reads its box for all K).
  void count_traffic(const TileConfig& cfg, const std::vector<TileWork>& work) {
    for (const TileWork& w : work) {
      if (!w.valid) {
        stats_.phantom_k_steps += w.num_k_steps;
        continue;
      }
      ++stats_.tiles;
      stats_.tile_k_steps += w.num_k_steps;
      const uint64_t k = w.k_end - w.k_begin;
      const uint64_t a = std::min<uint64_t>(cfg.block_m, a_row_extent(p_) - std::min(a_row_extent(p_), w.row)) * k *
                         opt_.elem_bytes;
      const uint64_t b = std::min<uint64_t>(cfg.block_n, p_.n - std::min(p_.n, w.col)) * k * opt_.elem_bytes;
      stats_.l2_to_sm_bytes_unicast += a + b;
      if (w.issue_a) {
        stats_.l2_to_sm_bytes += a;
        stats_.l2_a_bytes += a;
      }
      if (w.issue_b) stats_.l2_to_sm_bytes += b;
    }
  }

  void record_tile(const TileWork& w) {
    ++stats_.tiles;
    stats_.tile_k_steps += w.num_k_steps;
    if (!opt_.check) return;
    const TileKey key = TileKey::of(p_, w);
    auto it = expected_.find(key.key());
    if (it == expected_.end()) {
      check_.fail("tile group ", w.group, " row ", w.row, " col ", w.col, " is not a tile of the problem");
      return;
    }
    if (it->second.rows != w.rows || it->second.cols != w.cols)
      check_.fail("tile group ", w.group, " row ", w.row, " col ", w.col, ": ", w.rows, "x", w.cols,
                  " rows x cols, expected ", it->second.rows, "x", it->second.cols);
    if (++seen_[key.key()] == 2)
      check_.fail("tile group ", w.group, " row ", w.row, " col ", w.col, " computed twice");
  }

  // The masks of valid CTA r: they name only live CTAs that share the same operand tile, each
  // valid CTA receives each operand from exactly one issuer.
  void check_masks(const ClusterSim& cs, const TileConfig& cfg, const std::vector<TileWork>& work, uint32_t r) {
    const TileWork& w = work[r];
    const uint32_t size = cfg.cluster.size();
    const uint16_t self = static_cast<uint16_t>(1u << r);
    if (!(w.a_mask & self) || !(w.b_mask & self))
      check_.fail("cluster ", cs.index, ": rank ", r, "'s masks leave itself out");
    if ((w.a_mask | w.b_mask) >> size)
      check_.fail("cluster ", cs.index, ": rank ", r, "'s masks name CTAs outside the cluster");
    uint32_t a_from = 0, b_from = 0;
    for (uint32_t x = 0; x < size; ++x) {
      const TileWork& v = work[x];
      if ((w.a_mask >> x) & 1u) {
        if (!v.valid) check_.fail("cluster ", cs.index, ": rank ", r, " multicasts A to phantom rank ", x);
        else if (!(a_id(v) == a_id(w)))
          check_.fail("cluster ", cs.index, ": rank ", r, " shares A with rank ", x,
                      " which needs another A tile (group ", v.group, " row ", v.row, " vs group ", w.group,
                      " row ", w.row, ")");
        if (v.a_mask != w.a_mask) check_.fail("cluster ", cs.index, ": ranks ", r, " and ", x, " disagree on A's mask");
      }
      if ((w.b_mask >> x) & 1u) {
        if (!v.valid) check_.fail("cluster ", cs.index, ": rank ", r, " multicasts B to phantom rank ", x);
        else if (!(b_id(v) == b_id(w)))
          check_.fail("cluster ", cs.index, ": rank ", r, " shares B with rank ", x,
                      " which needs another B tile (group ", v.group, " col ", v.col, " vs group ", w.group,
                      " col ", w.col, ")");
        if (v.b_mask != w.b_mask) check_.fail("cluster ", cs.index, ": ranks ", r, " and ", x, " disagree on B's mask");
      }
      if (v.issue_a && ((v.a_mask >> r) & 1u)) ++a_from;
      if (v.issue_b && ((v.b_mask >> r) & 1u)) ++b_from;
    }
    if (a_from != 1 || b_from != 1)
      check_.fail("cluster ", cs.index, ": rank ", r, " receives A from ", a_from, " and B from ", b_from,
                  " issuers per k-step, not one each");
  }

  // Rank r's round for k-step kk of this step: its loads (traffic) and its consumers' release of
  // the stage.
  void play_round(ClusterSim& cs, const TileConfig& cfg, const std::vector<TileWork>& work, uint32_t r, uint32_t kk) {
    const TileWork& w = work[r];
    const uint32_t round = cs.rounds[r];
    const uint32_t size = cfg.cluster.size();
    const uint32_t k_col = w.k_begin + kk * cfg.block_k;
    const uint64_t k_cols = std::min<uint64_t>(cfg.block_k, w.k_end > k_col ? w.k_end - k_col : 0);
    const uint64_t a_bytes = std::min<uint64_t>(cfg.block_m, a_row_extent(p_) - std::min(a_row_extent(p_), w.row)) *
                             k_cols * opt_.elem_bytes;
    const uint64_t b_bytes = std::min<uint64_t>(cfg.block_n, p_.n - std::min(p_.n, w.col)) * k_cols * opt_.elem_bytes;
    if (w.valid) {
      stats_.l2_to_sm_bytes_unicast += a_bytes + b_bytes;
    } else {
      ++stats_.phantom_k_steps;
    }
    if (w.issue_a) {
      stats_.l2_to_sm_bytes += a_bytes;
      stats_.l2_a_bytes += a_bytes;
    }
    if (w.issue_b) stats_.l2_to_sm_bytes += b_bytes;

    // The consumers release the stage on the CTAs the protocol names.
    const RingProtocol& protocol = protocols_[cs.launch][r];
    for (uint32_t y = 0; y < size; ++y) {
      if (!((protocol.release_mask >> y) & 1u)) continue;
      if (cs.arrivals[y].size() <= round) cs.arrivals[y].resize(round + 1, 0);
      cs.arrivals[y][round] += protocol.releasers_per_cta;
    }
    ++cs.rounds[r];
  }

  // After the last unit: every CTA's empty barrier got its init count in every round, and no
  // arrival landed in a round its CTA never runs.
  void finish_cluster(ClusterSim& cs) {
    const TileConfig& cfg = launches_[cs.launch].config;
    const uint32_t size = cfg.cluster.size();
    for (uint32_t y = 0; y < size && opt_.check; ++y) {
      const uint32_t expected = protocols_[cs.launch][y].empty_arrivals;
      if (cs.rounds[y] != cs.rounds[0])
        check_.fail("cluster ", cs.index, ": rank ", y, " runs ", cs.rounds[y], " rounds, rank 0 runs ", cs.rounds[0]);
      for (uint32_t round = 0; round < cs.arrivals[y].size(); ++round) {
        if (round >= cs.rounds[y]) {
          check_.fail("cluster ", cs.index, ": rank ", y, " gets arrivals in round ", round, " after its last round ",
                      cs.rounds[y] - 1, " (its peers run rounds it does not)");
          break;
        }
        if (cs.arrivals[y][round] != expected) {
          check_.fail("cluster ", cs.index, ": rank ", y, " stage ", round % opt_.stages, " phase ", round / opt_.stages,
                      " gets ", cs.arrivals[y][round], " arrivals, its barrier counts ", expected);
        }
      }
      if (cs.arrivals[y].size() < cs.rounds[y])
        check_.fail("cluster ", cs.index, ": rank ", y, " waits on rounds nobody released");
    }
    stats_.makespan_k_steps = std::max(stats_.makespan_k_steps, cs.time);
  }

  void check_coverage() {
    for (const auto& [key, tile] : expected_) {
      if (!seen_.count(key))
        check_.fail("tile group ", tile.group, " row ", tile.row, " col ", tile.col, " never computed");
      if (check_.full()) break;
    }
  }

  SimResult finish() {
    SimResult res;
    res.stats = stats_;
    res.violations = std::move(check_.violations);
    return res;
  }

  const GemmProblem& p_;
  std::span<const LaunchSpec> launches_;
  const SimOptions& opt_;
  Checker check_;
  std::vector<ClusterSim> clusters_;
  std::vector<std::vector<RingProtocol>> protocols_;  // per launch, per cluster rank
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, TileKey> expected_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> seen_;
  SimStats stats_;
};

}  // namespace

SimResult simulate(const GemmProblem& problem, std::span<const LaunchSpec> launches, const SimOptions& options) {
  return Simulation(problem, launches, options).run();
}

}  // namespace tilecast::plan
