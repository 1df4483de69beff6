// The pipeline model (pipeline_model.hpp): agents, mbarriers and the ground-truth checks.
//
// In a static launch every agent's moves follow from its CTA's schedule alone, so each agent's
// program is written out first, from the same TileScheduler, PipelineState and RingProtocol the
// kernel runs; the play is then a loop that picks a random agent able to move and makes its next
// move. An agent that has to wait leaves the pool and joins its barrier's wait list until the
// barrier completes a phase (a move costs the same however many agents there are), so an empty
// pool with agents left is a deadlock.
//
// Agents per CTA: the producer thread; one agent per consumer warp (each arriving once per target
// as the kernel's warps do, so the arrival counts are the kernel's; taking turns, each round's
// releasers are the four warps of its turn); with a bias ring, the epilogue loader;
// the exit; and one agent per load in flight to one CTA, so that the lands of a multicast come in
// any order and late. In the kernel the four warps of a warpgroup meet at each wgmma; here they
// drift apart freely, which only adds orders: every order the kernel can take, the model can pick.
#include "tilecast/plan/pipeline_model.hpp"

#include <deque>
#include <random>
#include <sstream>
#include <utility>

#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/device/kernels/gemm_sm90/spec.cuh"
#include "tilecast/device/pipeline/pipeline_state.cuh"

