// A CPU model of the operand ring's protocol in time: it plays one static persistent launch with
// every CTA's producer, consumer warps and exit as agents, their moves interleaved at random from
// a seed, and mbarriers that complete, reset and answer parity waits as the hardware's do.
//
// The scheduler simulator (simulator.hpp) checks each round's plan and counts; what it cannot see
// is order: whether a multicast can land in a stage a peer is still reading (S11), or an arrival
// reach a CTA that has left (S15). Those depend on the release rule, the init counts and the
// teardown, which this model takes from pipeline/ring_protocol.cuh, as the kernel does, so that a
// test can change them and see the checks fire. The checks are ground truth, kept apart from the
// barriers the model plays:
//   - overwrite: a load into stage s of CTA y for round R while a consumer warp of y has not
//     finished reading round R - stages;
//   - early read: a consumer passes its full barrier for round R before all of R's loads landed
//     (a parity wait more than one phase ahead of its barrier passes early: this catches it);
//   - exit: an arrival or a load aimed at a CTA that has exited;
//   - deadlock: nothing can move but not everything is done (each stuck agent says what it waits on);
//   - balance: at the end every barrier sits at a phase boundary, and no arrival overflows a phase.
// With a bias ring (bias_slots), its own overwrite and early-read checks: the loader writes a slot
// while a warp that reads its previous tile's bias has not finished, or a warp passes a slot's
// full barrier before that tile's bias landed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilecast/plan/simulator.hpp"

namespace tilecast::plan {

struct PipelineModelOptions {
  uint32_t stages = 4;          // ring depth
  uint32_t consumer_warps = 8;  // consumer warps per CTA
  // Ping-pong (GemmKernelSpec::pingpong): the consumer warps are two warpgroups that take the
  // CTA's tiles in turn; only the turn's warps wait for and release its rounds (the ring's
  // releasers are half the warps), and turn t + 1 starts only once turn t's warps have passed its
  // rounds (consumer.cuh's turn barriers).
  bool turns = false;
  // Tests only: turns without the hand-over, to plant a fault.
  bool skip_turn_waits = false;
  // The epilogue's bias ring beside the operand ring, this many slots (the kernel's: 2; 0: no
  // bias): the epilogue loader fills one slot a valid tile; after its main loop each consumer
  // warpgroup that stores the tile (taking turns: the turn's) reads it, and its first warp releases
  // it once the warpgroup's four warps are done (bias_ring_protocol); taking turns, the other
  // warpgroup passes over the slot (Epilogue::skip_tile).
  uint32_t bias_slots = 0;
  // Tests only, to plant faults: taking turns, each warpgroup counts only its own tiles' slots (no
  // skip); the bias ring's release count.
  bool bias_without_skip = false;
  std::optional<uint32_t> bias_releasers;
  uint32_t elem_bytes = 2;      // BF16 operands: the transaction bytes of a box
  uint64_t seed = 1;            // the interleaving
  // The kernel's final cluster barrier (leave_cluster, in kernels with dynamic units only): no CTA
  // exits before all of its cluster have finished. Off, as in kernels with static units, each CTA
  // exits as soon as its own agents are done, and only the producer's teardown
  // (protocol.teardown_rounds) keeps the peers' arrivals from reaching an exited CTA.
  bool exit_barrier = true;
  // Tests only: changes the protocol of each rank of a cluster, to plant faults.
  ProtocolHook protocol;
  // Tests only: the producer's rounds without an empty wait (the kernel's: one pass over the
  // ring, protocol.stages), to plant a fault.
  std::optional<uint32_t> fresh_rounds;
  uint32_t max_violations = 20;
};

struct PipelineModelStats {
  uint64_t moves = 0;            // agent moves played
  uint64_t rounds = 0;           // stage uses, all CTAs
  uint64_t multicast_loads = 0;  // loads written into more than one CTA
};

struct PipelineModelResult {
  PipelineModelStats stats;
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
};

PipelineModelResult play_pipeline(const GemmProblem& problem, const LaunchSpec& launch,
                                  const PipelineModelOptions& options);

}  // namespace tilecast::plan
