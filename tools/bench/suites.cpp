#include "suites.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>

#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast::bench {
namespace {

// DeepGEMM's normal BF16 (n, k) list (tests/generators.py), used with m = 4096 and m = 128.
constexpr int64_t kNormalNK[][2] = {{2112, 7168}, {576, 7168},   {24576, 1536}, {32768, 512},
                                    {7168, 16384}, {4096, 7168}, {7168, 2048}};
// Its m-grouped (groups, m per group) and masked (groups, expected m) lists, with their (n, k).
constexpr int64_t kGroupedGM[][2] = {{4, 8192}, {8, 4096}};
constexpr int64_t kMaskedGM[][2] = {{32, 192}, {6, 1024}, {32, 20}, {6, 20}};
constexpr int64_t kGroupedNK[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
// DeepGEMM's masked tests size every expert's buffer for 4096 rows.
constexpr int64_t kMaskedMaxM = 4096;

// DeepSeek-V3's MoE layer (its Hugging Face config.json and the technical report, arXiv
// 2412.19437): hidden_size 7168, moe_intermediate_size 2048, n_routed_experts 256,
// num_experts_per_tok 8. Each expert's gate and up projections are one GEMM of n = 2 x 2048 over
// k = 7168 rows of tokens, its down projection one of n = 7168 over k = 2048.
constexpr int64_t kDsv3Hidden = 7168, kDsv3Inter = 2048, kDsv3Experts = 256, kDsv3TopK = 8;
// Its GEMMs: gate+up (n, k), then down.
constexpr int64_t kDsv3NK[][2] = {{2 * kDsv3Inter, kDsv3Hidden}, {kDsv3Hidden, kDsv3Inter}};

BenchProblem dense(const std::string& suite, int64_t m, int64_t n, int64_t k) {
  BenchProblem p;
  p.suite = suite;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

void add_normal_list(std::vector<BenchProblem>& out, const std::string& suite, int64_t m) {
  for (const auto& nk : kNormalNK) out.push_back(dense(suite, m, nk[0], nk[1]));
}

// Sizes as DeepGEMM draws them: expected * U(0.7, 1.3), from a fixed seed so that every run
// times the same problem.
std::vector<int64_t> jittered(int64_t groups, int64_t expected, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.7, 1.3);
  std::vector<int64_t> sizes;
  for (int64_t g = 0; g < groups; ++g) sizes.push_back(static_cast<int64_t>(static_cast<double>(expected) * u(rng)));
  return sizes;
}

// Valid rows of masked experts, DeepGEMM's way, at most kMaskedMaxM.
std::vector<int64_t> masked_rows(int64_t groups, int64_t expected, uint64_t seed) {
  std::vector<int64_t> rows = jittered(groups, expected, seed);
  for (int64_t& r : rows) r = std::min(r, kMaskedMaxM);
  return rows;
}

// `total` rows (or columns) over `groups` experts as a skewed router spreads them: weights
// exp(N(0, sigma)) from a fixed seed, so some experts get many times the mean and some a handful
// or none (the loads MISSION.md calls open ground).
std::vector<int64_t> skewed_split(int64_t total, int64_t groups, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, sigma);
  std::vector<double> w;
  double sum = 0;
  for (int64_t g = 0; g < groups; ++g) sum += w.emplace_back(std::exp(z(rng)));
  std::vector<int64_t> out;
  int64_t given = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t share = g + 1 == groups ? total - given : static_cast<int64_t>(static_cast<double>(total) * w[g] / sum);
    out.push_back(share);
    given += share;
  }
  return out;
}

BenchProblem mgrouped(const std::string& suite, std::vector<int64_t> rows, int64_t n, int64_t k) {
  BenchProblem p = dense(suite, 0, n, k);
  p.kind = Kind::kMGrouped;
  p.groups = static_cast<int64_t>(rows.size());
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  p.m = total / p.groups;
  p.group_rows = std::move(rows);
  return p;
}

BenchProblem masked(const std::string& suite, int64_t groups, int64_t max_m, int64_t expected, int64_t n, int64_t k,
                    uint64_t seed) {
  BenchProblem p = dense(suite, max_m, n, k);
  p.kind = Kind::kMasked;
  p.groups = groups;
  p.expected_m = expected;
  p.group_rows = masked_rows(groups, expected, seed);
  for (int64_t& r : p.group_rows) r = std::min(r, max_m);
  return p;
}