namespace tilecast::plan {
namespace {

// ---- What each agent does ----

struct RingPosition {
  uint32_t stage = 0, parity = 0;
};

// The kernel's PipelineState takes the ring depth as a template argument and the model reads it
// from a RingProtocol at run time, so the model walks the kernel's type at each depth it allows.
constexpr uint32_t kMaxStages = 8;

template <uint32_t kStages>
std::vector<RingPosition> walk_ring(bool producer, uint32_t count) {
  PipelineState<kStages> s = producer ? producer_start_state<kStages>() : consumer_start_state<kStages>();
  std::vector<RingPosition> at;
  for (uint32_t i = 0; i < count; ++i, s.advance()) at.push_back({s.stage, s.phase});
  return at;
}

template <uint32_t... kLess>
std::vector<RingPosition> walk_ring(uint32_t stages, bool producer, uint32_t count,
                                    std::integer_sequence<uint32_t, kLess...>) {
  std::vector<RingPosition> at;
  ((stages == kLess + 1 ? void(at = walk_ring<kLess + 1>(producer, count)) : void()), ...);
  return at;
}

// Where a role stands in each of its first `count` waits: stage and parity.
std::vector<RingPosition> ring_positions(uint32_t stages, bool producer, uint32_t count) {
  return walk_ring(stages, producer, count, std::make_integer_sequence<uint32_t, kMaxStages>{});
}

enum class OpKind : uint8_t {
  kWaitEmpty,     // producer: parity wait on the stage's empty barrier (a fill, or a teardown round)
  kSkipEmpty,     // producer, first pass over the ring: no wait (StageRing::acquire with `fresh`);
                  // the model checks that the wait would have passed
  kFill,          // producer, valid round: arrive.expect_tx on its own full barrier
  kArriveFull,    // producer, phantom round: a plain arrive on its own full barrier
  kIssue,         // producer: one TMA load into the stage of every rank in `mask`
  kWaitFull,      // consumer warp: parity wait on the stage's full barrier
  kDoneReading,   // consumer warp: its reads of the round are over (the overwrite check's truth)
  kRelease,       // consumer warp: the lane that arrives on rank `peer`'s empty barrier
  kLand,          // a load reaches rank `peer`: writes the stage, completes its bytes
  kTurnWait,      // consumer warp (turns): waits until every warp of turn `round` - 1 handed over
  kTurnPass,      // consumer warp (turns): hands turn `round` over
  kBiasWaitEmpty, // epilogue loader: parity wait on the bias slot's empty barrier
  kBiasIssue,     // epilogue loader: arrive.expect_tx on the slot's full barrier, then the TMA load
  kBiasLand,      // the bias load lands: completes its bytes
  kBiasWaitFull,  // consumer warp, in its epilogue: parity wait on the slot's full barrier
  kBiasDone,      // consumer warp: its reads of the tile's bias are over (the overwrite check's truth)
  kBiasRelease,   // a warpgroup's first warp: once its four warps are done (the epilogue's named
                  // barrier), arrives on the slot's empty barrier
  kDrain,         // exit: waits until the CTA's producer and consumer warps are done
  kClusterArrive, // exit: the final cluster barrier (leave_cluster)
  kClusterWait,
  kExit,
};

struct Op {
  OpKind kind = OpKind::kExit;
  uint32_t stage = 0;
  uint32_t parity = 0;  // the waits
  uint32_t round = 0;   // the stage use the op belongs to (teardown waits count on past the last)
  uint32_t peer = 0;    // kRelease, kLand: the target rank
  uint16_t mask = 0;    // kIssue: the ranks written
  uint32_t bytes = 0;   // kFill: expected; kIssue, kLand: the box
  uint32_t warpgroup = 0;  // kBiasDone, kBiasRelease: the warp's warpgroup
};

// The kernel's warps per consumer warpgroup.
constexpr uint32_t kWarpsPerWarpgroup = kWarpgroupThreads / 32;

// Transaction bytes of one A box and one B box; TMA counts a whole box even where it reads past
// the problem's edge (it writes zeros there).
struct BoxBytes {
  uint32_t a = 0, b = 0;
};

uint32_t count_rounds(const std::vector<TileWork>& steps) {
  uint32_t rounds = 0;
  for (const TileWork& w : steps) rounds += w.num_k_steps;
  return rounds;
}

// The steps CTA `rank` of cluster `cluster` plays, walked by its own scheduler as the kernel's
// roles walk it: units cluster, cluster + num_clusters, ...
std::vector<TileWork> cta_steps(const GemmProblem& p, const LaunchSpec& launch, uint32_t cluster, uint32_t rank) {
  TileScheduler s(p, launch.config, rank);
  std::vector<TileWork> steps;
  for (uint64_t unit = cluster; unit <= UINT32_MAX && s.seek(static_cast<uint32_t>(unit)); unit += launch.num_clusters)
    for (uint32_t step = 0; step < s.steps_per_unit(); ++step) steps.push_back(s.work(step));
  return steps;
}

// run_producer: per round an empty wait (none in the first `fresh_rounds`: the ring's first pass),
// then the fill (or a phantom's plain arrive), then the teardown's waits (S15).
std::vector<Op> producer_program(const std::vector<TileWork>& steps, const RingProtocol& protocol, BoxBytes box,
                                 uint32_t fresh_rounds) {
  const uint32_t rounds = count_rounds(steps);
  const std::vector<RingPosition> at = ring_positions(protocol.stages, true, rounds + protocol.teardown_rounds);
  std::vector<Op> ops;
  uint32_t round = 0;
  for (const TileWork& w : steps) {
    for (uint32_t kk = 0; kk < w.num_k_steps; ++kk, ++round) {
      const uint32_t s = at[round].stage;
      const OpKind wait = round < fresh_rounds ? OpKind::kSkipEmpty : OpKind::kWaitEmpty;
      ops.push_back({.kind = wait, .stage = s, .parity = at[round].parity, .round = round});
      if (!w.valid) {
        ops.push_back({.kind = OpKind::kArriveFull, .stage = s, .round = round});
        continue;
      }
      ops.push_back({.kind = OpKind::kFill, .stage = s, .round = round, .bytes = box.a + box.b});
      auto load = [&](uint16_t mask, uint32_t bytes) {
        ops.push_back({.kind = OpKind::kIssue, .stage = s, .round = round, .mask = mask, .bytes = bytes});
      };
      if (w.issue_a) load(w.a_mask, box.a);
      if (w.issue_b) load(w.b_mask, box.b);
    }
  }
  for (; round < at.size(); ++round)
    ops.push_back({.kind = OpKind::kWaitEmpty, .stage = at[round].stage, .parity = at[round].parity, .round = round});
  return ops;
}

void release(std::vector<Op>& ops, RingPosition at, uint32_t round, uint16_t targets) {
  ops.push_back({.kind = OpKind::kDoneReading, .stage = at.stage, .round = round});
  for (uint32_t y = 0; y < 16; ++y)
    if ((targets >> y) & 1u) ops.push_back({.kind = OpKind::kRelease, .stage = at.stage, .round = round, .peer = y});
}

// The bias tile of a valid tile: the bytes its box brings (BF16 bias; the model plays protocol, not sizes).
constexpr uint32_t kBiasTileBytes = 256;

// run_epilogue_loader's bias part: per valid tile (phantoms have no epilogue) a wait for the slot,
// then the load.
std::vector<Op> loader_program(const std::vector<TileWork>& steps, const RingProtocol& bias) {
  uint32_t tiles = 0;
  for (const TileWork& w : steps) tiles += w.valid ? 1 : 0;
  const std::vector<RingPosition> at = ring_positions(bias.stages, true, tiles);
  std::vector<Op> ops;
  for (uint32_t v = 0; v < tiles; ++v) {
    ops.push_back({.kind = OpKind::kBiasWaitEmpty, .stage = at[v].stage, .parity = at[v].parity, .round = v});
    ops.push_back({.kind = OpKind::kBiasIssue, .stage = at[v].stage, .round = v, .bytes = kBiasTileBytes});
  }
  return ops;
}

// The consumer warp's epilogue on valid tile `tile` at slot position `at`: read the bias, and (the
// warpgroup's first warp) give the slot back once the warpgroup is done.
void read_bias(std::vector<Op>& ops, RingPosition at, uint32_t tile, uint32_t warp, uint32_t warpgroup) {
  ops.push_back({.kind = OpKind::kBiasWaitFull, .stage = at.stage, .parity = at.parity, .round = tile});
  ops.push_back({.kind = OpKind::kBiasDone, .stage = at.stage, .round = tile, .warpgroup = warpgroup});
  if (warp % kWarpsPerWarpgroup == 0)
    ops.push_back({.kind = OpKind::kBiasRelease, .stage = at.stage, .round = tile, .warpgroup = warpgroup});
}

// One consumer warp, as run_consumer and run_tile play it: a valid tile keeps a stage in flight
// and releases it after the next stage's wait (its wgmma's may still read it until then), a
// phantom releases each round as soon as it has passed it. Taking turns, the warp skips the
// other warpgroup's tiles, waits for the hand-over before its
// own and hands over once it has passed their last round; at the end the warpgroup whose turn
// would be next takes the last hand-over. `skip_turn_waits` (tests) drops the waits. With a bias
// ring (`bias`), each valid tile's epilogue reads its bias after the tile's rounds: the warp's
// position in that ring counts every valid tile, the other warpgroup's too (Epilogue::skip_tile),
// or only its own with `bias_without_skip` (tests).
std::vector<Op> consumer_program(const std::vector<TileWork>& steps, const RingProtocol& protocol, uint32_t warp,
                                 bool turns, bool skip_turn_waits, const RingProtocol* bias, bool bias_without_skip) {
  const std::vector<RingPosition> at = ring_positions(protocol.stages, false, count_rounds(steps));
  std::vector<RingPosition> bias_at;
  if (bias) bias_at = ring_positions(bias->stages, false, static_cast<uint32_t>(steps.size()));
  const uint32_t warpgroup = warp / kWarpsPerWarpgroup;
  const auto wait_turn = [&](std::vector<Op>& ops, uint32_t t) {
    if (!skip_turn_waits) ops.push_back({.kind = OpKind::kTurnWait, .round = t});
  };
  std::vector<Op> ops;
  uint32_t round = 0, turn = 0;
  uint32_t valid_tiles = 0, own_tiles = 0;  // bias slots passed: every valid tile's, or its own only
  for (const TileWork& w : steps) {
    const uint32_t t = turn++;
    const uint32_t tile = valid_tiles;
    if (w.valid) ++valid_tiles;
    if (turns && t % kPingpongWarpgroups != warpgroup) {
      round += w.num_k_steps;
      continue;
    }
    if (turns && t > 0) wait_turn(ops, t);
    for (uint32_t kk = 0; kk < w.num_k_steps; ++kk, ++round) {
      ops.push_back({.kind = OpKind::kWaitFull, .stage = at[round].stage, .parity = at[round].parity, .round = round});
      if (turns && w.valid && kk + 1 == w.num_k_steps) ops.push_back({.kind = OpKind::kTurnPass, .round = t});
      if (!w.valid) release(ops, at[round], round, protocol.release_mask);
      else if (kk > 0) release(ops, at[round - 1], round - 1, protocol.release_mask);
    }
    if (w.valid && w.num_k_steps > 0) release(ops, at[round - 1], round - 1, protocol.release_mask);
    if (turns && (!w.valid || w.num_k_steps == 0)) ops.push_back({.kind = OpKind::kTurnPass, .round = t});
    if (bias && w.valid) read_bias(ops, bias_at[bias_without_skip ? own_tiles : tile], tile, warp, warpgroup);
    if (w.valid) ++own_tiles;
  }
  if (turns && turn > 0 && turn % kPingpongWarpgroups == warpgroup) wait_turn(ops, turn);
  return ops;
}

std::vector<Op> exit_program(bool exit_barrier) {
  if (!exit_barrier) return {{.kind = OpKind::kDrain}, {.kind = OpKind::kExit}};
  return {{.kind = OpKind::kDrain}, {.kind = OpKind::kClusterArrive}, {.kind = OpKind::kClusterWait},
          {.kind = OpKind::kExit}};
}

// ---- The state the agents share ----

// An mbarrier as the hardware keeps it: the arrivals the current phase still misses, its
// transaction count (below zero when bytes land before the expect_tx that announces them), and
// how many phases have completed. A phase completes when both counts reach zero; the arrival
// count then resets to the init count, so arrivals beyond a phase's count go to the next one.
struct Barrier {
  uint32_t init = 1;
  uint32_t pending = 1;
  int64_t tx = 0;
  uint64_t completed = 0;
  std::vector<uint32_t> waiters;  // agents parked until the next completion

