// The operand tiles of kernels/gemm_sm90/operand_tile.cuh on the CPU: for every element (row, k)
// of an A or B tile, K-major and MN-major, the byte the TMA writes it to (from the producer's box
// placement) must be the byte the consumer's wgmma descriptor reads it from (from the start
// address, leading and stride byte offsets and k16 step the consumer uses), for block_m 64 / 128
// and block_n 64..256. A wrong LBO/SBO or K step is a silent wrong answer on the GPU; here it is a
// failed equality naming the element.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/device/kernels/gemm_sm90/wgmma_desc.cuh"

namespace tilecast {
namespace {

// The TMA's limits on a box: at most 256 elements per dimension, and with the 128-byte swizzle
// an innermost extent of at most 128 bytes.
constexpr uint32_t kMaxTmaBoxDim = 256;

// Elements of a wgmma operand that disagree: TMA byte != descriptor byte. `rows_per_mma` is
// 64 for A (one m64 atom at a time, starting at mn_offset) and the tile's rows for B (N).
uint32_t mismatches(const OperandTile& t, uint32_t rows_per_mma, std::string* first = nullptr) {
  uint32_t bad = 0;
  for (uint32_t atom = 0; atom < t.rows / rows_per_mma; ++atom)
    for (uint32_t step = 0; step < t.block_k / kWgmmaK; ++step) {
      const uint32_t start = t.mn_offset(atom * rows_per_mma) + step * t.k16_step;
      for (uint32_t mn = 0; mn < rows_per_mma; ++mn)
        for (uint32_t k = 0; k < kWgmmaK; ++k) {
          const uint32_t row = atom * rows_per_mma + mn, col = step * kWgmmaK + k;
          const uint32_t written = tma_write_byte(t, row, col), read = wgmma_read_byte(t, start, mn, k);
          if (written != read && bad++ == 0 && first)
            *first = "row " + std::to_string(row) + ", k " + std::to_string(col) + ": TMA writes byte " +
                     std::to_string(written) + ", wgmma reads byte " + std::to_string(read);
        }
    }
  return bad;
}

void expect_tile_agrees(bool mn_major, uint32_t rows, uint32_t rows_per_mma) {
  SCOPED_TRACE((mn_major ? "MN-major " : "K-major ") + std::to_string(rows) + " rows");
  const OperandTile t = operand_tile(mn_major, rows, kGemmBlockK);
  std::string first;
  EXPECT_EQ(mismatches(t, rows_per_mma, &first), 0u) << first;

  // The TMA's writes fill the tile exactly: every element at its own 2-byte slot, inside it.
  std::set<uint32_t> bytes;
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < kGemmBlockK; ++k) {
      const uint32_t b = tma_write_byte(t, r, k);
      ASSERT_EQ(b % 2, 0u);
      ASSERT_LT(b, t.bytes);
      bytes.insert(b);
    }
  EXPECT_EQ(bytes.size(), size_t{rows} * kGemmBlockK);
  EXPECT_EQ(t.boxes * t.box_bytes, t.bytes) << "the boxes tile the stage's operand bytes";
  EXPECT_EQ(t.box.cols * t.box.rows * 2, t.box_bytes);
  EXPECT_LE(t.box.cols * 2, kSwizzleSpanBytes) << "a 128-byte-swizzled box is at most 128 bytes wide";
  EXPECT_LE(t.box.rows, kMaxTmaBoxDim);
  EXPECT_EQ(t.box_bytes % kSwizzleAtomBytes, 0u) << "every box starts on a swizzle atom";
}

TEST(OperandTile, ATilesAgreeKMajorAndMNMajor) {
  for (bool mn_major : {false, true})
    for (uint32_t block_m : {64u, 128u}) expect_tile_agrees(mn_major, block_m, kWgmmaAtomRows);
}

TEST(OperandTile, BTilesAgreeKMajorEveryWidth) {
  for (uint32_t n : kWgmmaBF16Widths) expect_tile_agrees(false, n, n);
}

TEST(OperandTile, BTilesAgreeMNMajorEveryWidthOf64) {
  for (uint32_t n : {64u, 128u, 192u, 256u}) expect_tile_agrees(true, n, n);
}

// The model can fail: K-major's +32-byte k16 step, or LBO and SBO swapped, on an MN-major tile
// reads other bytes than the TMA wrote (so the equalities above are not vacuous).
TEST(OperandTile, WrongMNMajorDescriptorsDisagree) {
  OperandTile t = operand_tile(true, 128, kGemmBlockK);
  OperandTile k_major_step = t;
  k_major_step.k16_step = kWgmmaK * 2;
  EXPECT_GT(mismatches(k_major_step, 128), 0u);
  OperandTile swapped = t;
  swapped.lbo = t.sbo;
  swapped.sbo = t.lbo;
  EXPECT_GT(mismatches(swapped, 128), 0u);
  OperandTile k_major_atoms = t;
  k_major_atoms.mn_major = false;  // read as K-major what the TMA wrote MN-major
  EXPECT_GT(mismatches(k_major_atoms, 128), 0u);
}

TEST(OperandTile, DescriptorFields) {
  const OperandTile mn = operand_tile(true, 256, kGemmBlockK);
  EXPECT_EQ(mn.lbo, 8192u) << "64 K rows of 128 bytes per 64-element M/N chunk";
  EXPECT_EQ(mn.sbo, 1024u) << "8 K rows of 128 bytes";
  EXPECT_EQ(mn.k16_step, 2048u) << "16 K rows of 128 bytes";
  EXPECT_EQ(mn.boxes, 4u);
  const OperandTile k = operand_tile(false, 256, kGemmBlockK);
  EXPECT_EQ(k.sbo, 1024u);
  EXPECT_EQ(k.k16_step, 32u);
  EXPECT_EQ(k.boxes, 1u);

  const uint32_t addr = 0x1C400;  // 1024-aligned, inside 227 KiB
  const uint64_t d = sw128_desc(addr, mn.lbo, mn.sbo);
  EXPECT_EQ(d & 0x3FFFu, addr >> 4);
  EXPECT_EQ((d >> 16) & 0x3FFFu, mn.lbo >> 4);
  EXPECT_EQ((d >> 32) & 0x3FFFu, mn.sbo >> 4);
  EXPECT_EQ((d >> 49) & 0x7u, 0u) << "base offset 0: tiles are 1024-aligned";
  EXPECT_EQ(d >> 62, 1u) << "128-byte swizzle";
  // The kernel steps only the low word along K: the same descriptor as stepping all 64 bits, and
  // only the start field moves (no carry out of bits 0-13), for any tile in shared memory.
  const uint64_t last = sw128_desc(sw128_desc_lo(addr, mn.lbo) + 3 * desc_step_k16(mn), mn);
  EXPECT_EQ(last & 0x3FFFu, (addr + 3 * mn.k16_step) >> 4);
  EXPECT_EQ(last >> 14, d >> 14);
  constexpr uint32_t kSmemBytes = 227 * 1024;
  for (const OperandTile& t : {mn, k})
    for (uint32_t at = 0; at + t.bytes <= kSmemBytes; at += 1024)
      for (uint32_t k16 = 0; k16 < kGemmBlockK / kWgmmaK; ++k16) {
        const uint64_t stepped = sw128_desc(sw128_desc_lo(at, t.lbo) + k16 * desc_step_k16(t), t);
        ASSERT_EQ(stepped, sw128_desc(at, t.lbo, t.sbo) + k16 * desc_step_k16(t)) << at << " " << k16;
        ASSERT_EQ(stepped >> 14, sw128_desc(at, t.lbo, t.sbo) >> 14) << at << " " << k16;
      }
}

TEST(OperandTile, GeometryFollowsTheLayout) {
  for (GemmLayout layout : {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT}) {
    GemmKernelSpec s;
    s.block_m = 128;
    s.block_n = 256;
    s.consumer_warpgroups = 2;
    s.stages = 4;
    s.layout = layout;
    ASSERT_EQ(gemm_spec_error(s), nullptr) << layout_name(layout);
    const GemmGeometry g = gemm_geometry(s);
    EXPECT_EQ(g.a_tile.mn_major, a_mn_major(layout));
    EXPECT_EQ(g.b_tile.mn_major, b_mn_major(layout));
    EXPECT_EQ(g.a_tile.boxes, a_mn_major(layout) ? 2u : 1u);
    EXPECT_EQ(g.b_tile.boxes, b_mn_major(layout) ? 4u : 1u);
    EXPECT_EQ(g.stage_tx_bytes, (128u + 256u) * 64u * 2u) << "the same bytes land in every layout";
    EXPECT_EQ(g.a_box.cols, 64u) << "64 K elements K-major, 64 M elements MN-major";
    EXPECT_EQ(g.a_box.rows, a_mn_major(layout) ? 64u : 128u);
    EXPECT_EQ(g.b_box.rows, b_mn_major(layout) ? 64u : 256u);
  }
  // N-major B takes whole 64-element spans only.
  GemmKernelSpec s;
  s.block_n = 144;
  s.layout = GemmLayout::kNN;
  EXPECT_NE(gemm_spec_error(s), nullptr);
  s.layout = GemmLayout::kTT;  // B K-major: any wgmma width
  EXPECT_EQ(gemm_spec_error(s), nullptr);
  s.layout = GemmLayout::kTN;
  s.block_n = 192;
  EXPECT_EQ(gemm_spec_error(s), nullptr);
  s.layout = static_cast<GemmLayout>(4);
  EXPECT_NE(gemm_spec_error(s), nullptr);
}

// Dense and batched problems with K-major A: the last row of tiles loads a box of the rows it has
// (all of M where one tile holds them), and its stage expects that many fewer bytes; everywhere
// else box and bytes are the tile's.
TEST(OperandTile, AsLastBoxStopsAtM) {
  for (GemmLayout layout : {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
    for (GemmType type : {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous,
                          GemmType::kMGroupedMasked, GemmType::kKGroupedContiguous})
      for (uint32_t block_m : {64u, 128u, 192u})
        for (uint32_t m : {1u, 7u, 63u, 64u, 65u, 127u, 128u, 129u, 191u, 192u, 333u, 4096u, 4097u}) {
          GemmKernelSpec s;
          s.block_m = block_m;
          s.block_n = 128;
          s.consumer_warpgroups = block_m / 64;
          s.stages = 4;
          s.layout = layout;
          s.type = type;
          if (gemm_spec_error(s)) continue;  // grouped kernels are NT only; MN-major tiles whole spans
          const GemmGeometry g = gemm_geometry(s);
          const bool stops = !a_mn_major(layout) && (type == GemmType::kNormal || type == GemmType::kBatched);
          EXPECT_EQ(a_box_stops_at_m(s), stops);
          const TmaBox last = a_last_box_for(s, g, m);
          EXPECT_EQ(last.cols, g.a_box.cols);
          // The rows of the last row of tiles: a whole tile's where M fills it.
          const uint32_t last_rows = m - (m - 1) / block_m * block_m;
          EXPECT_EQ(last.rows, stops ? last_rows : g.a_box.rows) << layout_name(layout) << " " << block_m << " m " << m;
          // The stage's bytes are the boxes': A's box and B's tile.
          const uint32_t a_bytes = a_mn_major(layout) ? g.tile_a_bytes : last.rows * last.cols * 2;
          EXPECT_EQ(stage_tx_bytes(g, last), a_bytes + g.tile_b_bytes);
          EXPECT_EQ(stage_tx_bytes(g, g.a_box), g.stage_tx_bytes);
        }
}

TEST(OperandTile, GroupedKernelsAreNTOnly) {
  for (GemmType t : {GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked, GemmType::kKGroupedContiguous}) {
    GemmKernelSpec s;
    s.type = t;
    s.layout = GemmLayout::kTN;
    EXPECT_NE(gemm_spec_error(s), nullptr);
    s.layout = GemmLayout::kNT;
    EXPECT_EQ(gemm_spec_error(s), nullptr);
  }
  GemmKernelSpec batched;
  batched.type = GemmType::kBatched;
  batched.layout = GemmLayout::kTT;
  EXPECT_EQ(gemm_spec_error(batched), nullptr);
}

// The producer's coordinates: box j of an MN-major operand at (row + 64 j, k) of the stored
// [k, rows] tensor; a K-major operand's one box at (k, row).
TEST(OperandTile, BoxCoordinates) {
  TileWork w;
  w.row = 256;
  w.col = 512;
  w.group = 3;
  w.k_begin = 0;
  int32_t c[3];
  TileCoords<GemmType::kBatched>::a(w, 2, kGemmBlockK, true, 1, c);
  EXPECT_EQ(c[0], 256 + 64);
  EXPECT_EQ(c[1], 128);
  EXPECT_EQ(c[2], 3);
  TileCoords<GemmType::kBatched>::b(w, 2, kGemmBlockK, true, 3, c);
  EXPECT_EQ(c[0], 512 + 192);
  EXPECT_EQ(c[1], 128);
  TileCoords<GemmType::kNormal>::b(w, 2, kGemmBlockK, false, 0, c);
  EXPECT_EQ(c[0], 128);
  EXPECT_EQ(c[1], 512);
  EXPECT_EQ(c[2], 0);
}

// Every spec field reaches the fingerprint the kernel checks: the layout included.
TEST(OperandTile, LayoutIsInTheSpecFingerprint) {
  GemmKernelSpec a, b;
  b.layout = GemmLayout::kNN;
  EXPECT_NE(spec_fingerprint(a), spec_fingerprint(b));
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace tilecast
