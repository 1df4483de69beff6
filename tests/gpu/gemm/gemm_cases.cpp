#include "gemm_cases.hpp"

#include <string>
#include <tuple>
#include <utility>

#include "tilecast/device/kernels/gemm_sm90/spec.cuh"
#include "tilecast/device/scheduler/cluster.cuh"

namespace tilecast::test {
namespace {

GemmCase with_tiles(GemmCase c, const ClusterShape& cs) {
  c.config.block_m = 128;
  c.config.block_n = 128;
  c.config.cluster_m = cs.m;
  c.config.cluster_n = cs.n;
  // These cases test the unsplit kernel's tiles, clusters and epilogue: the planner must not
  // move them to split-K (whose own cases are split_k_cases.cpp).
  c.config.k_splits = 1;
  return c;
}

}  // namespace

std::vector<GemmCase> correctness_cases() {
  // With 128x128 tiles: 1024 = 8 blocks (full clusters of 2 and 4); 384 and 640 are 3 and 5
  // blocks (a partial cluster of every shape); 1000 and 700 leave partial tiles too.
  const GemmCase shapes[] = {
      {"aligned", 1024, 1024, 512},        {"partial_tiles", 1000, 700, 320}, {"partial_clusters", 384, 640, 256},
      {"odd_k", 640, 384, 200},            {"m1", 1, 512, 256},               {"large", 4096, 4096, 4096},
      {"batched", 300, 520, 136, 3},
  };
  std::vector<GemmCase> out;
  for (const ClusterShape& cs : kClusterShapes)
    for (const GemmCase& s : shapes)
      for (int variant = 0; variant < 4; ++variant) {
        GemmCase c = with_tiles(s, cs);
        c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
        c.with_c = (variant & 2) != 0;
        out.push_back(c);
      }
  // Tiles 96, 144 and 176 wide, whose last epilogue slab is narrower than the TMA store box.
  for (const uint32_t bn : {96u, 144u, 176u})
    for (const GemmCase& s : {GemmCase{"narrow_slab", 1000, 700, 320}, GemmCase{"narrow_slab_m1", 1, 576, 256}})
      for (int variant = 0; variant < 4; ++variant) {
        GemmCase c = with_tiles(s, variant < 2 ? ClusterShape{2, 1} : ClusterShape{1, 2});
        c.config.block_n = bn;
        c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
        c.with_c = variant >= 2;
        out.push_back(c);
      }
  // One epilogue slab buffer per warpgroup (the price of a sixth or fifth stage, config.cuh), on
  // few SMs so that every CTA stores many tiles through the same buffer.
  for (const auto& [bn, stages] : {std::pair{144u, 6u}, std::pair{192u, 5u}})
    for (int variant = 0; variant < 4; ++variant) {
      GemmCase c = with_tiles({"single_slab_buffer", 1500, 1000, 192}, ClusterShape{2, 1});
      c.config.block_n = bn;
      c.config.stages = stages;
      c.config.max_sms = 16;
      c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
      c.with_c = variant >= 2;
      out.push_back(c);
    }
  // Cooperative tiles on 4 SMs: each CTA takes 24 tiles, so every slot of the tile ring (stages
  // + 2) is reused, with C and a bias in 2x1.
  for (const ClusterShape& cs : {ClusterShape{1, 1}, ClusterShape{2, 1}}) {
    GemmCase c = with_tiles({"many_tiles", 1500, 1000, 192}, cs);
    c.config.max_sms = 4;
    c.with_c = c.with_bias = cs.m == 2;
    out.push_back(c);
  }
  // 192-row tiles (three consumer warpgroups): 129 rows (one tile where 128-row tiles take two),
  // 385 (a last tile of one row), 1000 (partial row and column tiles), batched; each cluster shape
  // (a partial cluster of 2 and 4 along M: 3 and 6 row blocks), both outputs with and without C,
  // and the narrow last slab of 176-wide tiles.
  const GemmCase tall[] = {{"tile192_m129", 129, 1000, 320}, {"tile192_m385", 385, 704, 256},
                           {"tile192_partial", 1000, 700, 200}, {"tile192_batched", 300, 520, 136, 3}};
  uint32_t turn = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (const GemmCase& s : tall) {
      GemmCase c = with_tiles(s, cs);
      const uint32_t variant = turn++;
      c.config.block_m = kThreeWarpgroupBlockM;
      c.config.block_n = variant % 3 == 0 ? 192 : variant % 3 == 1 ? 128 : 176;
      c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
      c.with_c = (variant & 2) != 0;
      c.with_bias = variant % 5 == 0;
      out.push_back(c);
    }
  // Column-split tiles (split_columns: each consumer warpgroup over all rows and half the
  // columns): 192x192 (three atoms of n96, a narrow 32-wide BF16 slab), 256x128 (four atoms),
  // 128x256, 192x176 (n88, a narrow 24-wide slab in either output); partial row and column tiles and a partial last k-step, an M smaller than one atom,
  // batched; each cluster shape, both outputs, with and without C, with a bias, a ragged N.
  const GemmCase split[] = {{"split_cols_partial", 1000, 700, 200}, {"split_cols_m1", 1, 520, 136},
                            {"split_cols_batched", 300, 520, 136, 3}, {"split_cols_ragged_n", 515, 389, 264}};
  const std::pair<uint32_t, uint32_t> split_tiles[] = {{192, 192}, {256, 128}, {128, 256}, {192, 176}};
  for (const ClusterShape& cs : kClusterShapes)
    for (const GemmCase& s : split) {
      if (cs.m > 2) continue;  // not a column-split cluster (spec.cuh)
      GemmCase c = with_tiles(s, cs);
      const uint32_t variant = turn++;
      std::tie(c.config.block_m, c.config.block_n) = split_tiles[variant % 4];
      c.config.split_columns = 1;
      c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
      c.with_c = (variant & 2) != 0;
      c.with_bias = variant % 5 == 0 && !c.with_c;  // not both (spec.cuh)
      out.push_back(c);
    }
  // A stored M-major (TT: three 64-row boxes of A, B K-major) and B stored N-major (NN, 128x256:
  // each warpgroup's 128 columns two of B's 64-column boxes).
  for (const GemmLayout layout : {GemmLayout::kTT, GemmLayout::kNN}) {
    GemmCase c = with_tiles({"split_cols_layout", 1000, 700, 200}, ClusterShape{2, 1});
    c.layout = layout;
    c.config.block_m = layout == GemmLayout::kTT ? 192 : 128;
    c.config.block_n = layout == GemmLayout::kTT ? 192 : 256;
    c.config.split_columns = 1;
    c.with_c = true;
    out.push_back(c);
  }
  // Ping-pong kernels (pingpong: the two consumer warpgroups take whole tiles in turn): 128x128,
  // 64x256 and 128x96 (a narrow last slab) over partial tiles, partial clusters (phantom tiles
  // take turns too, and 3 x 5 blocks leave the last hand-over unpaired), M = 1 and a batch; every
  // cluster shape, both outputs, with and without C and a bias (the epilogue loader follows the
  // turns; a phantom's turn has no bias tile). Then on a few SMs, so that each CTA takes many
  // turns (with C and a bias in 2x1), and in the other layouts.
  const GemmCase turns[] = {{"pingpong_partial", 1000, 700, 320}, {"pingpong_partial_clusters", 384, 640, 200},
                            {"pingpong_m1", 1, 512, 256}, {"pingpong_batched", 300, 520, 136, 3}};
  const std::pair<uint32_t, uint32_t> turn_tiles[] = {{128, 128}, {64, 256}, {128, 96}};
  for (const ClusterShape& cs : kClusterShapes)
    for (const GemmCase& s : turns) {
      GemmCase c = with_tiles(s, cs);
      const uint32_t variant = turn++;
      std::tie(c.config.block_m, c.config.block_n) = turn_tiles[variant % 3];
      c.config.pingpong = 1;
      c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
      c.with_c = (variant & 2) != 0;
      c.with_bias = variant % 3 != 0;
      c.bias_dtype = (variant & 4) ? DType::kFP32 : DType::kBF16;
      out.push_back(c);
    }
  for (const ClusterShape& cs : {ClusterShape{1, 1}, ClusterShape{2, 1}}) {
    GemmCase c = with_tiles({"pingpong_many_turns", 1500, 1000, 192}, cs);
    c.config.pingpong = 1;
    c.config.max_sms = 4;
    c.with_c = c.with_bias = cs.m == 2;
    out.push_back(c);
  }
  for (const GemmLayout layout : {GemmLayout::kTT, GemmLayout::kNN, GemmLayout::kTN}) {
    GemmCase c = with_tiles({"pingpong_layout", 1000, 700, 200}, ClusterShape{1, 2});
    c.layout = layout;
    c.config.pingpong = 1;
    out.push_back(c);
  }
  // Serpentine K (k_serpentine: the odd waves load their k-blocks last to first): on few SMs, so
  // that a CTA's units span many waves of both directions, over a K whose last k-step is partial
  // (the first one a reversed unit loads); every cluster shape (a cluster's CTAs reverse
  // together, sharing their multicast loads), both outputs, C and a bias, a batch, the layouts,
  // split-K summed by the reduce kernel and across a cluster, swapped operands and ping-pong.
  const GemmCase serpentine[] = {{"serpentine_waves", 1500, 1000, 712}, {"serpentine_batched", 700, 520, 392, 3}};
  int turn_k = 0;
  for (const ClusterShape& cs : kClusterShapes)
    for (const GemmCase& s : serpentine) {
      GemmCase c = with_tiles(s, cs);
      const int variant = turn_k++;
      c.config.k_serpentine = 1;
      c.config.max_sms = 8;
      c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
      c.with_c = (variant & 2) != 0;
      c.with_bias = variant % 3 == 0;
      out.push_back(c);
    }
  for (const GemmLayout layout : {GemmLayout::kTT, GemmLayout::kNN, GemmLayout::kTN}) {
    GemmCase c = with_tiles({"serpentine_layout", 1000, 700, 712}, ClusterShape{2, 1});
    c.layout = layout;
    c.config.k_serpentine = 1;
    c.config.max_sms = 6;
    out.push_back(c);
  }
  for (const int cluster_reduce : {0, 1}) {
    GemmCase c = with_tiles({"serpentine_split", 700, 1000, 1800}, ClusterShape{1, 1});
    c.config.k_serpentine = 1;
    c.config.k_splits = 4;
    c.config.cluster_reduce = cluster_reduce;
    c.config.max_sms = 16;
    c.with_c = cluster_reduce == 1;
    out.push_back(c);
  }
  {
    GemmCase c{"serpentine_swapped", 16, 3000, 712};
    c.config.k_serpentine = 1;
    c.config.swap_ab = 1;
    c.config.max_sms = 4;
    out.push_back(c);
    GemmCase t = with_tiles({"serpentine_pingpong", 1500, 1000, 712}, ClusterShape{1, 1});
    t.config.k_serpentine = 1;
    t.config.pingpong = 1;
    t.config.max_sms = 4;
    t.with_c = t.with_bias = true;
    out.push_back(t);
  }
  return out;
}

std::vector<GemmCase> heuristic_cases() {
  return {{"deepgemm", 4096, 2112, 7168}, {"deepgemm", 128, 4096, 7168},  {"deepgemm", 4096, 576, 7168},
          {"deepgemm", 128, 576, 7168},
          {"small_m", 64, 7168, 2048},    {"wide", 2048, 24576, 1536},    {"odd", 333, 2112, 712},
          {"square", 8192, 8192, 1024}};
}

std::vector<GemmCase> companion_cases() {
  std::vector<GemmCase> out;
  const GemmCase shapes[] = {{"square", 4096, 4096, 1024}, {"odd", 1000, 1320, 200}, {"wide", 2048, 8192, 512}};
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}})
    for (const GemmCase& s : shapes) {
      GemmCase c = with_tiles(s, cs);
      c.config.companion = 1;
      out.push_back(c);
    }
  // The dynamic-unit kernel with C on a narrow last slab (176) and on the widest tile (256), and
  // with FP32 output, C and a bias at 256.
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}})
    for (const uint32_t bn : {176u, 256u}) {
      GemmCase c = with_tiles({"odd_wide_tile", 1000, 1320, 200}, cs);
      c.config.block_n = bn;
      c.config.companion = 1;
      c.with_c = true;
      out.push_back(c);
    }
  // The dynamic-unit kernel with 192-row tiles.
  for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{1, 4}}) {
    GemmCase c = with_tiles({"tile192_companion", 1000, 1320, 200}, cs);
    c.config.block_m = kThreeWarpgroupBlockM;
    c.config.block_n = 192;
    c.config.companion = 1;
    out.push_back(c);
  }
  GemmCase heavy = with_tiles({"odd_wide_tile_fp32_bias", 1000, 1320, 200}, {1, 4});
  heavy.config.block_n = 256;
  heavy.config.companion = 1;
  heavy.out = DType::kFP32;
  heavy.with_c = true;
  heavy.with_bias = true;
  out.push_back(heavy);
  return out;
}

