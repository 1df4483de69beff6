// What the planner needs to know of an architecture, as data: the tiles and clusters it may
// choose, the rule a cluster must obey, how ties break, and the per-SM rates of its tensor cores
// and shared memory. SM90's spec is today's rules and runs kernels; SM100's (MISSION.md S4, S6)
// plans only, so that its heuristic can be built and tested on the CPU before any GPU runs it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tilecast/device/scheduler/cluster.cuh"

namespace tilecast::plan {

enum class Arch : uint8_t { kSM90, kSM100 };

// Which plan wins when two cost the same (within rank_plans's tie fraction).
enum class ClusterTie : uint8_t {
  kSmaller,  // SM90: less coupling between CTAs, easier placement in a GPC
  kLarger,   // SM100 (S6): the larger cluster shares more of each operand
};

struct ArchSpec {
  Arch arch = Arch::kSM90;
  const char* name = "";           // as tilecast-plan --arch takes it
  bool runs_kernels = false;       // false: plans are printed and tested, never launched
  std::span<const uint32_t> block_ms;  // tile rows of one CTA, smallest first
  std::span<const uint32_t> block_ns;  // tile columns, smallest first
  std::span<const ClusterShape> clusters;
  // CTAs along M that one MMA spans (SM100's cta_group::2: a pair of SMs computes M = 2 x block_m,
  // each CTA loading its rows of A and half of B). 1 on SM90. A cluster whose m is a multiple of
  // it runs pairs; others (1x1) run the one-CTA MMA.
  uint32_t mma_cta_group = 1;
  // The problem's row blocks must be whole multiples of cluster.m and its column blocks of
  // cluster.n (S6: no partial cluster, as the 2-CTA MMA has no half-pair to mask).
  bool cluster_divides_shape = false;
  ClusterTie cluster_tie = ClusterTie::kSmaller;
  // Each consumer warpgroup's MMAs read all of B from shared memory (SM90 wgmma); on SM100 the
  // MMA reads each operand once per CTA (its accumulator lives in tensor memory).
  bool b_read_per_warpgroup = true;
  uint32_t dense_bf16_flops_per_clock = 0;  // per SM, full-rate part
  uint32_t smem_bytes_per_clock = 0;        // per SM
  const char* limits = "";  // what the spec cannot plan, for its errors
};

const ArchSpec& arch_spec(Arch arch);
// "sm90" or "sm100"; anything else throws tilecast::Error listing both.
const ArchSpec& arch_spec(const std::string& name);

}  // namespace tilecast::plan