  // try_wait.parity(p) succeeds once the phase of parity p has completed: while the current
  // phase has the other parity.
  bool passed(uint32_t parity) const { return (completed & 1u) != parity; }
  bool at_boundary() const { return pending == init && tx == 0; }
};

struct Cta {
  uint32_t cluster = 0, rank = 0;
  RingProtocol protocol;
  uint32_t rounds = 0;
  std::vector<Barrier> full, empty;           // per stage
  std::vector<uint32_t> read_through;         // per consumer warp: rounds it has finished reading
  std::vector<uint8_t> round_reader;          // turns: per round, the warpgroup whose turn reads it
  std::vector<uint32_t> turn_passes;          // turns: per turn, its warps that handed it over
  std::vector<uint32_t> turn_waiters;
  std::vector<uint32_t> loads_due, loads_in;  // per round: loads aimed at this CTA, and landed
  // The bias ring (bias_slots): its barriers, and per valid tile whether its bias landed, the warps
  // that must read it and, per warpgroup (tile * warpgroups + warpgroup), those that have.
  std::vector<Barrier> bias_full, bias_empty;
  std::vector<uint8_t> bias_landed;
  std::vector<uint32_t> bias_readers, bias_done;
  std::vector<uint32_t> bias_sync_waiters;
  uint32_t busy = 0;                          // its producer and consumer warps not yet done
  std::vector<uint32_t> drain_waiters;
  bool exited = false;
};

struct ClusterExit {
  uint32_t arrived = 0;
  std::vector<uint32_t> waiters;
};

enum class Role : uint8_t { kProducer, kConsumer, kLoader, kExit, kLoad };

struct Agent {
  Role role = Role::kProducer;
  uint32_t cta = 0;   // its CTA (a load's: the issuer)
  uint32_t warp = 0;  // a consumer's warp
  std::vector<Op> ops;
  size_t pc = 0;
  bool done() const { return pc == ops.size(); }
};

const char* barrier_name(bool full) { return full ? "full" : "empty"; }

// A role the CTA's exit waits for (the loads in flight are the issuers').
bool keeps_cta(Role r) { return r == Role::kProducer || r == Role::kConsumer || r == Role::kLoader; }

class Model {
 public:
  Model(const GemmProblem& p, const LaunchSpec& launch, const PipelineModelOptions& o)
      : p_(p), launch_(launch), opt_(o), size_(launch.config.cluster.size()), rng_(o.seed) {}

