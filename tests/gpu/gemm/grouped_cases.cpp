#include "grouped_cases.hpp"

#include "tilecast/device/scheduler/cluster.cuh"

namespace tilecast::test {
namespace {

GroupedCase with_tiles(GroupedCase c, const ClusterShape& cs, uint32_t bm = 128, uint32_t bn = 128) {
  c.config.block_m = bm;
  c.config.block_n = bn;
  c.config.cluster_m = cs.m;
  c.config.cluster_n = cs.n;
  return c;
}

// The forms on sizes that strain their edges, for 128x128 tiles:
//   offsets: empty experts, experts of 1 and 37 rows (inside one 64-row atom), 300 and 513 rows
//     (partial last tiles, 3 and 5 blocks: partial clusters of 2 and 4 along M), 17 spare rows
//     past the last expert that must stay untouched; n = 384 is 3 column tiles (partial clusters
//     along N), K = 320 five k-steps;
//   row index: runs of 100, 256, 7, 200 and 129 rows padded to 128 (edges inside clusters of 4
//     and 2x2 along M, padding rows in most blocks), an empty expert, a trailing padding run;
//   masked: counts 0, 1, max_m = 300, 64, 129, 17; n = 380 leaves a ragged last column slab;
//     K = 200 is no multiple of 64;
//   k-grouped: K sizes 0, 104, 64, 40, 0, 256, 8 (zero groups, none but two a multiple of 64, a
//     last k-step of 8 columns: sizes are multiples of kKGroupAlignment), 300 x 200 results.
std::vector<GroupedCase> strained_forms() {
  return {
      {"edges", GroupedForm::kOffsets, {0, 37, 300, 1, 128, 0, 513, 64}, 384, 320, 1060},
      {"edges", GroupedForm::kRowIndex, {100, 0, 256, 7, 200, 129}, 320, 256, 1152},
      {"edges", GroupedForm::kMasked, {0, 1, 300, 64, 129, 17}, 380, 200, 300, 80},
      {"edges", GroupedForm::kKGrouped, {0, 104, 64, 40, 0, 256, 8}, 200, 0, 300},
  };
}

}  // namespace

std::vector<GroupedCase> grouped_correctness_cases() {
  std::vector<GroupedCase> out;
  for (const ClusterShape& cs : kClusterShapes)
    for (const GroupedCase& base : strained_forms())
      for (DType dtype : {DType::kBF16, DType::kFP32}) {
        GroupedCase c = with_tiles(base, cs);
        c.out = dtype;
        out.push_back(c);
        if (c.form == GroupedForm::kKGrouped) {
          c.accumulate = true;
          out.push_back(c);
        }
      }
  // Other tiles: one consumer warpgroup (64-row blocks), the widest tile, the narrow last slab.
  const auto forms = strained_forms();
  const GroupedCase& offsets = forms[0];
  const GroupedCase& row_index = forms[1];
  const GroupedCase& masked = forms[2];
  GroupedCase kgrouped = forms[3];
  out.push_back(with_tiles(offsets, {2, 1}, 64, 256));
  out.push_back(with_tiles(row_index, {4, 1}, 64, 96));
  out.push_back(with_tiles(masked, {1, 2}, 64, 176));
  out.push_back(with_tiles(masked, {2, 2}, 128, 144));
  kgrouped.out = DType::kFP32;
  kgrouped.accumulate = true;
  // The register edge of the k-tail handover: an FP32 epilogue with C on the widest tile.
  out.push_back(with_tiles(kgrouped, {2, 1}, 128, 256));
  out.push_back(with_tiles(kgrouped, {1, 1}, 64, 256));
  kgrouped.out = DType::kBF16;
  kgrouped.accumulate = false;
  out.push_back(with_tiles(kgrouped, {1, 4}, 128, 176));
  // K-grouped kernels in turns (pingpong: the turn's warpgroup hands its k-tails over, and the one
  // that takes the last hand-over ends the clearers' loop): the strained K sizes in every cluster
  // shape, FP32 accumulating and BF16 by turns; 64x256 tiles; every K zero; a weight gradient on 4
  // SMs, so that each CTA takes many turns and many k-tails.
  bool accumulate = true;
  for (const ClusterShape& cs : kClusterShapes) {
    GroupedCase c = with_tiles(forms[3], cs);
    c.what = "pingpong_edges";
    c.config.pingpong = 1;
    c.accumulate = accumulate;
    c.out = accumulate ? DType::kFP32 : DType::kBF16;
    accumulate = !accumulate;
    out.push_back(c);
  }
  GroupedCase turns = with_tiles(forms[3], {1, 1}, 64, 256);
  turns.what = "pingpong_edges";
  turns.config.pingpong = 1;
  out.push_back(turns);
  GroupedCase zero_k_turns{"pingpong_zero_k", GroupedForm::kKGrouped, {0, 0, 0}, 256, 64, 200};
  zero_k_turns.accumulate = true;
  zero_k_turns.out = DType::kFP32;
  zero_k_turns = with_tiles(zero_k_turns, {2, 1});
  zero_k_turns.config.pingpong = 1;
  out.push_back(zero_k_turns);
  for (const ClusterShape& cs : {ClusterShape{1, 1}, ClusterShape{2, 1}}) {
    GroupedCase wgrad{"pingpong_many_turns", GroupedForm::kKGrouped, {1000, 24, 0, 2048, 520}, 2048, 0, 1024};
    wgrad.out = DType::kFP32;
    wgrad.accumulate = true;
    wgrad = with_tiles(wgrad, cs);
    wgrad.config.pingpong = 1;
    wgrad.config.max_sms = 4;
    out.push_back(wgrad);
  }
  // Serpentine K (k_serpentine: odd waves load their k-blocks last to first) over the m-grouped
  // forms' strained edges, on 4 SMs so that each cluster's units span many waves (masked: K = 200,
  // no multiple of 64, so a reversed unit loads the partial k-step first).
  for (const GroupedCase& base : {offsets, row_index, masked})
    for (const ClusterShape& cs : {ClusterShape{1, 1}, ClusterShape{2, 1}}) {
      GroupedCase c = with_tiles(base, cs);
      c.what = "serpentine_edges";
      c.config.k_serpentine = 1;
      c.config.max_sms = 4;
      out.push_back(c);
    }
  // Nothing to compute: every expert empty (D untouched), every count 0, every K 0 (D = 0 or kept).
  out.push_back(with_tiles({"all_empty", GroupedForm::kOffsets, {0, 0, 0, 0}, 256, 128, 300}, {2, 1}));
  out.push_back(with_tiles({"all_empty", GroupedForm::kMasked, {0, 0, 0}, 256, 128, 200, 16}, {4, 1}));
  GroupedCase zero_k{"all_zero_k", GroupedForm::kKGrouped, {0, 0, 0}, 256, 64, 200};
  out.push_back(with_tiles(zero_k, {2, 2}));
  zero_k.accumulate = true;
  zero_k.out = DType::kFP32;
  out.push_back(with_tiles(zero_k, {2, 1}));
  // A skewed routing: one giant expert among 40 tiny or empty ones.
  GroupedCase skewed{"skewed", GroupedForm::kOffsets, {}, 512, 256};
  for (int g = 0; g < 41; ++g) skewed.sizes.push_back(g == 17 ? 3000 : (g * 7) % 5);
  out.push_back(with_tiles(skewed, {2, 1}));
  out.push_back(with_tiles(skewed, {4, 1}));
  // Clusters of 4 with the companion launch (dynamic units), one per form.
  for (GroupedCase c : strained_forms()) {
    c = with_tiles(c, {2, 2});
    c.config.companion = 1;
    out.push_back(c);
  }
  return out;
}

std::vector<GroupedCase> grouped_heuristic_cases() {
  std::vector<GroupedCase> out;
  // DeepGEMM's m-grouped (8 experts, 4096 rows each, scaled to 512) and masked (expected 192 of 1024)
  // shapes with one of its (n, k) pairs; a k-grouped weight gradient of four ragged groups.
  out.push_back({"deepgemm_like", GroupedForm::kOffsets, std::vector<int64_t>(8, 512), 4096, 7168});
  out.push_back({"deepgemm_like", GroupedForm::kRowIndex, {512, 300, 512, 77, 512, 512, 1, 512}, 4096, 7168});
  out.push_back({"deepgemm_like", GroupedForm::kMasked, {192, 150, 250, 0, 192, 133, 230, 201}, 4096, 7168, 1024, 192});
  out.push_back({"decode", GroupedForm::kMasked, {20, 3, 31, 0, 17, 24}, 4096, 7168, 256, 20});
  GroupedCase wgrad{"wgrad", GroupedForm::kKGrouped, {1000, 24, 0, 2048, 520}, 2048, 0, 1024};
  wgrad.out = DType::kFP32;
  wgrad.accumulate = true;
  out.push_back(wgrad);
  return out;
}

std::vector<GroupedCase> grouped_small_cases() {
  std::vector<GroupedCase> out;
  const GroupedCase forms[] = {
      {"small", GroupedForm::kOffsets, {0, 130, 7, 200}, 200, 160},
      {"small", GroupedForm::kRowIndex, {130, 7, 0, 200}, 200, 160},
      {"small", GroupedForm::kMasked, {0, 130, 7, 200}, 200, 160, 200, 80},
      {"small", GroupedForm::kKGrouped, {0, 136, 8, 64}, 200, 0, 200},
  };
  for (const ClusterShape& cs : kClusterShapes)
    for (GroupedCase c : forms) {
      c = with_tiles(c, cs);
      if (c.form == GroupedForm::kKGrouped) {
        c.accumulate = true;
        c.out = DType::kFP32;
        out.push_back(c);
        c.config.pingpong = 1;  // and in turns (these run under the sanitizers)
      }
      out.push_back(c);
    }
  return out;
}

std::vector<GroupedCase> masked_graph_cases() {
  std::vector<GroupedCase> out;
  for (const ClusterShape& cs : kClusterShapes)
    out.push_back(with_tiles({"graph", GroupedForm::kMasked, {5, 0, 256, 77}, 256, 192, 256, 64}, cs));
  return out;
}

}  // namespace tilecast::test
