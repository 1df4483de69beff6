// wgmma shared-memory matrix descriptors for BF16 operand tiles in the 128-byte swizzle layout
// the TMA writes, K-major or MN-major (operand_tile.cuh gives each tile's byte offsets).
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/kernels/gemm_sm90/operand_tile.cuh"

namespace tilecast {

// Descriptor bits (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
// leading-dimension byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, layout type in
// 62-63 (1 = 128-byte swizzle). Base offset (49-51) stays 0: every tile is 1024-byte aligned.
TC_HOST_DEVICE constexpr uint64_t sw128_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return ((smem_addr & 0x3FFFFu) >> 4) | (uint64_t{(lbo >> 4) & 0x3FFFu} << 16) |
         (uint64_t{(sbo >> 4) & 0x3FFFu} << 32) | (uint64_t{1} << 62);
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
TC_DEVICE TC_FORCEINLINE uint64_t make_sw128_desc(const void* smem, const OperandTile& t) {
  return sw128_desc(static_cast<uint32_t>(__cvta_generic_to_shared(smem)), t.lbo, t.sbo);
}
#endif

// Moving a descriptor along K by one k16 step, in the start field's 16-byte units: 32 bytes
// along a K-major span (the hardware applies the XOR itself, given a 1024-byte aligned tile), or
// 16 rows of 128 bytes for an MN-major tile.
TC_HOST_DEVICE constexpr uint64_t desc_step_k16(const OperandTile& t) { return t.k16_step >> 4; }

}  // namespace tilecast
