// One operand tile of a stage (A: block_m rows, B: block_n rows, block_k = 64 along K) in shared
// memory, in the 128-byte swizzle: how the TMA lays it down and how wgmma's descriptors address it.
// The kernel (producer.cuh, consumer.cuh) takes every number from here, and so does the CPU model
// of both sides (tests/cpu/api/test_operand_tile.cpp), which checks that for each element of a
// tile the byte the TMA writes is the byte the descriptor reads.
//
// K-major (A [m, k], B [n, k] stored): one box of 64 K elements (one 128-byte span) x `rows`
// rows; row r at r * 128, 8-row groups 1024 bytes apart (the descriptor's stride byte offset).
// A k16 step moves the start 32 bytes along the span; the hardware applies the XOR itself.
//
// MN-major (A [k, m], B [k, n] stored): boxes of 64 M/N elements (one span) x 64 K rows, one per
// 64 rows of the tile, each 8 KiB: K row r of box j at j * 8192 + r * 128. In wgmma's canonical
// MN-major layout (PTX ISA, "Shared Memory Matrix Layout", 128-byte swizzle: ((8, 8, m), (8, k)) :
// ((1, 8, LBO), (64, SBO)) in elements) the leading byte offset is the step between 64-element
// M/N chunks (8192: the next box) and the stride byte offset the step between 8-row K groups
// (1024). A k16 step is 16 K rows: 2048 bytes, not K-major's 32.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// A TMA box, innermost dimension first: `cols` elements of a row, `rows` rows.
struct TmaBox {
  uint32_t cols = 0, rows = 0;
};

// Bytes of one swizzle span: 64 BF16, the widest row the TMA and wgmma's 128-byte swizzle share.
inline constexpr uint32_t kSwizzleSpanBytes = 128;
inline constexpr uint32_t kSwizzleSpanElems = kSwizzleSpanBytes / 2;
// Rows of one swizzle atom (8 x 128 = 1024 bytes): the XOR pattern repeats after it.
inline constexpr uint32_t kSwizzleAtomRows = 8;
// K elements per wgmma (k16) and their bytes along a K-major span.
inline constexpr uint32_t kWgmmaK = 16;

struct OperandTile {
  bool mn_major = false;
  uint32_t rows = 0;       // M or N extent of the tile (block_m or block_n)
  uint32_t block_k = 0;
  TmaBox box;              // what one TMA load brings
  uint32_t boxes = 0;      // loads per tile and stage
  uint32_t box_bytes = 0;  // where box j starts: j * box_bytes
  uint32_t bytes = 0;      // the whole tile
  uint32_t lbo = 0, sbo = 0;  // the descriptor's leading and stride byte offsets
  uint32_t k16_step = 0;      // bytes the descriptor's start moves per k16 step

  // Byte of the tile where rows [mn, mn + 64) start (mn a multiple of 64): an m64 atom of A.
  TC_HOST_DEVICE constexpr uint32_t mn_offset(uint32_t mn) const {
    return mn_major ? mn / kSwizzleSpanElems * box_bytes : mn * kSwizzleSpanBytes;
  }
};

// Why an operand of `rows` rows cannot be laid out `mn_major`, or null.
TC_HOST_DEVICE constexpr const char* operand_tile_error(bool mn_major, uint32_t rows) {
  if (mn_major && rows % kSwizzleSpanElems != 0)
    return "an MN-major operand's tile is a whole number of 64-element spans: block_m / block_n a multiple of 64";
  return nullptr;
}

TC_HOST_DEVICE constexpr OperandTile operand_tile(bool mn_major, uint32_t rows, uint32_t block_k) {
  OperandTile t;
  t.mn_major = mn_major;
  t.rows = rows;
  t.block_k = block_k;
  t.bytes = rows * block_k * 2;
  t.sbo = kSwizzleAtomRows * kSwizzleSpanBytes;
  if (mn_major) {
    t.box = {kSwizzleSpanElems, block_k};
    t.boxes = rows / kSwizzleSpanElems;
    t.box_bytes = block_k * kSwizzleSpanBytes;
    t.lbo = t.box_bytes;
    t.k16_step = kWgmmaK * kSwizzleSpanBytes;
  } else {
    t.box = {block_k, rows};
    t.boxes = 1;
    t.box_bytes = t.bytes;
    t.lbo = 16;  // unused by swizzled K-major layouts; 1 (in 16-byte units) by convention
    t.k16_step = kWgmmaK * 2;
  }
  return t;
}

// The 128-byte swizzle as the TMA applies it and wgmma undoes it: the 16-byte chunk index (bits
// 4-6) XOR the row within the 1024-byte atom (bits 7-9), on offsets from a 1024-aligned base.
TC_HOST_DEVICE constexpr uint32_t swizzle_128b(uint32_t offset) {
  return offset ^ (((offset >> 7) & 7u) << 4);
}

// The byte of the tile where the TMA writes element (mn, k) (row mn of A or B, column k of the
// k-step), from the boxes' placement (the producer's loads) and the box's own row-major order.
TC_HOST_DEVICE constexpr uint32_t tma_write_byte(const OperandTile& t, uint32_t mn, uint32_t k) {
  const uint32_t linear = t.mn_major ? mn / kSwizzleSpanElems * t.box_bytes + k * kSwizzleSpanBytes + mn % kSwizzleSpanElems * 2
                                     : mn * kSwizzleSpanBytes + k * 2;
  return swizzle_128b(linear);
}

// The byte a wgmma reads for element (mn, k) of its operand (mn < 64 for A, < N for B; k < 16)
// from a descriptor whose start is `start` bytes into the tile with t's byte offsets: the PTX
// ISA's canonical 128-byte-swizzle layouts, in elements (T = 8 per 16 bytes):
//   K-major:  ((8, m), (T, 2k)) : ((8T, SBO), (1, T))
//   MN-major: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
TC_HOST_DEVICE constexpr uint32_t wgmma_read_byte(const OperandTile& t, uint32_t start, uint32_t mn, uint32_t k) {
  uint32_t at = 0;
  if (t.mn_major) {
    at = mn % kSwizzleSpanElems * 2 + mn / kSwizzleSpanElems * t.lbo + k % kSwizzleAtomRows * kSwizzleSpanBytes +
         k / kSwizzleAtomRows * t.sbo;
  } else {
    at = mn % kSwizzleAtomRows * kSwizzleSpanBytes + mn / kSwizzleAtomRows * t.sbo + k * 2;
  }
  return swizzle_128b(start + at);
}

}  // namespace tilecast