std::vector<GemmCase> multicast_worth_cases() {
  // 1160 rows are 10 tiles of 128 (the last 8 rows; a partial cluster of 4 along M), 1320
  // columns 6 tiles of 256 or 11 of 128 (partial tiles, partial clusters along N), K = 520 is
  // 8 k-steps and 8 columns.
  const GemmCase shape{"mcast", 1160, 1320, 520};
  struct Tile {
    uint32_t block_n, stages;
  };
  std::vector<GemmCase> out;
  for (const Tile t : {Tile{256, 4}, Tile{128, 6}}) {
    auto add = [&](ClusterShape cs, bool unicast, int companion) {
      GemmCase c = with_tiles(shape, cs);
      c.config.block_n = t.block_n;
      c.config.stages = t.stages;
      c.config.companion = companion;
      if (unicast) c.config.multicast_a = c.config.multicast_b = 0;
      out.push_back(c);
    };
    for (const ClusterShape& cs : kClusterShapes) add(cs, false, 0);
    for (const ClusterShape cs : {ClusterShape{2, 1}, ClusterShape{1, 2}, ClusterShape{2, 2}}) add(cs, true, 0);
    for (const ClusterShape cs : {ClusterShape{2, 2}, ClusterShape{4, 1}, ClusterShape{1, 4}}) add(cs, false, 1);
  }
  return out;
}

