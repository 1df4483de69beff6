// wgmma shared-memory matrix descriptors for K-major BF16 tiles in the 128-byte swizzle layout
// the TMA writes: rows of 64 elements (128 bytes), 8-row groups 1024 bytes apart.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// Descriptor bits (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
// leading-dimension byte offset >> 4 in 16-29 (unused by swizzled K-major layouts; 1 by
// convention), stride byte offset >> 4 in 32-45 (1024 bytes between 8-row groups), layout type in
// 62-63 (1 = 128-byte swizzle).
TC_DEVICE TC_FORCEINLINE uint64_t make_sw128_desc(const void* smem) {
  const uint64_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  constexpr uint64_t kStrideBytes = 1024;
  return ((addr & 0x3FFFFu) >> 4) | (uint64_t{1} << 16) | ((kStrideBytes >> 4) << 32) | (uint64_t{1} << 62);
}

// Moving a descriptor along K by one k16 step: 16 BF16 = 32 bytes, in units of 16 bytes. Inside a
// 128-byte swizzle span the hardware applies the XOR itself, given a 1024-byte aligned tile.
inline constexpr uint64_t kDescStepK16 = 32 >> 4;

}  // namespace tilecast
