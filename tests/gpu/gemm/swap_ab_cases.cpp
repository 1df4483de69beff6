#include "swap_ab_cases.hpp"

#include <array>

namespace tilecast::test {
namespace {

// Rows of D's buffer past m, which a swapped store of a column index >= m would hit.
constexpr int64_t kGuardRows = 3;

GemmConfig swapped(uint32_t k_splits) {
  GemmConfig c;
  c.swap_ab = 1;
  c.k_splits = k_splits;  // 1: unsplit, else forced
  return c;
}

// The epilogues the cases take turns with: none, C, bias, C and bias.
struct Epi {
  bool c, bias;
};
constexpr Epi kEpilogues[] = {{false, false}, {true, false}, {false, true}, {true, true}};
constexpr uint32_t kSplits[] = {1, 2, 4};
constexpr int64_t kMs[] = {1, 7, 8, 16, 33, 64};

GemmCase make_case(const char* what, int64_t m, int64_t n, int64_t k, DType out, const Epi& e, uint32_t splits,
                   int turn) {
  GemmCase c;
  c.what = what;
  c.m = m;
  c.n = n;
  c.k = k;
  c.out = out;
  c.with_c = e.c;
  c.with_bias = e.bias;
  c.bias_dtype = turn % 2 ? DType::kBF16 : DType::kFP32;
  if (e.c && turn % 3 == 1) {  // alpha and beta other than 1 where C is read
    c.alpha = 0.5f;
    c.beta = 2.0f;
  }
  c.guard_rows = kGuardRows;
  c.config = swapped(splits);
  return c;
}

}  // namespace

std::vector<GemmCase> swap_ab_cases() {
  std::vector<GemmCase> out;
  // Every (m, n, k), each with its turn of output dtype, epilogue and split (the 24 combinations
  // of those come round twice over the 54 shapes).
  int turn = 0;
  for (int64_t m : kMs)
    for (int64_t n : {4096, 4100, 576})
      for (int64_t k : {7168, 16384, 203}) {
        const DType dt = turn % 2 ? DType::kFP32 : DType::kBF16;
        out.push_back(make_case("swap", m, n, k, dt, kEpilogues[(turn / 2) % 4], kSplits[(turn / 8) % 3], turn));
        ++turn;
      }
  // Every m with every output dtype, epilogue and split on one ragged shape of short K.
  for (int64_t m : kMs)
    for (DType dt : {DType::kBF16, DType::kFP32})
      for (const Epi& e : kEpilogues)
        for (uint32_t s : kSplits) out.push_back(make_case("swap_all", m, 4100, 203, dt, e, s, turn++));
  // C read in place (C is D) and C NaN with beta 0 (must not be read), unsplit and split.
  for (uint32_t s : {1u, 4u}) {
    GemmCase in_place = make_case("swap_c_in_place", 33, 4100, 7168, DType::kBF16, {true, true}, s, 0);
    in_place.c_source = CSource::kInPlace;
    out.push_back(in_place);
    GemmCase nan = make_case("swap_c_nan", 7, 576, 7168, DType::kFP32, {true, false}, s, 0);
    nan.c_source = CSource::kNaN;
    nan.alpha = 2.0f;
    nan.beta = 0.0f;
    out.push_back(nan);
  }
  // Batched, tile widths narrower than M (several tiles along M), and multicast clusters.
  for (uint32_t s : {1u, 2u}) {
    GemmCase batched = make_case("swap_batched", 33, 2052, 3000, DType::kBF16, {true, true}, s, 1);
    batched.batch = 3;
    out.push_back(batched);
  }
  for (uint32_t bn : {8u, 16u}) {
    GemmCase narrow = make_case("swap_narrow", 64, 4100, 7168, DType::kFP32, {false, true}, 1, 0);
    narrow.config.block_m = 128;
    narrow.config.block_n = bn;
    out.push_back(narrow);
  }
  for (const auto& [cm, cn] : {std::array<uint32_t, 2>{2, 1}, {1, 2}, {2, 2}}) {
    GemmCase mc = make_case("swap_multicast", 16, 4100, 7168, DType::kBF16, {true, false}, cm == 2 && cn == 2 ? 4 : 1, 0);
    mc.config.cluster_m = cm;
    mc.config.cluster_n = cn;
    out.push_back(mc);
  }
  return out;
}

std::vector<GemmCase> swap_ab_determinism_cases() {
  std::vector<GemmCase> out;
  for (uint32_t s : {1u, 4u}) {
    out.push_back(make_case("swap_runs", 7, 4100, 16384, DType::kBF16, {true, true}, s, 0));
    out.push_back(make_case("swap_runs", 64, 576, 7168, DType::kFP32, {false, false}, s, 1));
  }
  return out;
}

std::vector<GemmCase> swap_ab_graph_cases() {
  std::vector<GemmCase> out;
  for (uint32_t s : {1u, 4u}) {
    GemmCase c = make_case("swap_graph", 7, 4100, 7168, DType::kBF16, {true, false}, s, 0);
    c.guard_rows = 0;  // GraphBuffers' D has padded rows but no rows past m
    out.push_back(c);
  }
  return out;
}

}  // namespace tilecast::test