std::vector<GemmCase> small_cases() {
  std::vector<GemmCase> out;
  uint32_t i = 0;
  for (const ClusterShape& cs : kClusterShapes) {
    // 3 x 3 tiles of 128 and a K of two and a half k-steps; C (read by the epilogue loader)
    // everywhere, a bias on every other shape, FP32 output on every third.
    GemmCase c = with_tiles({"small", 300, 330, 160}, cs);
    c.with_c = true;
    c.with_bias = i % 2 == 1;
    c.out = i % 3 == 2 ? DType::kFP32 : DType::kBF16;
    c.alpha = 0.5f;
    c.beta = 2.0f;
    ++i;
    out.push_back(c);
  }
  GemmCase companion = with_tiles({"small_companion", 600, 700, 128}, {2, 2});
  companion.config.companion = 1;
  out.push_back(companion);
  return out;
}

std::vector<GemmCase> graph_cases() {
  std::vector<GemmCase> out;
  GemmCase planner{"graph_planner", 1000, 1320, 256};
  GemmCase pair = with_tiles({"graph", 1000, 1320, 256}, {2, 1});
  GemmCase four = with_tiles({"graph", 1000, 1320, 256}, {2, 2});
  four.config.companion = 1;
  for (GemmCase c : {planner, pair, four})
    for (bool with_c : {false, true}) {
      c.with_c = with_c;
      out.push_back(c);
    }
  return out;
}

