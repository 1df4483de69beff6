// The rule for releasing a multicast stage (S11), kept in one place for the kernel and the
// simulator.
//
// A stage of CTA X is written by whichever CTAs issue X's A and B tiles, and which CTAs those are
// changes from tile to tile (a partial cluster at an edge, an expert boundary, multicast switched
// off). A producer may only reuse stage s once every CTA it is about to write into has released
// s, and it cannot know which CTAs those were the last time s was filled. So every consumer warp
// that is done with stage s arrives once on stage s's empty barrier in every CTA of its cluster:
// a producer whose empty barrier completes knows that the whole cluster is done with s. Each
// barrier then receives exactly cluster_size * consumer_warps arrivals per phase, whatever the
// plan was. The cost is that a CTA also waits for peers it shares nothing with in that round; its
// gain is that no plan can unbalance a barrier. The scheduler keeps every CTA of a cluster in the
// same rounds (phantom CTAs included) and all CTAs of a cluster exit together after a final
// round of empty waits (S15), so no arrival ever targets a CTA that has exited.
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/scheduler/cluster.cuh"

namespace tilecast {

// The CTAs (cluster ranks) on whose empty barrier a releasing consumer warp arrives.
TC_HOST_DEVICE constexpr uint16_t release_targets(const ClusterShape& cluster, uint32_t /*rank*/) {
  return cluster.all_mask();
}

// Arrivals an empty barrier receives per phase, its init count.
TC_HOST_DEVICE constexpr uint32_t empty_barrier_arrivals(const ClusterShape& cluster, uint32_t consumer_warps) {
  return cluster.size() * consumer_warps;
}

}  // namespace tilecast
