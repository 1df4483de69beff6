// wgmma shared-memory matrix descriptors for BF16 operand tiles in the 128-byte swizzle layout
// the TMA writes, K-major or MN-major (operand_tile.cuh gives each tile's byte offsets).
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/kernels/gemm_sm90/operand_tile.cuh"

namespace tilecast {

// Descriptor bits (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
// leading-dimension byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, layout type in
// 62-63 (1 = 128-byte swizzle). Base offset (49-51) stays 0: every tile is 1024-byte aligned.
//
// Built as two words: only the low one depends on where the tile sits, and a k16 step moves only
// its start field (which cannot carry out: shared memory is under 256 KiB). So the k-loop adds in
// 32 bits and the high word stays a constant. With 64-bit descriptors ptxas added with carry and
// copied both words around before every wgmma: a k-step of the 128x256 kernel took 77 instructions
// between its wait and its loop branch, now 66.
TC_HOST_DEVICE constexpr uint32_t sw128_desc_lo(uint32_t smem_addr, uint32_t lbo) {
  return ((smem_addr & 0x3FFFFu) >> 4) | (((lbo >> 4) & 0x3FFFu) << 16);
}
TC_HOST_DEVICE constexpr uint32_t sw128_desc_hi(uint32_t sbo) { return ((sbo >> 4) & 0x3FFFu) | (1u << 30); }
TC_HOST_DEVICE constexpr uint64_t sw128_desc(uint32_t lo, const OperandTile& t) {
  return (uint64_t{sw128_desc_hi(t.sbo)} << 32) | lo;
}
TC_HOST_DEVICE constexpr uint64_t sw128_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t{sw128_desc_hi(sbo)} << 32) | sw128_desc_lo(smem_addr, lbo);
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// The low word of a tile's descriptor (add k16 steps to it, then sw128_desc(lo, tile)).
TC_DEVICE TC_FORCEINLINE uint32_t sw128_desc_lo(const void* smem, const OperandTile& t) {
  return sw128_desc_lo(static_cast<uint32_t>(__cvta_generic_to_shared(smem)), t.lbo);
}
#endif

// Moving a descriptor along K by one k16 step, in the start field's 16-byte units: 32 bytes
// along a K-major span (the hardware applies the XOR itself, given a 1024-byte aligned tile), or
// 16 rows of 128 bytes for an MN-major tile.
TC_HOST_DEVICE constexpr uint32_t desc_step_k16(const OperandTile& t) { return t.k16_step >> 4; }

}  // namespace tilecast