GemmCase graph_other_buffers_case() { return {"graph_other_buffers", 512, 768, 192, 1, DType::kFP32}; }

GemmCase graph_unprepared_case() { return {"graph_unprepared", 333, 777, 136}; }

std::vector<GemmCase> epilogue_cases() {
  std::vector<GemmCase> out;
  const GemmCase shapes[] = {{"epi_aligned", 1024, 1024, 512}, {"epi_ragged", 1000, 700, 320}};
  const ClusterShape clusters[] = {{2, 1}, {1, 2}, {2, 2}};
  struct Ab {
    float alpha, beta;
  };
  const Ab abs[] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, 2.0f}};
  uint32_t rotate = 0;
  for (const GemmCase& shape : shapes)
    for (DType dt : {DType::kBF16, DType::kFP32})
      for (int bias = 0; bias < 3; ++bias) {  // none, BF16, FP32
        const auto make = [&](bool with_c, CSource src, Ab ab) {
          GemmCase c = with_tiles(shape, clusters[rotate++ % 3]);
          c.out = dt;
          c.with_c = with_c;
          c.c_source = src;
          c.alpha = ab.alpha;
          c.beta = with_c ? ab.beta : 1.0f;
          c.with_bias = bias > 0;
          c.bias_dtype = bias == 1 ? DType::kBF16 : DType::kFP32;
          out.push_back(c);
        };
        make(false, CSource::kSeparate, {1.0f, 1.0f});
        make(false, CSource::kSeparate, {0.5f, 1.0f});
        for (const Ab& ab : abs) {
          make(true, CSource::kSeparate, ab);
          make(true, CSource::kInPlace, ab);
        }
        make(true, CSource::kNaN, {0.5f, 0.0f});
      }
  // Narrow last slabs (96- and 144-wide tiles) and the widest tile (256: C and a bias, or FP32
  // output with either, were refused there until ptx::trap_kernel) with C and a bias, and the
  // planner's own choice.
  for (const uint32_t bn : {96u, 144u, 256u})
    for (DType dt : {DType::kBF16, DType::kFP32}) {
      GemmCase c = with_tiles({bn == 256 ? "epi_widest" : "epi_narrow", 1000, 700, 320}, {2, 1});
      c.config.block_n = bn;
      c.out = dt;
      c.with_c = true;
      c.alpha = 0.5f;
      c.beta = 2.0f;
      c.with_bias = true;
      out.push_back(c);
    }
  for (DType dt : {DType::kBF16, DType::kFP32}) {
    GemmCase c{"epi_planner", 4096, 576, 7168};
    c.out = dt;
    c.with_c = true;
    c.with_bias = true;
    c.bias_dtype = DType::kBF16;
    out.push_back(c);
  }
  return out;
}

}  // namespace tilecast::test

