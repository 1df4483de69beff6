// Cluster geometry: where a CTA sits in its cluster and which CTAs can share an operand.
//
// A cluster is cluster_m x cluster_n CTAs (CTAs along M x along N), launched as a 1-D cluster of
// cluster_m * cluster_n CTAs. The CTA of cluster rank r computes the tile at offset
// (r % cluster_m, r / cluster_m) from the cluster's origin tile. CTAs in the same column (same
// offset along M) compute the same rows and can share A; CTAs in the same row (same offset along N)
// compute the same columns and can share B. Masks are bit r for cluster rank r, as TMA multicast
// and remote mbarrier arrives take them.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// TMA multicast masks are 16 bits; the hardware's portable cluster limit is 8.
inline constexpr uint32_t kMaxClusterSize = 8;

struct ClusterShape {
  uint32_t m = 1;  // CTAs along M (they share B)
  uint32_t n = 1;  // CTAs along N (they share A)

  TC_HOST_DEVICE constexpr uint32_t size() const { return m * n; }
  TC_HOST_DEVICE constexpr uint32_t offset_m(uint32_t rank) const { return rank % m; }
  TC_HOST_DEVICE constexpr uint32_t offset_n(uint32_t rank) const { return rank / m; }
  TC_HOST_DEVICE constexpr uint32_t rank_of(uint32_t off_m, uint32_t off_n) const {
    return off_m + off_n * m;
  }
  TC_HOST_DEVICE constexpr uint16_t all_mask() const {
    return static_cast<uint16_t>((1u << size()) - 1u);
  }
  // The CTAs that compute the same rows as `rank` (candidates to share its A tile).
  TC_HOST_DEVICE constexpr uint16_t same_rows_mask(uint32_t rank) const {
    uint32_t mask = 0;
    for (uint32_t j = 0; j < n; ++j) mask |= 1u << rank_of(offset_m(rank), j);
    return static_cast<uint16_t>(mask);
  }
  // The CTAs that compute the same columns as `rank` (candidates to share its B tile).
  TC_HOST_DEVICE constexpr uint16_t same_cols_mask(uint32_t rank) const {
    uint32_t mask = 0;
    for (uint32_t i = 0; i < m; ++i) mask |= 1u << rank_of(i, offset_n(rank));
    return static_cast<uint16_t>(mask);
  }
  TC_HOST_DEVICE constexpr bool operator==(const ClusterShape& o) const { return m == o.m && n == o.n; }
};

// The cluster shapes tilecast builds: 1, 2 and 4 CTAs, 4 also as 2x2.
inline constexpr ClusterShape kClusterShapes[] = {{1, 1}, {2, 1}, {1, 2}, {4, 1}, {1, 4}, {2, 2}};

TC_HOST_DEVICE constexpr uint32_t lowest_rank(uint16_t mask) {
  uint32_t r = 0;
  while (r < 16 && !((mask >> r) & 1u)) ++r;
  return r;
}

TC_HOST_DEVICE constexpr uint32_t popcount16(uint16_t mask) {
  uint32_t c = 0;
  for (uint32_t r = 0; r < 16; ++r) c += (mask >> r) & 1u;
  return c;
}

}  // namespace tilecast