  PipelineModelResult run() {
    if (build()) {
      play();
      if (finished_ < agents_.size()) report_deadlock();
      else check_boundaries();
    }
    for (const Cta& c : ctas_) result_.stats.rounds += c.rounds;
    return std::move(result_);
  }

 private:
  template <typename... Parts>
  void fail(const Parts&... parts) {
    if (full()) return;
    std::ostringstream s;
    (s << ... << parts);
    result_.violations.push_back(s.str());
  }
  bool full() const { return result_.violations.size() >= opt_.max_violations; }

  // "cluster c: rank r", how every message names a CTA.
  std::string who(const Cta& c) const {
    return "cluster " + std::to_string(c.cluster) + ": rank " + std::to_string(c.rank);
  }
  Cta& peer(const Cta& c, uint32_t rank) { return ctas_[c.cluster * size_ + rank]; }

  // ---- Setting up ----

  bool build() {
    if (size_ == 0 || size_ > kMaxClusterSize) {
      fail("cluster of ", size_, " CTAs: the model plays 1 to ", kMaxClusterSize);
      return false;
    }
    if (opt_.turns && opt_.consumer_warps != kPingpongWarpgroups * kWarpsPerWarpgroup) {
      fail("taking turns needs ", kPingpongWarpgroups, " warpgroups of ", kWarpsPerWarpgroup, " warps, not ",
           opt_.consumer_warps, " warps");
      return false;
    }
    const RingProtocol* bias = opt_.bias_slots ? &bias_ : nullptr;
    if (bias) {
      bias_ = bias_ring_protocol(opt_.bias_slots, warpgroups(), opt_.turns);
      if (opt_.bias_releasers) bias_.empty_arrivals = *opt_.bias_releasers;
    }
    const TileConfig& cfg = launch_.config;
    const BoxBytes box{cfg.block_m * cfg.block_k * opt_.elem_bytes, cfg.block_n * cfg.block_k * opt_.elem_bytes};
    ctas_.resize(size_t{launch_.num_clusters} * size_);
    clusters_.resize(launch_.num_clusters);
    for (uint32_t i = 0; i < ctas_.size(); ++i) {
      Cta& c = ctas_[i];
      c.cluster = i / size_;
      c.rank = i % size_;
      // Taking turns, each stage's readers are the warps of one warpgroup (geometry.cuh: stage_readers).
      const uint32_t stage_readers = opt_.turns ? opt_.consumer_warps / kPingpongWarpgroups : opt_.consumer_warps;
      c.protocol = cta_ring_protocol(cfg.cluster, stage_readers, opt_.stages, c.rank, opt_.protocol);
      if (!playable(c)) return false;
      const std::vector<TileWork> steps = cta_steps(p_, launch_, c.cluster, c.rank);
      c.rounds = count_rounds(steps);
      c.full.assign(c.protocol.stages, fresh(c.protocol.full_arrivals));
      c.empty.assign(c.protocol.stages, fresh(c.protocol.empty_arrivals));
      const uint32_t warps = opt_.turns ? opt_.consumer_warps : c.protocol.releasers_per_cta;
      c.read_through.assign(warps, 0);
      for (uint32_t t = 0; t < steps.size(); ++t)
        c.round_reader.insert(c.round_reader.end(), steps[t].num_k_steps, static_cast<uint8_t>(t % kPingpongWarpgroups));
      c.turn_passes.assign(steps.size(), 0);
      const uint32_t fresh_rounds = opt_.fresh_rounds.value_or(c.protocol.stages);
      add_agent({.role = Role::kProducer, .cta = i, .ops = producer_program(steps, c.protocol, box, fresh_rounds)});
      if (bias) {
        c.bias_full.assign(bias_.stages, fresh(bias_.full_arrivals));
        c.bias_empty.assign(bias_.stages, fresh(bias_.empty_arrivals));
        for (uint32_t t = 0; t < steps.size(); ++t)
          if (steps[t].valid) c.bias_readers.push_back(opt_.turns ? kWarpsPerWarpgroup : warps);
        c.bias_landed.assign(c.bias_readers.size(), 0);
        c.bias_done.assign(c.bias_readers.size() * warpgroups(), 0);
        add_agent({.role = Role::kLoader, .cta = i, .ops = loader_program(steps, bias_)});
      }
      for (uint32_t w = 0; w < warps; ++w)
        add_agent({.role = Role::kConsumer, .cta = i, .warp = w,
                   .ops = consumer_program(steps, c.protocol, w, opt_.turns, opt_.skip_turn_waits, bias,
                                           opt_.bias_without_skip)});
      add_agent({.role = Role::kExit, .cta = i, .ops = exit_program(opt_.exit_barrier)});
    }
    for (const Agent& a : agents_)
      if (a.role == Role::kProducer) count_loads_due(a);
    return true;
  }