namespace tilecast::test {

std::vector<GemmCase> layout_cases() {
  constexpr GemmLayout kLayouts[] = {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT};
  // Extra elements past each row, beyond the 16-byte alignment: a strided view of a wider buffer.
  constexpr int64_t kRowPadding = 24;
  // With 128x128 tiles: 573 rows and 650 columns end in a tile whose second 64-row box lies
  // wholly outside the matrix (61 and 10 rows in the last tile: the TMA zero-fills the whole box
  // of an MN-major operand there); K = 203 is no multiple of 8, so the K-major operands' rows are
  // padded (with NaN) and the MN-major ones have 203 rows; the padded case reads a sub-view.
  const GemmCase shapes[] = {{"layout_aligned", 1024, 1024, 512}, {"layout_ragged", 573, 650, 200},
                             {"layout_odd_k", 640, 384, 203},     {"layout_batched", 300, 520, 136, 3},
                             {"layout_padded", 1000, 700, 320}};
  std::vector<GemmCase> out;
  for (const GemmLayout layout : kLayouts) {
    uint32_t rotate = 0;
    // Every cluster shape (multicast of A along N, of B along M, both in 2x2), each shape, and
    // the four outputs (BF16 / FP32, with / without C) taking turns over them.
    for (const ClusterShape& cs : kClusterShapes)
      for (const GemmCase& s : shapes) {
        GemmCase c = with_tiles(s, cs);
        c.layout = layout;
        const uint32_t variant = rotate++ % 4;
        c.out = (variant & 1) ? DType::kFP32 : DType::kBF16;
        c.with_c = (variant & 2) != 0;
        if (std::string(s.what) == "layout_padded") c.row_padding = kRowPadding;
        out.push_back(c);
      }
    // Other tiles: 64 and 192 rows (one and three consumer warpgroups; an M-major A in one and
    // three boxes), 64 / 192 / 256 columns (one, three and four boxes of an N-major B), and with B
    // K-major a 144-wide tile (its narrow last slab).
    const bool n_major = b_mn_major(layout);
    for (const auto& [bm, bn] : {std::pair{64u, 128u}, std::pair{128u, 64u}, std::pair{128u, 192u},
                                 std::pair{128u, 256u}, std::pair{128u, n_major ? 128u : 144u},
                                 std::pair{192u, 128u}, std::pair{192u, 192u}}) {
      for (int variant = 0; variant < 2; ++variant) {
        GemmCase c = with_tiles({"layout_tiles", 1000, 1320, 264}, variant ? ClusterShape{2, 1} : ClusterShape{1, 2});
        c.layout = layout;
        c.config.block_m = bm;
        c.config.block_n = bn;
        c.out = variant ? DType::kFP32 : DType::kBF16;
        c.with_c = variant == 1 && bn <= 192;  // 256-wide tiles take no FP32 epilogue with C
        out.push_back(c);
      }
    }
    // The epilogue: C in place, C never read (NaN, beta 0), alpha and beta with a bias.
    GemmCase in_place = with_tiles({"layout_epi", 1000, 700, 320}, {2, 2});
    in_place.layout = layout;
    in_place.with_c = true;
    in_place.c_source = CSource::kInPlace;
    out.push_back(in_place);
    GemmCase nan_c = in_place;
    nan_c.c_source = CSource::kNaN;
    nan_c.beta = 0.0f;
    nan_c.config.cluster_m = 4;
    nan_c.config.cluster_n = 1;
    out.push_back(nan_c);
    GemmCase scaled = with_tiles({"layout_epi", 1000, 700, 320}, {1, 4});
    scaled.layout = layout;
    scaled.with_c = true;
    scaled.alpha = 0.5f;
    scaled.beta = 2.0f;
    scaled.with_bias = true;
    scaled.out = DType::kFP32;
    out.push_back(scaled);
    // A 2x2 cluster with multicast switched off (each CTA loads its own tiles: the same kernel,
    // another schedule).
    GemmCase unicast = with_tiles({"layout_unicast", 1000, 1320, 200}, {2, 2});
    unicast.layout = layout;
    unicast.config.multicast_a = 0;
    unicast.config.multicast_b = 0;
    out.push_back(unicast);
    // Clusters of 4 with the companion launch.
    GemmCase companion = with_tiles({"layout_companion", 1000, 1320, 200}, {2, 2});
    companion.layout = layout;
    companion.config.companion = 1;
    out.push_back(companion);
    // The planner's own choices on MISSION.md shapes.
    for (const GemmCase& s : {GemmCase{"layout_planner", 4096, 2112, 7168}, GemmCase{"layout_planner", 128, 4096, 7168},
                              GemmCase{"layout_planner", 4096, 576, 7168}, GemmCase{"layout_planner", 8, 4, 64, 2}}) {
      GemmCase c = s;
      c.layout = layout;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace tilecast::test
