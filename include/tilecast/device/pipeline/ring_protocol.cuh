// The protocol of a ring of shared-memory stages guarded by full/empty mbarrier pairs, stated as
// numbers and masks: the kernel executes it (pipeline/stage_ring.cuh) and the CPU pipeline model
// plays it (src/plan/pipeline_model.cpp), so a fault planted in a protocol shows in the model
// exactly as it would on the GPU.
//
// The GEMM's operand ring (S11). A stage of CTA X is written by whichever CTAs issue X's A and B
// tiles, and which CTAs those are changes from tile to tile (a partial cluster at an edge, an
// expert boundary, multicast switched off). A producer may reuse stage s only once every CTA it
// is about to write into has released s, and it cannot know which CTAs those were the last time
// s was filled. So every consumer warp that is done with stage s arrives once on stage s's empty
// barrier in every CTA of its cluster: a producer whose empty barrier completes knows the whole
// cluster is done with s. Each empty barrier then receives exactly cluster_size * consumer_warps
// arrivals per phase, whatever the plan was. The cost: a CTA also waits for peers it shares
// nothing with in that round; the gain: no plan can unbalance a barrier. The scheduler keeps
// every CTA of a cluster in the same rounds (phantom CTAs included), and the producer waits one
// more round of empty barriers on every stage before it leaves (S15), so no arrival and no
// multicast targets a CTA that has exited.
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/scheduler/cluster.cuh"

namespace tilecast {

struct RingProtocol {
  uint32_t stages = 1;
  // Plain arrivals that complete a full barrier's phase besides its transaction bytes (the
  // filler's own arrive.expect_tx).
  uint32_t full_arrivals = 1;
  // Init count of every empty barrier: the arrivals that complete one of its phases.
  uint32_t empty_arrivals = 1;
  // Readers per CTA that each release every stage they read (the GEMM's consumer warps).
  uint32_t releasers_per_cta = 1;
  // Cluster ranks on whose empty barrier a releasing reader arrives (bit r: rank r); 0: the
  // reader's own CTA only (a ring no peer fills).
  uint16_t release_mask = 1;
  // Rounds of empty-barrier waits the filler makes after its last fill, before it leaves (S15).
  uint32_t teardown_rounds = 0;
};

// The operand ring of one GEMM CTA: filled by its producer thread (and by the peers that multicast
// into it), read by its consumer warps.
TC_HOST_DEVICE constexpr RingProtocol operand_ring_protocol(const ClusterShape& cluster, uint32_t consumer_warps,
                                                            uint32_t stages) {
  RingProtocol p;
  p.stages = stages;
  p.full_arrivals = 1;
  p.empty_arrivals = cluster.size() * consumer_warps;
  p.releasers_per_cta = consumer_warps;
  p.release_mask = cluster.all_mask();
  p.teardown_rounds = stages;
  return p;
}

// The dynamic-unit ring (kernels/gemm_sm90/unit_source.cuh): rank 0 claims a unit and writes it
// into every CTA's slot; every reader of every CTA (the producer thread and each consumer warp)
// releases the slot on rank 0 only, the one CTA that refills. Its teardown is the kernel's final
// cluster barrier, which every reader passes after its last release.
TC_HOST_DEVICE constexpr RingProtocol unit_ring_protocol(const ClusterShape& cluster, uint32_t readers_per_cta,
                                                         uint32_t slots) {
  RingProtocol p;
  p.stages = slots;
  p.full_arrivals = 1;
  p.empty_arrivals = cluster.size() * readers_per_cta;
  p.releasers_per_cta = readers_per_cta;
  p.release_mask = 1;
  p.teardown_rounds = 0;
  return p;
}

// A ring inside one CTA (the epilogue's C and bias rings): one filler thread, `releasers` readers
// that each release every stage on their own CTA. No teardown: filler and readers share one CTA,
// whose shared memory lives until its last thread exits, and the readers wait for every fill.
TC_HOST_DEVICE constexpr RingProtocol local_ring_protocol(uint32_t stages, uint32_t releasers) {
  RingProtocol p;
  p.stages = stages;
  p.full_arrivals = 1;
  p.empty_arrivals = releasers;
  p.releasers_per_cta = releasers;
  p.release_mask = 0;
  p.teardown_rounds = 0;
  return p;
}

// The epilogue's bias ring (epilogue_loader.cuh): one slot a valid tile, each released by the first
// thread of every consumer warpgroup that stores the tile: all of them, or with ping-pong the one
// whose turn it is (the other passes over the slot: Epilogue::skip_tile).
TC_HOST_DEVICE constexpr RingProtocol bias_ring_protocol(uint32_t slots, uint32_t consumer_warpgroups, bool pingpong) {
  return local_ring_protocol(slots, pingpong ? 1 : consumer_warpgroups);
}

}  // namespace tilecast