  // A protocol the model can play (and a GPU could run).
  bool playable(const Cta& c) {
    const RingProtocol& pr = c.protocol;
    if (pr.stages < 1 || pr.stages > kMaxStages)
      fail(who(c), ": ", pr.stages, " stages, the model plays 1 to ", kMaxStages);
    else if (pr.full_arrivals == 0 || pr.empty_arrivals == 0)
      fail(who(c), ": an mbarrier's init count must be at least 1");
    else if (pr.release_mask >> size_)
      fail(who(c), ": release mask ", pr.release_mask, " names CTAs outside the cluster");
    else
      return true;
    return false;
  }

  static Barrier fresh(uint32_t init) {
    Barrier b;
    b.init = b.pending = init;
    return b;
  }

  void add_agent(Agent a) {
    if (keeps_cta(a.role)) ctas_[a.cta].busy += a.done() ? 0 : 1;
    const uint32_t id = static_cast<uint32_t>(agents_.size());
    if (a.done()) ++finished_;
    else ready_.push_back(id);
    agents_.push_back(std::move(a));
  }

  // What the early-read check expects: per CTA and round, the loads its peers' plans aim at it.
  void count_loads_due(const Agent& producer) {
    for (const Op& op : producer.ops) {
      if (op.kind != OpKind::kIssue) continue;
      for (uint32_t y = 0; y < size_; ++y) {
        if (!((op.mask >> y) & 1u)) continue;
        std::vector<uint32_t>& due = peer(ctas_[producer.cta], y).loads_due;
        if (due.size() <= op.round) due.resize(op.round + 1, 0);
        ++due[op.round];
      }
    }
  }

  // ---- Playing ----

  void play() {
    while (!ready_.empty() && !full()) {
      const size_t i = std::uniform_int_distribution<size_t>(0, ready_.size() - 1)(rng_);
      const uint32_t id = ready_[i];
      const bool moved = move(id);
      if (moved) ++result_.stats.moves;
      if (moved && !agents_[id].done()) continue;
      ready_[i] = ready_.back();  // parked on a wait list, or done
      ready_.pop_back();
      if (moved) retire(agents_[id]);
    }
  }