// Weight gradients: results of m x n, groups' K summing to `total_k`, accumulated in FP32. Each
// group's K is padded up to a multiple of kKGroupAlignment (zero token rows), as the kernel needs.
BenchProblem kgrouped(const std::string& suite, std::vector<int64_t> ks, int64_t m, int64_t n) {
  for (int64_t& kg : ks) kg = (kg + kKGroupAlignment - 1) / kKGroupAlignment * kKGroupAlignment;
  BenchProblem p = dense(suite, m, n, 0);
  p.kind = Kind::kKGrouped;
  p.groups = static_cast<int64_t>(ks.size());
  for (int64_t kg : ks) p.k += kg;
  p.group_k = std::move(ks);
  p.out = DType::kFP32;
  p.with_c = true;
  return p;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kDense: return "dense";
    case Kind::kBatched: return "batched";
    case Kind::kMGrouped: return "m-grouped";
    case Kind::kMasked: return "masked";
    case Kind::kKGrouped: return "k-grouped";
  }
  return "?";
}

int64_t BenchProblem::rows_total() const {
  if (kind == Kind::kMGrouped && !group_rows.empty()) {
    int64_t s = 0;
    for (int64_t r : group_rows) s += r;
    return s;
  }
  return kind == Kind::kDense || kind == Kind::kKGrouped ? m : groups * m;
}

int64_t BenchProblem::valid_rows() const {
  if (kind != Kind::kMasked) return rows_total();
  int64_t s = 0;
  for (int64_t r : group_rows) s += r;
  return s;
}

double BenchProblem::flops() const {
  return 2.0 * static_cast<double>(valid_rows()) * static_cast<double>(n) * static_cast<double>(k);
}

double BenchProblem::bytes() const {
  const double rows = static_cast<double>(valid_rows());
  const double b_groups = kind == Kind::kDense || kind == Kind::kKGrouped ? 1.0 : static_cast<double>(groups);
  // k-grouped: A and B once over all K, one m x n result per group.
  const double d_elems = rows * static_cast<double>(n) * (kind == Kind::kKGrouped ? static_cast<double>(groups) : 1.0);
  return 2.0 * rows * static_cast<double>(k) + 2.0 * b_groups * static_cast<double>(n) * static_cast<double>(k) +
         static_cast<double>(dtype_size(out)) * (d_elems * (with_c ? 2.0 : 1.0) + (with_bias ? n : 0));
}

