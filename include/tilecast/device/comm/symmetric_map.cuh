// The symmetric address map: where a pointer into this rank's symmetric region lives in a peer's.
//
// Every rank maps all R regions (its own and its peers') into one reserved virtual range, region r
// at base + r * stride, the same layout in every process (NCCL's LSA windows and NVSHMEM's heap do
// the same). Each process has its own `base`, but a pointer's offset inside its region is the same
// everywhere, so translating a local pointer to a peer is one multiply-add: no table, no extra
// load from memory inside a spin loop. On one GPU the R emulated ranks share a single allocation
// split the same way.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast::comm {

struct SymmetricMap {
  uint64_t base = 0;    // address of rank 0's region in this process
  uint64_t stride = 0;  // bytes between consecutive ranks' regions
  int32_t rank = 0;     // this rank
  int32_t num_ranks = 1;

  // `ptr` points into this rank's region; the result is the same object in `peer`'s region.
  template <typename T>
  TC_HOST_DEVICE T* map(T* ptr, int32_t peer) const {
    const int64_t delta = static_cast<int64_t>(peer - rank) * static_cast<int64_t>(stride);
    return reinterpret_cast<T*>(reinterpret_cast<char*>(ptr) + delta);
  }

  // The start of `peer`'s region, and of this rank's.
  TC_HOST_DEVICE void* region(int32_t peer) const {
    return reinterpret_cast<void*>(base + static_cast<uint64_t>(peer) * stride);
  }
  TC_HOST_DEVICE void* local() const { return region(rank); }

  // True if [ptr, ptr + bytes) lies inside this rank's region.
  TC_HOST_DEVICE bool owns(const void* ptr, uint64_t bytes) const {
    const uint64_t p = reinterpret_cast<uint64_t>(ptr);
    const uint64_t lo = base + static_cast<uint64_t>(rank) * stride;
    return p >= lo && bytes <= stride && p - lo <= stride - bytes;
  }

  // The same map seen from another rank of this process (single-GPU emulation only, where every
  // rank's view shares one base).
  TC_HOST_DEVICE SymmetricMap as_rank(int32_t r) const { return {base, stride, r, num_ranks}; }
};

}  // namespace tilecast::comm
