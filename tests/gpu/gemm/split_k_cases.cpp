#include "split_k_cases.hpp"

namespace tilecast::test {
namespace {

GemmConfig splits(uint32_t k_splits, uint32_t cluster_m = 0, uint32_t cluster_n = 0) {
  GemmConfig c;
  c.k_splits = k_splits;
  c.cluster_m = cluster_m;
  c.cluster_n = cluster_n;
  return c;
}

// Each forced split twice: summed by the reduce kernel, and inside the GEMM (fused_reduce); a
// third time across a cluster of its slices (cluster_reduce) where it can be one: 2, 4 or 8
// slices, no multicast cluster.
void add_both_reduces(std::vector<GemmCase>& out, GemmCase c) {
  c.config.fused_reduce = 0;
  out.push_back(c);
  c.config.fused_reduce = 1;
  out.push_back(c);
  const uint32_t s = c.config.k_splits;
  if ((s == 2 || s == 4 || s == 8) && c.config.cluster_m == 0) {
    c.config.fused_reduce = -1;
    c.config.cluster_reduce = 1;
    out.push_back(c);
  }
}

// The cluster reduce for a case whose forced split cannot be a cluster: the same case in 4 slices.
void add_cluster_reduce(std::vector<GemmCase>& out, GemmCase c) {
  c.config.k_splits = 4;
  c.config.cluster_reduce = 1;
  out.push_back(c);
}

}  // namespace

std::vector<GemmCase> split_k_cases() {
  std::vector<GemmCase> out;
  const int64_t ms[] = {1, 7, 64, 65, 128, 129, 255, 256};
  // Each m with a ragged N and a K that is no multiple of 64, over each forced split in turn and
  // the planner's choice (0); BF16 and FP32 out alternate.
  const uint32_t forced[] = {2, 3, 8, 0};
  int turn = 0;
  for (int64_t m : ms)
    for (uint32_t s : forced) {
      GemmCase c;
      c.what = "splitk";
      c.m = m;
      c.n = 1000 + 8 * (turn % 3) + (turn % 2 ? 4 : 0);  // ragged against every tile width
      c.k = 4096 + 40 * (turn % 4);
      c.out = turn % 2 ? DType::kFP32 : DType::kBF16;
      c.config = splits(s);
      if (s == 0) out.push_back(c);
      else add_both_reduces(out, c);
      ++turn;
    }
  // The epilogue through the reduce kernel: C (separate, in place, NaN with beta 0), alpha, beta,
  // a bias of either dtype.
  const struct {
    CSource src;
    float alpha, beta;
    bool bias;
    DType bias_dtype, out;
  } epilogues[] = {{CSource::kSeparate, 0.5f, 2.0f, true, DType::kBF16, DType::kBF16},
                   {CSource::kInPlace, 1.0f, 1.0f, false, DType::kFP32, DType::kFP32},
                   {CSource::kNaN, 2.0f, 0.0f, true, DType::kFP32, DType::kBF16},
                   {CSource::kSeparate, 1.0f, 0.5f, true, DType::kFP32, DType::kFP32}};
  for (const auto& e : epilogues) {
    GemmCase c;
    c.what = "splitk_epilogue";
    c.m = 129;
    c.n = 2052;
    c.k = 7168;
    c.out = e.out;
    c.with_c = true;
    c.c_source = e.src;
    c.alpha = e.alpha;
    c.beta = e.beta;
    c.with_bias = e.bias;
    c.bias_dtype = e.bias_dtype;
    c.config = splits(3);
    add_both_reduces(out, c);
    add_cluster_reduce(out, c);
  }
  // Long K, batched, multicast clusters along M and N (the CTAs of a cluster share a slice).
  GemmCase longk;
  longk.what = "splitk_longk";
  longk.m = 128;
  longk.n = 576;
  longk.k = 16384;
  longk.config = splits(8);
  add_both_reduces(out, longk);
  GemmCase batched = longk;
  batched.what = "splitk_batched";
  batched.m = 65;
  batched.k = 3000;
  batched.batch = 3;
  batched.with_c = true;
  batched.config = splits(3);
  add_both_reduces(out, batched);
  add_cluster_reduce(out, batched);
  for (const auto& [cm, cn] : {std::pair{2u, 1u}, std::pair{1u, 2u}, std::pair{2u, 2u}}) {
    GemmCase mc;
    mc.what = "splitk_multicast";
    mc.m = 255;
    mc.n = 1100;
    mc.k = 5000;
    mc.config = splits(3, cm, cn);
    add_both_reduces(out, mc);
  }
  // K below k_splits x 64: trailing slices are empty and write zeros.
  GemmCase tiny;
  tiny.what = "splitk_short_k";
  tiny.m = 7;
  tiny.n = 300;
  tiny.k = 136;
  tiny.config = splits(8);
  add_both_reduces(out, tiny);
  // The planner's own choice on the shapes.
  for (const auto& s : {std::array<int64_t, 3>{128, 576, 7168}, {1, 4096, 4096}, {255, 576, 7168}, {333, 2112, 7168}}) {
    GemmCase c;
    c.what = "splitk_planned";
    c.m = s[0];
    c.n = s[1];
    c.k = s[2];
    out.push_back(c);
  }
  return out;
}

std::vector<GemmCase> split_k_graph_cases() {
  GemmCase forced;
  forced.what = "splitk_graph";
  forced.m = 65;
  forced.n = 1000;
  forced.k = 4104;  // rows of A and B a multiple of 16 bytes, as TMA needs (the test allocates them unpadded)
  forced.with_c = true;
  forced.config = splits(3);
  forced.config.fused_reduce = 0;
  GemmCase fused = forced;
  fused.what = "splitk_graph_fused";
  fused.config.fused_reduce = 1;
  GemmCase in_cluster = forced;
  in_cluster.what = "splitk_graph_cluster";
  in_cluster.config = splits(4);
  in_cluster.config.cluster_reduce = 1;
  GemmCase planned;
  planned.what = "splitk_graph_planned";
  planned.m = 128;
  planned.n = 576;
  planned.k = 7168;
  return {forced, fused, in_cluster, planned};
}

}  // namespace tilecast::test