  void wake(std::vector<uint32_t>& waiters) {
    ready_.insert(ready_.end(), waiters.begin(), waiters.end());
    waiters.clear();
  }

  // Parks agent `id` on the list unless the condition holds.
  static bool pass_or_park(bool passes, std::vector<uint32_t>& waiters, uint32_t id) {
    if (!passes) waiters.push_back(id);
    return passes;
  }

  void retire(const Agent& a) {
    ++finished_;
    Cta& c = ctas_[a.cta];
    if (keeps_cta(a.role) && --c.busy == 0) wake(c.drain_waiters);
  }

  // Makes agent `id`'s next move; false when it has to wait instead (it is then parked).
  bool move(uint32_t id) {
    Agent& a = agents_[id];  // a deque: issue() adds agents without moving this one
    const Op& op = a.ops[a.pc];
    const uint32_t warp = a.warp;
    const uint32_t cta = a.cta;
    Cta& c = ctas_[cta];
    ClusterExit& cluster = clusters_[c.cluster];
    switch (op.kind) {
      case OpKind::kWaitEmpty:
        if (!pass_or_park(c.empty[op.stage].passed(op.parity), c.empty[op.stage].waiters, id)) return false;
        break;
      case OpKind::kSkipEmpty:
        if (!c.empty[op.stage].passed(op.parity))
          fail(who(c), "'s producer skips its wait for round ", op.round, " on stage ", op.stage,
               ", which would block: the stage is not yet released");
        break;
      case OpKind::kWaitFull:
        if (!pass_or_park(c.full[op.stage].passed(op.parity), c.full[op.stage].waiters, id)) return false;
        check_early_read(c, warp, op);
        break;
      case OpKind::kFill:
        c.full[op.stage].tx += op.bytes;
        arrive(c, true, op.stage);
        break;
      case OpKind::kArriveFull: arrive(c, true, op.stage); break;
      case OpKind::kIssue: issue(cta, op); break;
      case OpKind::kTurnWait:
        if (!pass_or_park(c.turn_passes[op.round - 1] == warps_per_turn(), c.turn_waiters, id)) return false;
        break;
      case OpKind::kTurnPass:
        if (++c.turn_passes[op.round] == warps_per_turn()) wake(c.turn_waiters);
        break;
      case OpKind::kDoneReading: c.read_through[warp] = op.round + 1; break;
      case OpKind::kRelease: release_on(c, warp, op); break;
      case OpKind::kLand: land(c, op); break;
      case OpKind::kBiasWaitEmpty:
        if (!pass_or_park(c.bias_empty[op.stage].passed(op.parity), c.bias_empty[op.stage].waiters, id)) return false;
        break;
      case OpKind::kBiasIssue: issue_bias(cta, op); break;
      case OpKind::kBiasLand:
        c.bias_landed[op.round] = 1;
        c.bias_full[op.stage].tx -= op.bytes;
        settle(c.bias_full[op.stage]);
        break;
      case OpKind::kBiasWaitFull:
        if (!pass_or_park(c.bias_full[op.stage].passed(op.parity), c.bias_full[op.stage].waiters, id)) return false;
        if (!c.bias_landed[op.round])
          fail(who(c), "'s consumer warp ", warp, " passes bias slot ", op.stage, "'s full barrier for tile ", op.round,
               " before its bias landed");
        break;
      case OpKind::kBiasDone:
        ++c.bias_done[op.round * warpgroups() + op.warpgroup];
        wake(c.bias_sync_waiters);
        break;
      case OpKind::kBiasRelease:
        if (!pass_or_park(c.bias_done[op.round * warpgroups() + op.warpgroup] == kWarpsPerWarpgroup,
                          c.bias_sync_waiters, id))
          return false;
        arrive_bias(c, op.stage);
        break;
      case OpKind::kDrain:
        if (!pass_or_park(c.busy == 0, c.drain_waiters, id)) return false;
        break;
      case OpKind::kClusterArrive:
        if (++cluster.arrived == size_) wake(cluster.waiters);
        break;
      case OpKind::kClusterWait:
        if (!pass_or_park(cluster.arrived == size_, cluster.waiters, id)) return false;
        break;
      case OpKind::kExit: c.exited = true; break;
    }
    ++a.pc;
    return true;
  }

  void arrive(Cta& y, bool full, uint32_t stage) {
    Barrier& b = full ? y.full[stage] : y.empty[stage];
    if (b.pending == 0) {
      // Only a phase that waits for bytes can have no arrivals left; one more is undefined.
      fail(who(y), "'s ", barrier_name(full), " barrier of stage ", stage, " gets an arrival past its count of ",
           b.init, " while its phase ", b.completed, " waits for ", b.tx, " bytes");
      return;
    }
    --b.pending;
    settle(b);
  }