std::string BenchProblem::label() const {
  char buf[96];
  switch (kind) {
    case Kind::kDense:
      std::snprintf(buf, sizeof buf, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
      break;
    case Kind::kBatched:
      std::snprintf(buf, sizeof buf, "%lldx%lldx%lld b%lld", (long long)m, (long long)n, (long long)k,
                    (long long)groups);
      break;
    case Kind::kMGrouped:
      std::snprintf(buf, sizeof buf, "g%lld m%lld n%lld k%lld", (long long)groups, (long long)m,
                    (long long)n, (long long)k);
      break;
    case Kind::kMasked:
      std::snprintf(buf, sizeof buf, "g%lld m~%lld n%lld k%lld", (long long)groups,
                    (long long)expected_m, (long long)n, (long long)k);
      break;
    case Kind::kKGrouped:
      std::snprintf(buf, sizeof buf, "kg%lld %lldx%lld k%lld", (long long)groups, (long long)m, (long long)n,
                    (long long)k);
      break;
  }
  if (row_bytes != kLeastRowBytes) return std::string(buf) + " rows" + std::to_string(row_bytes);
  return buf;
}

std::vector<std::string> suite_names() {
  return {"dense", "m4096", "m128",  "mgrouped", "masked", "kgrouped", "deepseek-v3", "square",
          "odd",   "host",  "fp32c", "bias",     "splitk", "swapab",   "nn",          "tn",          "tt"};
}

std::vector<BenchProblem> make_suite(const std::string& name) {
  std::vector<BenchProblem> out;
  if (name == "dense") {
    out.push_back(dense(name, 8192, 8192, 8192));
  } else if (name == "m4096") {
    add_normal_list(out, name, 4096);
  } else if (name == "m128") {
    add_normal_list(out, name, 128);
  } else if (name == "mgrouped") {
    for (const auto& gm : kGroupedGM)
      for (const auto& nk : kGroupedNK) {
        BenchProblem p = dense(name, gm[1], nk[0], nk[1]);
        p.kind = Kind::kMGrouped;
        p.groups = gm[0];
        p.group_rows.assign(static_cast<size_t>(gm[0]), gm[1]);
        out.push_back(p);
      }
  } else if (name == "masked") {
    uint64_t seed = 0x6d61736b6564ull;  // "masked"
    for (const auto& gm : kMaskedGM)
      for (const auto& nk : kGroupedNK) {
        BenchProblem p = dense(name, kMaskedMaxM, nk[0], nk[1]);
        p.kind = Kind::kMasked;
        p.groups = gm[0];
        p.expected_m = gm[1];
        p.group_rows = masked_rows(gm[0], gm[1], seed++);
        out.push_back(p);
      }
  } else if (name == "kgrouped") {
    // Weight gradients of DeepSeek-V3's experts (kDsv3NK as results: gate+up dW is 4096 x 7168,
    // down dW 7168 x 2048), 4 and 8 groups, K per group 4096 x U(0.7, 1.3) (so no multiple of 64:
    // every group ends in a partial k-step), accumulated into FP32 as a training step does.
    uint64_t seed = 0x6b67726f7570ull;  // "kgroup"
    for (int64_t groups : {4, 8})
      for (const auto& nk : kDsv3NK) out.push_back(kgrouped(name, jittered(groups, 4096, seed++), nk[0], nk[1]));
  } else if (name == "deepseek-v3") {
    // One MoE layer of DeepSeek-V3 (see kDsv3Hidden), both GEMMs of each phase:
    //   prefill, expert parallel over 8 GPUs: 32 local experts, 8192 routed rows, skewed routing;
    //   prefill on one GPU: all 256 experts, 4096 tokens x top-8 = 32768 rows, skewed;
    //   decode, 8 GPUs: 32 experts of max_m 1024 rows, 128 tokens x 8 x 8 ranks / 256 = 32 expected;
    //   weight gradients of the 32 local experts over their 8192 skewed rows, accumulated in FP32.
    const int64_t local = kDsv3Experts / 8;
    uint64_t seed = 0x64737633ull;  // "dsv3"
    for (const auto& nk : kDsv3NK) out.push_back(mgrouped(name, skewed_split(8192, local, 1.0, seed++), nk[0], nk[1]));
    for (const auto& nk : kDsv3NK)
      out.push_back(mgrouped(name, skewed_split(4096 * kDsv3TopK, kDsv3Experts, 1.0, seed++), nk[0], nk[1]));
    for (const auto& nk : kDsv3NK)
      out.push_back(masked(name, local, 1024, 128 * kDsv3TopK * 8 / kDsv3Experts, nk[0], nk[1], seed++));
    for (const auto& nk : kDsv3NK) out.push_back(kgrouped(name, skewed_split(8192, local, 1.0, seed++), nk[0], nk[1]));
  } else if (name == "square") {
    for (int64_t s : {512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384})
      out.push_back(dense(name, s, s, s));
  } else if (name == "odd") {
    // Partial tiles in every dimension, partial clusters, one-row and one-tile problems. Row
    // strides are padded to 16 bytes where K or N is odd (TMA needs it; see workload.cpp).
    const int64_t shapes[][3] = {{4095, 7167, 4104}, {1, 4096, 4096},  {333, 2112, 7168},
                                 {4097, 4097, 4097}, {129, 24577, 1536}, {8191, 8193, 520},
                                 {2, 7168, 2048},    {255, 576, 7168},  {1000, 1000, 1000}};
    for (const auto& s : shapes) out.push_back(dense(name, s[0], s[1], s[2]));
  } else if (name == "host") {
    // Small and large problems alike: a cached call's host time should not depend on its size.
    for (const auto& s : {std::array<int64_t, 3>{256, 256, 256}, {128, 4096, 7168}, {4096, 4096, 4096}}) {
      BenchProblem p = dense(name, s[0], s[1], s[2]);
      p.host_time = true;
      out.push_back(p);
    }
  } else if (name == "fp32c" || name == "bias") {
    // The epilogues the weight-gradient and residual paths use, against cuBLASLt doing the same.
    out.push_back(dense(name, 8192, 8192, 8192));
    add_normal_list(out, name, 4096);
    for (BenchProblem& p : out) {
      if (name == "fp32c") {
        p.out = DType::kFP32;
        p.with_c = true;
      } else {
        p.with_bias = true;
      }
    }
  } else if (name == "splitk") {
    // Issue #12's small-M rows in one list: the m = 128 list, the odd suite's small-M shapes and
    // square 512 and 1024, where split-K is meant to pay (run with --split-compare to see each
    // split against cuBLASLt), then ragged and batched ones the planner may split.
    add_normal_list(out, name, 128);
    for (const auto& s : {std::array<int64_t, 3>{1, 4096, 4096}, {2, 7168, 2048}, {255, 576, 7168},
                          {333, 2112, 7168}, {512, 512, 512}, {1024, 1024, 1024}, {7, 1000, 16384},
                          {65, 4104, 7168}})
      out.push_back(dense(name, s[0], s[1], s[2]));
    BenchProblem batched = dense(name, 64, 2048, 7168);
    batched.kind = Kind::kBatched;
    batched.groups = 4;
    out.push_back(batched);
  } else if (name == "swapab") {
    // Issue #12's swapped operands: decode-sized M (1..64) against the m = 128 list's N and K and
    // the splitk suite's small-M rows; run once as is and once with --config swap_ab=1 (add
    // --split-compare to see each split of both), same cuBLASLt in each run.
    for (int64_t m : {1, 8, 16, 33, 64})
      for (const auto& nk : {std::array<int64_t, 2>{4096, 7168}, {576, 7168}, {7168, 2048}, {2112, 7168}})
        out.push_back(dense(name, m, nk[0], nk[1]));
    out.push_back(dense(name, 1, 4096, 4096));
    out.push_back(dense(name, 7, 1000, 16384));
    BenchProblem batched = dense(name, 64, 2048, 7168);
    batched.kind = Kind::kBatched;
    batched.groups = 4;
    out.push_back(batched);
  } else if (name == "nn" || name == "tn" || name == "tt") {
    // The other layouts on the shapes NT is measured on, each against cuBLASLt in that layout.
    const GemmLayout layout = name == "nn" ? GemmLayout::kNN : name == "tn" ? GemmLayout::kTN : GemmLayout::kTT;
    out.push_back(dense(name, 8192, 8192, 8192));
    add_normal_list(out, name, 4096);
    for (BenchProblem& p : out) p.layout = layout;
  } else if (name == "mcast") {
    // What multicast is worth (multicast_worth.hpp, which pins each one's tile and says why):
    // compute-bound, small tiles for the problem, a partial last wave.
    for (const auto& s : {std::array<int64_t, 3>{8192, 8192, 8192}, {4096, 7168, 2048}, {4096, 2112, 7168}})
      out.push_back(dense(name, s[0], s[1], s[2]));
  } else if (name == "default") {
    for (const char* s : {"dense", "m4096", "m128", "odd", "host"})
      for (BenchProblem& p : make_suite(s)) out.push_back(std::move(p));
  } else if (name == "all") {
    for (const std::string& s : suite_names())
      for (BenchProblem& p : make_suite(s)) out.push_back(std::move(p));
  } else {
    throw std::invalid_argument("unknown suite '" + name + "' (dense, m4096, m128, mgrouped, masked, kgrouped, "
                                "deepseek-v3, square, odd, host, fp32c, bias, splitk, swapab, nn, tn, tt, mcast, default, all)");
  }
  return out;
}

void apply_epilogue(BenchProblem& p, const DType* out, bool with_c) {
  if (out) p.out = *out;
  if (with_c && p.kind != Kind::kMGrouped && p.kind != Kind::kMasked) p.with_c = true;
}

bool has_odd_extents(const BenchProblem& p) {
  return (p.kind == Kind::kDense || p.kind == Kind::kBatched) && p.layout == GemmLayout::kNT &&
         (p.n % kOddPadElements != 0 || p.k % kOddPadElements != 0);
}

BenchProblem parse_shape(const std::string& text) {
  std::vector<int64_t> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || x <= 0)
      throw std::invalid_argument("--shape wants m,n,k[,batch] of positive integers, got '" + text + "'");
    v.push_back(x);
  }
  if (v.size() != 3 && v.size() != 4)
    throw std::invalid_argument("--shape wants m,n,k[,batch], got '" + text + "'");
  BenchProblem p = dense("custom", v[0], v[1], v[2]);
  if (v.size() == 4 && v[3] > 1) {
    p.kind = Kind::kBatched;
    p.groups = v[3];
  }
  return p;
}

}  // namespace tilecast::bench
