// The heuristic: from a GEMM's shape, the device's facts and the caller's overrides to the kernel
// config that runs it. A plain data pipeline (candidates -> cost model -> choice), printable with
// TILECAST_PLAN_DEBUG=1, testable without a GPU.
#pragma once

#include <string>
#include <vector>

#include "tilecast/device/kernels/gemm_sm90/config.cuh"
#include "tilecast/device/scheduler/cluster.cuh"
#include "tilecast/device/scheduler/problem.cuh"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/device_facts.hpp"

namespace tilecast::plan {

// What the heuristic needs to know of a GEMM.
struct GemmShape {
  GemmType type = GemmType::kNormal;
  uint32_t m = 0, n = 0, k = 0;
  uint32_t batch = 1;
  DType out = DType::kBF16;
  bool has_c = false;
};

// A dense (batch 1) or batched problem: D[batch][m][n] = A[batch][m][k] * B[batch][n][k]^T (+ C).
// Sizes must fit 32 bits (the API validates them before it asks).
inline GemmShape dense_shape(int64_t m, int64_t n, int64_t k, int64_t batch, DType out, bool has_c) {
  GemmShape s;
  s.type = batch > 1 ? GemmType::kBatched : GemmType::kNormal;
  s.m = static_cast<uint32_t>(m);
  s.n = static_cast<uint32_t>(n);
  s.k = static_cast<uint32_t>(k);
  s.batch = static_cast<uint32_t>(batch);
  s.out = out;
  s.has_c = has_c;
  return s;
}

struct KernelConfig {
  uint32_t block_m = 128, block_n = 128;
  uint32_t stages = 4;
  uint32_t consumer_warpgroups = 2;
  ClusterShape cluster{};
  bool multicast_a = true, multicast_b = true;
  uint32_t swizzle = 8;
  // Clusters the planner expects resident (the launch re-reads the occupancy of the real kernel).
  uint32_t num_clusters = 0;
  uint32_t smem_bytes = 0;
  // A companion launch of smaller clusters for the SMs that clusters of 4 leave idle. Both
  // launches then claim units of `cluster`'s shape from one counter.
  ClusterShape companion{0, 0};
  uint32_t companion_clusters = 0;
  double estimated_us = 0;  // the cost model's figure

  bool dynamic_units() const { return companion_clusters > 0; }
  std::string describe() const;
};

// Shared memory of one CTA of this config, as the kernel's GemmSm90Smem lays it out (a test holds
// the two equal), plus the alignment slack the kernel asks for.
uint32_t gemm_smem_bytes(uint32_t block_m, uint32_t block_n, uint32_t stages, uint32_t consumer_warpgroups);

// The tile widths the kernel has a wgmma for (ptx/wgmma_bf16.cuh). The odd ones serve N that 128
// or 256 divide badly: 576 = 4 x 144 (one wave of 128 tiles at m = 4096), 2112 = 12 x 176 (2.9
// waves where 192 gives 2.67), the widths cuBLAS picks for those shapes.
inline constexpr uint32_t kBlockNs[] = {64, 96, 128, 144, 176, 192, 256};

// The dynamic-unit kernel (companion launch) keeps the claimed unit in registers too: ptxas spills
// it at 256-wide tiles, and at 192 once the ring is 5 deep with C (tests/cpu/api/
// test_kernel_variants.cpp). 176 is the widest that compiles clean there.
inline constexpr uint32_t kWidestDynamicBlockN = 176;

// Largest dynamic shared memory a CTA may have on SM90 (227 KiB).
inline constexpr uint32_t kMaxSmemBytes = kSm90MaxSmemBytes;

// The config for `shape`. Fields of `overrides` that are set are taken as given (and checked:
// an impossible override throws tilecast::Error); the rest come from the cost model.
KernelConfig choose_kernel(const GemmShape& shape, const DeviceFacts& facts, const GemmConfig& overrides = {});

// Every config the cost model weighed for `shape`, cheapest first (for TILECAST_PLAN_DEBUG and
// tilecast-plan).
std::vector<KernelConfig> rank_kernels(const GemmShape& shape, const DeviceFacts& facts,
                                       const GemmConfig& overrides = {});

}  // namespace tilecast::plan