  void settle(Barrier& b) {
    if (b.pending != 0 || b.tx != 0) return;
    ++b.completed;
    b.pending = b.init;
    wake(b.waiters);
  }

  // A load from CTA `cta` into the ranks of op.mask: the write may start at once, so the target's
  // consumers must be done with the stage's previous round now; the bytes land later, each
  // target on its own.
  void issue(uint32_t cta, const Op& op) {
    if (popcount16(op.mask) > 1) ++result_.stats.multicast_loads;
    for (uint32_t y = 0; y < size_; ++y) {
      if (!((op.mask >> y) & 1u)) continue;
      check_overwrite(ctas_[cta], peer(ctas_[cta], y), op);
      Op land = op;
      land.kind = OpKind::kLand;
      land.peer = y;
      add_agent({.role = Role::kLoad, .cta = cta, .ops = {land}});
    }
  }

  // The loader's bias load for valid tile op.round: the slot's previous tile must be read by every
  // warp that reads it; the bytes land later.
  void issue_bias(uint32_t cta, const Op& op) {
    Cta& c = ctas_[cta];
    const uint32_t slots = static_cast<uint32_t>(c.bias_full.size());
    if (op.round >= slots) {
      const uint32_t prev = op.round - slots;
      uint32_t done = 0;
      for (uint32_t g = 0; g < warpgroups(); ++g) done += c.bias_done[prev * warpgroups() + g];
      if (done < c.bias_readers[prev])
        fail(who(c), "'s epilogue loader overwrites bias slot ", op.stage, " for tile ", op.round, " while ",
             c.bias_readers[prev] - done, " warps have not finished reading tile ", prev, "'s bias");
    }
    c.bias_full[op.stage].tx += op.bytes;
    Barrier& b = c.bias_full[op.stage];
    if (b.pending == 0) fail(who(c), "'s bias slot ", op.stage, " full barrier gets an arrival past its count");
    else --b.pending;
    settle(b);
    Op land = op;
    land.kind = OpKind::kBiasLand;
    add_agent({.role = Role::kLoad, .cta = cta, .ops = {land}});
  }

  void arrive_bias(Cta& c, uint32_t slot) {
    Barrier& b = c.bias_empty[slot];
    if (b.pending == 0) {
      fail(who(c), "'s bias slot ", slot, " empty barrier gets an arrival past its count of ", b.init);
      return;
    }
    --b.pending;
    settle(b);
  }

  void land(const Cta& issuer, const Op& op) {
    Cta& y = peer(issuer, op.peer);
    if (y.exited) {
      fail(who(issuer), "'s load for round ", op.round, " lands in stage ", op.stage, " of rank ", y.rank,
           " after rank ", y.rank, " exited");
      return;
    }
    if (y.loads_in.size() <= op.round) y.loads_in.resize(op.round + 1, 0);
    ++y.loads_in[op.round];
    y.full[op.stage].tx -= op.bytes;
    settle(y.full[op.stage]);
  }

  void release_on(const Cta& c, uint32_t warp, const Op& op) {
    Cta& y = peer(c, op.peer);
    if (y.exited) {
      fail(who(c), "'s consumer warp ", warp, " releases stage ", op.stage, " of round ", op.round, " on rank ", y.rank,
           " after rank ", y.rank, " exited");
      return;
    }
    arrive(y, false, op.stage);
  }

  uint32_t warps_per_turn() const { return opt_.consumer_warps / kPingpongWarpgroups; }
  uint32_t warpgroups() const { return opt_.consumer_warps / kWarpsPerWarpgroup; }

  // Ground truth for S11: stage op.stage of y was last used in round - stages; every consumer
  // warp of y that read it (taking turns: the warps of that round's turn) must have finished.
  void check_overwrite(const Cta& issuer, const Cta& y, const Op& op) {
    const uint32_t stages = y.protocol.stages;
    if (op.round < stages) return;
    const uint32_t prev = op.round - stages;
    for (uint32_t w = 0; w < y.read_through.size(); ++w) {
      if (opt_.turns && w / warps_per_turn() != y.round_reader[prev]) continue;
      if (y.read_through[w] > prev) continue;
      fail(who(issuer), " overwrites stage ", op.stage, " of rank ", y.rank, " for round ", op.round, " while rank ",
           y.rank, "'s consumer warp ", w, " has not finished reading round ", prev);
      return;
    }
  }

  void check_early_read(const Cta& c, uint32_t warp, const Op& op) {
    const uint32_t due = op.round < c.loads_due.size() ? c.loads_due[op.round] : 0;
    const uint32_t in = op.round < c.loads_in.size() ? c.loads_in[op.round] : 0;
    if (in < due)
      fail(who(c), "'s consumer warp ", warp, " passes stage ", op.stage, "'s full barrier for round ", op.round,
           " with ", in, " of its ", due, " loads landed");
  }

