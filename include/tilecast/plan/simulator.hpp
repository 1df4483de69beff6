// A CPU simulator that plays every CTA of one or two persistent launches through the device
// scheduler (include/tilecast/device/scheduler) and checks the invariants the kernel relies on:
// every output tile once, multicast only between CTAs that share the operand tile, balanced
// empty-barrier arrivals per round under the ring protocol (pipeline/ring_protocol.cuh), the CTAs of
// a cluster in lockstep. Whether the protocol also keeps a stage from being overwritten while a peer
// reads it, or an arrival from reaching an exited CTA, is a question of order: the pipeline model
// (pipeline_model.hpp) plays that. The simulator also counts the traffic model: L2 -> SM bytes and
// the makespan in k-steps.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tilecast/device/pipeline/ring_protocol.cuh"
#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::plan {

// Tests only: changes the ring protocol of CTA `rank` of a cluster, to plant a fault.
using ProtocolHook = std::function<void(uint32_t rank, RingProtocol&)>;

// The operand ring's protocol as CTA `rank` runs it: operand_ring_protocol, then the hook's change.
RingProtocol cta_ring_protocol(const ClusterShape& cluster, uint32_t consumer_warps, uint32_t stages, uint32_t rank,
                               const ProtocolHook& hook);

// One persistent launch: its config and how many clusters it runs.
struct LaunchSpec {
  TileConfig config;
  uint32_t num_clusters = 1;
};

enum class ClaimMode {
  kStatic,   // cluster c takes units c, c + num_clusters, ... (one launch only)
  kDynamic,  // clusters of all launches claim units from one atomic counter
};

struct SimOptions {
  ClaimMode mode = ClaimMode::kStatic;
  uint32_t stages = 4;          // ring depth
  uint32_t consumer_warps = 8;  // warps that release each stage, per CTA
  uint32_t elem_bytes = 2;      // BF16 operands
  // kDynamic: 0 lets the cluster that is free first claim next (the timing model); any other
  // value picks the next claimer at random from this seed (any interleaving must be correct).
  uint64_t seed = 0;
  // false: count traffic and time only, one pass per tile instead of per round, with none of the
  // invariant checks (the planner's fast path; the property tests keep them on).
  bool check = true;
  // Where to stop collecting violations (a broken plan would otherwise repeat itself).
  uint32_t max_violations = 20;
  // Tests only: rewrites a cluster's plan for one step before it is checked, to plant the
  // faults a broken scheduler would make and show that the checks catch them.
  std::function<void(const ClusterShape&, std::vector<TileWork>&)> mutate;
  // Tests only: the release targets and init counts the balance check counts with.
  ProtocolHook protocol;
};

struct SimStats {
  uint64_t tiles = 0;                  // valid tiles computed
  uint64_t tile_k_steps = 0;           // their k-steps
  uint64_t phantom_k_steps = 0;        // k-steps run by phantom CTAs
  uint64_t l2_to_sm_bytes = 0;         // operand bytes read from L2, each multicast counted once
  uint64_t l2_a_bytes = 0;             // the part of them that is A
  uint64_t l2_to_sm_bytes_unicast = 0; // the same tiles with every CTA loading its own
  uint64_t units = 0;                  // units claimed that held work
  uint64_t makespan_k_steps = 0;       // k-steps of the busiest cluster (one k-step per round)
  uint32_t ctas = 0;                   // CTAs launched (all launches)
};

struct SimResult {
  SimStats stats;
  std::vector<std::string> violations;  // empty when every invariant held
  bool ok() const { return violations.empty(); }
};

SimResult simulate(const GemmProblem& problem, std::span<const LaunchSpec> launches,
                   const SimOptions& options);

}  // namespace tilecast::plan