  // ---- After the play ----

  std::string describe_wait(const Agent& a) const {
    const Cta& c = ctas_[a.cta];
    const Op& op = a.ops[a.pc];
    std::ostringstream s;
    s << "deadlock: " << who(c);
    auto barrier = [&](bool full) {
      const Barrier& b = full ? c.full[op.stage] : c.empty[op.stage];
      s << "waits on stage " << op.stage << "'s " << barrier_name(full) << " barrier for parity " << op.parity
        << ", which has completed " << b.completed << " phases and misses " << b.pending << " of its " << b.init
        << " arrivals";
      if (b.tx) s << " and " << b.tx << " bytes";
    };
    if (op.kind == OpKind::kWaitEmpty) {
      s << "'s producer (" << (op.round < c.rounds ? "round " : "teardown, round ") << op.round << ") ";
      barrier(false);
    } else if (op.kind == OpKind::kWaitFull) {
      s << "'s consumer warp " << a.warp << " (round " << op.round << ") ";
      barrier(true);
    } else if (op.kind == OpKind::kTurnWait) {
      s << "'s consumer warp " << a.warp << " waits for turn " << op.round - 1 << "'s hand-over, "
        << c.turn_passes[op.round - 1] << " of " << warps_per_turn() << " warps passed";
    } else if (op.kind == OpKind::kBiasWaitEmpty || op.kind == OpKind::kBiasWaitFull) {
      const bool full = op.kind == OpKind::kBiasWaitFull;
      const Barrier& b = full ? c.bias_full[op.stage] : c.bias_empty[op.stage];
      s << (full ? "'s consumer warp " + std::to_string(a.warp) : std::string("'s epilogue loader")) << " (tile "
        << op.round << ") waits on bias slot " << op.stage << "'s " << barrier_name(full) << " barrier for parity "
        << op.parity << ", which has completed " << b.completed << " phases and misses " << b.pending << " of its "
        << b.init << " arrivals";
    } else if (op.kind == OpKind::kBiasRelease) {
      s << "'s consumer warp " << a.warp << " waits for its warpgroup's reads of tile " << op.round << "'s bias";
    } else if (op.kind == OpKind::kDrain) {
      s << " cannot exit: its producer and consumer warps are not all done (" << c.busy << " left)";
    } else {
      s << " waits at the cluster barrier, " << clusters_[c.cluster].arrived << " of " << size_ << " CTAs arrived";
    }
    return s.str();
  }

  void report_deadlock() {
    for (const Agent& a : agents_)
      if (!a.done() && !full()) result_.violations.push_back(describe_wait(a));
  }

  // Every phase a CTA began must have completed: arrivals left over mean the counts do not
  // match the protocol's init counts.
  void check_boundaries() {
    for (const Cta& c : ctas_) {
      for (uint32_t s = 0; s < c.bias_full.size(); ++s)
        for (const bool full : {true, false}) {
          const Barrier& b = full ? c.bias_full[s] : c.bias_empty[s];
          if (!b.at_boundary())
            fail(who(c), "'s bias slot ", s, " ", barrier_name(full), " barrier ends inside phase ", b.completed, ": ",
                 b.init - b.pending, " of its ", b.init, " arrivals");
        }
      for (uint32_t s = 0; s < c.protocol.stages; ++s) {
        for (const bool full : {true, false}) {
          const Barrier& b = full ? c.full[s] : c.empty[s];
          if (!b.at_boundary())
            fail(who(c), "'s ", barrier_name(full), " barrier of stage ", s, " ends inside phase ", b.completed, ": ",
                 b.init - b.pending, " of its ", b.init, " arrivals, ", b.tx, " bytes outstanding");
        }
      }
    }
  }

  const GemmProblem& p_;
  const LaunchSpec& launch_;
  const PipelineModelOptions& opt_;
  const uint32_t size_;
  std::mt19937_64 rng_;
  std::vector<Cta> ctas_;  // cluster-major: CTA (c, r) at c * size_ + r
  std::vector<ClusterExit> clusters_;
  RingProtocol bias_;  // the bias ring's protocol (bias_slots), the same for every CTA
  std::deque<Agent> agents_;
  std::vector<uint32_t> ready_;  // agents that can make a move
  size_t finished_ = 0;
  PipelineModelResult result_;
};

}  // namespace

PipelineModelResult play_pipeline(const GemmProblem& problem, const LaunchSpec& launch,
                                  const PipelineModelOptions& options) {
  return Model(problem, launch, options).run();
}

}  // namespace tilecast::plan
