// Argument checks of tilecast::gemm and of the grouped calls (tilecast/grouped.hpp), without a GPU:
// every bad input is refused with an error that names the argument and the rule, before anything
// could be launched. Each row of README.md's "Bad input" table is a case below.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "api/validate.hpp"

namespace tilecast::api {
namespace {

// The fake address space: device 0's memory below 2^40, device 1's from there to 2^41, host
// memory above. The call runs on device 0. Two allocations are known to the fake driver (kAlloc,
// and kShortArray of 16 int32); every other allocation's end is unknown, as for virtual memory.
constexpr uintptr_t kDevice1 = uintptr_t{1} << 40;
constexpr uintptr_t kHost = uintptr_t{1} << 41;
constexpr uintptr_t kAlloc = 0x40000000;
constexpr uint64_t kAllocBytes = uint64_t{1} << 20;
constexpr uintptr_t kShortArray = 0xA00000;
constexpr uint64_t kShortArrayBytes = 64;

PointerFacts fake_device(const void* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  PointerFacts f;
  f.current_device = 0;
  f.device_memory = at < kHost;
  f.device = at < kDevice1 ? 0 : 1;
  const auto known = [&](uintptr_t base, uint64_t bytes) {
    if (at >= base && at < base + bytes) f.alloc_base = base, f.alloc_bytes = bytes;
  };
  known(kAlloc, kAllocBytes);
  known(kShortArray, kShortArrayBytes);
  return f;
}

MatrixView view(uintptr_t addr, DType t, int64_t rows, int64_t cols, int64_t ld = 0, int64_t batch = 1) {
  MatrixView v;
  v.data = reinterpret_cast<void*>(addr);
  v.dtype = t;
  v.rows = rows;
  v.cols = cols;
  v.row_stride = ld;
  v.batch = batch;
  return v;
}

void* at(uintptr_t addr) { return reinterpret_cast<void*>(addr); }

// m = 256, n = 384, k = 512, BF16 out; C (when has_c) is a separate BF16 matrix.
CallArgs dense_call() {
  CallArgs x;
  x.a = view(0x100000, DType::kBF16, 256, 512);
  x.b = view(0x200000, DType::kBF16, 384, 512);
  x.d = view(0x400000, DType::kBF16, 256, 384);
  x.c = view(0x800000, DType::kBF16, 256, 384);
  return x;
}

CallArgs with_c(CallArgs x) {
  x.has_c = true;
  return x;
}

CallArgs batched(CallArgs x, int64_t batch) {
  x.a.batch = x.b.batch = x.d.batch = x.c.batch = batch;
  x.c.data = at(0x10000000);  // past the others' batches
  return x;
}

std::string error_of(const CallArgs& x) {
  try {
    validate_call(x, fake_device);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct Case {
  CallArgs args;
  std::string message;
};

// Each case's error contains its message; every message is "tilecast: " and then the argument.
void expect_refused(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string e = error_of(c.args);
    EXPECT_NE(e.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << e << "'";
    EXPECT_EQ(e.rfind("tilecast: ", 0), 0u) << e;
  }
}

template <class Change>
Case refused(CallArgs x, Change change, std::string message) {
  change(x);
  return {x, std::move(message)};
}

TEST(GemmValidation, GoodArgumentsGiveTheShape) {
  const CallArgs x = dense_call();
  const plan::GemmDesc s = validate_call(x, fake_device);
  EXPECT_EQ(s.problem.m, 256u);
  EXPECT_EQ(s.problem.n, 384u);
  EXPECT_EQ(s.problem.k, 512u);
  EXPECT_EQ(s.problem.num_groups, 1u);
  EXPECT_EQ(s.problem.type, GemmType::kNormal);
  EXPECT_FALSE(s.has_c);
  EXPECT_FALSE(nothing_to_do(s));
  // D = D + A * B^T: C may be D itself.
  CallArgs in_place = with_c(x);
  in_place.c = x.d;
  EXPECT_EQ(error_of(in_place), "");
  // The same elements under another spelling: one matrix's batch stride may be anything.
  in_place.c.batch_stride = 4 * 256 * 384;
  EXPECT_EQ(error_of(in_place), "");
  CallArgs in_place_batched = batched(with_c(x), 2);
  in_place_batched.c = in_place_batched.d;
  EXPECT_EQ(error_of(in_place_batched), "");
  in_place_batched.c.batch_stride = 256 * 384 + 8;  // batch 1 of C is not batch 1 of D
  EXPECT_NE(error_of(in_place_batched).find("C overlaps D without being D itself"), std::string::npos);
  EXPECT_EQ(error_of(with_c(x)), "");
  EXPECT_EQ(error_of(batched(with_c(x), 3)), "");
  // Views inside the known allocation, up to its last byte.
  CallArgs inside = x;
  inside.a.data = at(kAlloc + kAllocBytes - 256 * 512 * 2);
  EXPECT_EQ(error_of(inside), "");
}

TEST(GemmValidation, TheDescSaysWhereTheOperandRowsStart) {
  // The cost model charges rows that start off a 128-byte line two L2 lines (plan_cost.cpp).
  CallArgs x = dense_call();  // rows of 512 BF16 = 1024 bytes at 1 MiB-aligned bases
  plan::GemmDesc s = validate_call(x, fake_device);
  EXPECT_EQ(s.a_row_alignment, 128u);
  EXPECT_EQ(s.b_row_alignment, 128u);
  x.a.cols = x.b.cols = 4097;  // the least stride TMA takes: 4104 elements, 8208 bytes
  x.a.row_stride = x.b.row_stride = 4104;
  x.b.data = at(0x2000000);  // clear of D, now that B's rows are longer
  s = validate_call(x, fake_device);
  EXPECT_EQ(s.a_row_alignment, 16u);
  EXPECT_EQ(s.b_row_alignment, 16u);
  x.b.row_stride = 4160;  // padded to a whole line: B is aligned again, A not
  s = validate_call(x, fake_device);
  EXPECT_EQ(s.a_row_alignment, 16u);
  EXPECT_EQ(s.b_row_alignment, 128u);
  x.b.data = at(0x2000040);  // aligned rows from a base 64 bytes into a line
  EXPECT_EQ(validate_call(x, fake_device).b_row_alignment, 64u);
  x = batched(dense_call(), 2);  // a batch stride off a line moves every other batch's rows
  x.b.batch_stride = 384 * 512 + 8;
  EXPECT_EQ(validate_call(x, fake_device).b_row_alignment, 16u);
}

TEST(GemmValidation, BadViewsNameTheOperandAndTheRule) {
  const CallArgs x = dense_call(), xc = with_c(x), x2 = batched(x, 2);
  expect_refused({
      // Pointers.
      refused(x, [](CallArgs& y) { y.a.data = nullptr; }, "A is null"),
      refused(xc, [](CallArgs& y) { y.c.data = nullptr; }, "C is null"),
      refused(x, [](CallArgs& y) { y.a.data = at(0x100008); }, "A: base address is not 16-byte aligned"),
      refused(x, [](CallArgs& y) { y.d.data = at(0x400002); }, "D: base address is not 16-byte aligned"),
      refused(x, [](CallArgs& y) { y.b.data = at(kHost + 0x1000); },
              "B is not in device memory (a host pointer, or one CUDA does not know)"),
      refused(x, [](CallArgs& y) { y.d.data = at(kDevice1 + 0x1000); },
              "D is on device 1, but the call runs on device 0 (the current one): cudaSetDevice to the tensor's "
              "device first"),
      refused(xc, [](CallArgs& y) { y.c.data = at(kDevice1); }, "C is on device 1"),
      // A view past the end of its allocation: 16 bytes short.
      refused(x, [](CallArgs& y) { y.a.data = at(kAlloc + kAllocBytes - 256 * 512 * 2 + 16); },
              "A reaches past its allocation: it spans 262144 bytes from its base, but its allocation (1048576 bytes) "
              "ends 262128 bytes after the base"),
      refused(x, [](CallArgs& y) { y.d.data = at(kAlloc), y.d.row_stride = 2056; },
              "D reaches past its allocation: it spans 1049328 bytes"),
      // Strides that do not fit the shape.
      refused(x, [](CallArgs& y) { y.b.row_stride = 256; }, "B: row stride 256 is smaller than its 512 columns"),
      refused(x, [](CallArgs& y) { y.a.row_stride = -512; }, "A: row stride -512 is negative"),
      refused(x, [](CallArgs& y) { y.a.cols = y.b.cols = 500; },
              "A: row stride of 500 elements is 1000 bytes, not a multiple of 16 (TMA needs 16-byte aligned strides; "
              "pad the rows)"),
      refused(x, [](CallArgs& y) { y.d.row_stride = 392 + 4; }, "D: row stride of 396 elements is 792 bytes"),
      refused(x, [](CallArgs& y) { y.a.row_stride = int64_t{1} << 39; },
              "A: row stride of 1099511627776 bytes is 2^40 or more (TMA's largest stride)"),
      refused(x2, [](CallArgs& y) { y.d.batch_stride = 100; },
              "D: batch stride 100 is smaller than one matrix (98304 elements): batches would overlap"),
      refused(x2, [](CallArgs& y) { y.a.batch_stride = -1; }, "A: batch stride -1 is negative"),
      refused(x2, [](CallArgs& y) { y.b.batch_stride = 384 * 512 + 4; },
              "B: batch stride is not a multiple of 16 bytes"),
      refused(x2, [](CallArgs& y) { y.b.batch_stride = int64_t{1} << 39; },
              "B: batch stride of 1099511627776 bytes is 2^40 or more"),
      refused(x, [](CallArgs& y) {
                y.a.batch = y.b.batch = y.d.batch = int64_t{1} << 30;
                y.a.rows = y.d.rows = y.b.rows = y.d.cols = 64;  // one tile per batch
                y.a.batch_stride = (int64_t{1} << 39) - 8;
              },
              "A spans 1180591619600719872016 bytes from its base: its end is past the 64-bit address space"),
      // Sizes.
      refused(x, [](CallArgs& y) { y.a.rows = -1; }, "A has a negative size (1x-1x512): sizes are at least 0"),
      refused(x, [](CallArgs& y) { y.d.batch = -2; }, "D has a negative size (-2x256x384)"),
      refused(x, [](CallArgs& y) { y.a.rows = y.d.rows = int64_t{1} << 31; },
              "A (1x2147483648x512) has a size of 2^31 or more (TMA coordinates are signed 32-bit)"),
      refused(x, [](CallArgs& y) { y.a.rows = y.d.rows = y.b.rows = y.d.cols = int64_t{1} << 30; },
              "D (1x1073741824x1073741824) has 281474976710656 tiles of 64x64, 2^32 or more: the tile scheduler "
              "numbers them in 32 bits"),
      // Shapes against each other.
      refused(x, [](CallArgs& y) { y.b.cols = 504; }, "A is [m=256, k=512] but B is [n=384, k=504]: K differs"),
      refused(x, [](CallArgs& y) { y.d.cols = 392; }, "D is 256x392, expected m x n = 256x384"),
      refused(xc, [](CallArgs& y) { y.c.rows = 128; }, "C is 1x128x384, D is 1x256x384: they must match"),
      refused(x, [](CallArgs& y) { y.a.batch = y.b.batch = 2; }, "batch counts differ: A 2, B 2, D 1"),
      // Element types.
      refused(x, [](CallArgs& y) { y.a.dtype = DType::kFP32; }, "A must be bf16, not fp32"),
      refused(x, [](CallArgs& y) { y.b.dtype = DType::kFP32; }, "B must be bf16, not fp32"),
      refused(xc, [](CallArgs& y) { y.c.dtype = DType::kFP32; }, "C is fp32 but D is bf16: C must have D's dtype"),
      refused(x, [](CallArgs& y) { y.d.dtype = static_cast<DType>(7); },
              "D: dtype 7 is not a tilecast::DType (kBF16 = 0, kFP32 = 1)"),
      refused(x, [](CallArgs& y) { y.a.dtype = static_cast<DType>(2); }, "A: dtype 2 is not a tilecast::DType"),
      refused(xc, [](CallArgs& y) { y.c.dtype = static_cast<DType>(255); }, "C: dtype 255 is not a tilecast::DType"),
      // Overlaps where the call writes.
      refused(x, [](CallArgs& y) { y.d.data = at(0x100000 + 1024); }, "D overlaps A or B in memory"),
      refused(xc, [](CallArgs& y) { y.c = y.d, y.c.data = at(0x400000 + 64); }, "C overlaps D without being D itself"),
      // The same base but other strides: partly the same elements, partly not.
      refused(xc, [](CallArgs& y) { y.c = y.d, y.c.row_stride = 392; }, "C overlaps D without being D itself"),
  });
}

TEST(GemmValidation, InterleavedViewsOfOneBufferAreLegal) {
  // D and C interleaved in one 256 x 768 buffer: D the left half of each row, C the right half.
  CallArgs x = with_c(dense_call());
  x.d.row_stride = x.c.row_stride = 768;
  x.c.data = static_cast<char*>(x.d.data) + 384 * 2;
  EXPECT_EQ(error_of(x), "");
  // A and D side by side in each 1024-element row of one buffer: A the first 512, D the next 384.
  CallArgs rows = dense_call();
  rows.a.row_stride = 1024;
  rows.d.data = static_cast<char*>(rows.a.data) + 512 * 2;
  rows.d.row_stride = 1024;
  EXPECT_EQ(error_of(rows), "");
  // D moved 8 elements left: each of its rows takes A's last 8 columns of the same row.
  rows.d.data = static_cast<char*>(rows.a.data) + 512 * 2 - 16;
  EXPECT_NE(error_of(rows).find("D overlaps A or B"), std::string::npos);
}

TEST(GemmValidation, EmptyProblemsAreNoOpsAsInCublas) {
  // m = 0, n = 0 or no batch: valid, nothing to do, and the pointers are never looked at (an empty
  // framework tensor may hold null).
  const auto no_op = [](CallArgs x) {
    x.a.data = x.b.data = x.d.data = x.c.data = nullptr;
    const plan::GemmDesc d = validate_call(x, fake_device);
    EXPECT_TRUE(nothing_to_do(d)) << d.problem.m << "x" << d.problem.n << " x " << d.problem.num_groups;
  };
  CallArgs m0 = dense_call();
  m0.a.rows = m0.d.rows = m0.c.rows = 0;
  no_op(m0);
  no_op(with_c(m0));
  CallArgs n0 = dense_call();
  n0.b.rows = n0.d.cols = 0;
  no_op(n0);
  no_op(batched(dense_call(), 0));
  // Still checked: shapes against each other, element types, the epilogue and the config.
  CallArgs bad = m0;
  bad.b.cols = 8;
  EXPECT_NE(error_of(bad).find("K differs"), std::string::npos);
  bad = m0;
  bad.d.dtype = static_cast<DType>(3);
  EXPECT_NE(error_of(bad).find("D: dtype 3 is not a tilecast::DType"), std::string::npos);
  bad = m0;
  bad.beta = 0.5f;
  EXPECT_NE(error_of(bad).find("beta is 0.5"), std::string::npos);
  bad = m0;
  bad.config.block_m = 96;
  EXPECT_NE(error_of(bad).find("config: block_m 96"), std::string::npos);
}

TEST(GemmValidation, KZeroIsTheEpilogueAlone) {
  // D = beta * C + bias, as cuBLAS writes it: A and B are never read, so may be null.
  CallArgs x = with_c(dense_call());
  x.a.cols = x.b.cols = 0;
  x.a.data = x.b.data = nullptr;
  x.beta = 2.0f;
  x.bias = {at(0x900000), DType::kBF16, 384};
  const plan::GemmDesc d = validate_call(x, fake_device);
  EXPECT_TRUE(epilogue_only(d));
  EXPECT_FALSE(nothing_to_do(d));
  EXPECT_FALSE(epilogue_only(validate_call(dense_call(), fake_device)));
  // What it writes and reads is still checked.
  expect_refused({
      refused(x, [](CallArgs& y) { y.d.data = nullptr; }, "D is null"),
      refused(x, [](CallArgs& y) { y.c.data = at(0x400000 + 64); }, "C overlaps D without being D itself"),
      refused(x, [](CallArgs& y) { y.bias.data = at(kHost); }, "bias is not in device memory"),
      refused(x, [](CallArgs& y) { y.d.row_stride = 390; }, "D: row stride of 390 elements is 780 bytes"),
  });
  // A and B, never read, may even overlap D.
  x.a.data = x.d.data;
  EXPECT_EQ(error_of(x), "");
}

CallArgs with_bias(uintptr_t addr, DType t, int64_t length) {
  CallArgs x = dense_call();
  x.bias = {at(addr), t, length};
  return x;
}

TEST(GemmValidation, EpilogueArgumentsAreChecked) {
  EXPECT_EQ(error_of(with_bias(0x900000, DType::kFP32, 384)), "");
  const CallArgs good = with_bias(0x900000, DType::kFP32, 384);
  expect_refused({
      refused(good, [](CallArgs& y) { y.bias.length = 383; }, "bias has 383 elements but D has 384 columns: one per column"),
      refused(good, [](CallArgs& y) { y.bias.data = at(0x900004); }, "bias: base address is not 16-byte aligned (TMA)"),
      refused(good, [](CallArgs& y) { y.bias.data = at(kHost); }, "bias is not in device memory"),
      refused(good, [](CallArgs& y) { y.bias.data = at(kDevice1); }, "bias is on device 1, but the call runs on device 0"),
      refused(good, [](CallArgs& y) { y.bias.data = at(kAlloc + kAllocBytes - 1024); },
              "bias reaches past its allocation: it spans 1536 bytes from its base, but its allocation (1048576 bytes) "
              "ends 1024 bytes after the base"),
      refused(good, [](CallArgs& y) { y.bias.data = at(0x400000 + 256); }, "bias overlaps D in memory"),
      refused(good, [](CallArgs& y) { y.bias.data = nullptr; }, "bias has 384 elements but no data pointer"),
      refused(good, [](CallArgs& y) { y.bias.dtype = static_cast<DType>(7); }, "bias must be bf16 or fp32, not dtype 7"),
      refused(dense_call(), [](CallArgs& y) { y.beta = 0.5f; },
              "beta is 0.500000 but there is no C: beta scales C (give C, or leave beta at 1)"),
  });
  // The bias in D's padding columns (D's rows are 384 of a 400-element stride): no element shared.
  CallArgs padded = with_bias(0x400000 + 384 * 2, DType::kBF16, 16);
  padded.d.row_stride = 400;
  padded.d.cols = padded.b.rows = padded.bias.length = 16;
  padded.d.data = at(0x400000);
  padded.bias.data = at(0x400000 + 16 * 2);
  EXPECT_EQ(error_of(padded), "");
  CallArgs alpha = dense_call();
  alpha.alpha = 2.0f;
  EXPECT_EQ(error_of(alpha), "") << "alpha alone is fine";
}

TEST(GemmValidation, BetaZeroNeverReadsC) {
  CallArgs x = with_c(dense_call());
  EXPECT_TRUE(validate_call(x, fake_device).has_c);
  x.beta = 0.0f;
  EXPECT_FALSE(validate_call(x, fake_device).has_c) << "the plan must not read C";
  x.bias = {at(0x900000), DType::kBF16, 384};
  const plan::GemmDesc d = validate_call(x, fake_device);
  EXPECT_TRUE(d.has_bias);
  EXPECT_EQ(d.bias_type, DType::kBF16);
}

// A new GemmConfig field must come with its bad values here (and a rule in check_overrides).
constexpr size_t kGemmConfigFields = 18;
static_assert(sizeof(GemmConfig) == kGemmConfigFields * sizeof(uint32_t), "a GemmConfig field was added: give it a row below");

TEST(GemmValidation, EveryConfigOverrideOutOfRangeIsRefused) {
  const CallArgs x = dense_call();
  const auto config = [&](std::function<void(GemmConfig&)> change, const char* message) {
    return refused(x, [&](CallArgs& y) { change(y.config); }, message);
  };
  expect_refused({
      config([](GemmConfig& c) { c.block_m = 96; }, "config: block_m 96 is not 64, 128 or 192 (0: the planner's choice)"),
      config([](GemmConfig& c) { c.block_n = 100; },
             "config: block_n 100 is not a tile width the kernel has (64, 96, 128, 144, 176, 192, 256)"),
      config([](GemmConfig& c) { c.block_k = 128; }, "config: block_k 128 is not 64 (BF16's)"),
      config([](GemmConfig& c) { c.stages = 1; }, "config: stages 1 is not in 2..8"),
      config([](GemmConfig& c) { c.stages = 9; }, "config: stages 9 is not in 2..8"),
      config([](GemmConfig& c) { c.cluster_m = 2; }, "config: give cluster_m and cluster_n together"),
      config([](GemmConfig& c) { c.cluster_n = 2; }, "config: give cluster_m and cluster_n together"),
      config([](GemmConfig& c) { c.cluster_m = 3, c.cluster_n = 1; },
             "config: cluster 3x1 is not one of 1x1, 2x1, 1x2, 4x1, 1x4, 2x2"),
      config([](GemmConfig& c) { c.cluster_m = 4, c.cluster_n = 4; }, "config: cluster 4x4 is not one of"),
      config([](GemmConfig& c) { c.multicast_a = 2; }, "config: multicast_a 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.multicast_b = -2; }, "config: multicast_b -2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.swizzle = 65; }, "config: swizzle 65 is not in 1..64 (0: the planner's band)"),
      config([](GemmConfig& c) { c.max_sms = 3, c.cluster_m = 2, c.cluster_n = 2; },
             "config: max_sms 3 cannot hold one cluster of 4"),
      config([](GemmConfig& c) { c.companion = 2; }, "config: companion 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.k_splits = 33; },
             "config: k_splits 33 is not in 0 (the planner's choice), 1 (off) or 2..32"),
      config([](GemmConfig& c) { c.k_splits = 2, c.companion = 1; },
             "config: k_splits 2 runs without a companion launch (companion=1)"),
      config([](GemmConfig& c) { c.swap_ab = 2; }, "config: swap_ab 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.swap_ab = 1, c.block_m = 64; },
             "config: swap_ab=1 with block_m 64: swapped tiles are 128 rows over N"),
      config([](GemmConfig& c) { c.swap_ab = 1, c.block_n = 96; },
             "config: swap_ab=1 with block_n 96: a swapped tile is 8, 16, 24, 32, 40, 48, 56, 64 wide (M's side)"),
      config([](GemmConfig& c) { c.swap_ab = 1, c.cluster_m = 2, c.cluster_n = 2, c.companion = 1; },
             "config: swap_ab=1 runs without a companion launch (companion=1)"),
      config([](GemmConfig& c) { c.block_n = 8; },
             "config: block_n 8 is not a tile width the kernel has (64, 96, 128, 144, 176, 192, 256)"),
      config([](GemmConfig& c) { c.fused_reduce = 2; },
             "config: fused_reduce 2 is not -1 (auto), 0 (the reduce kernel) or 1 (in the GEMM)"),
      config([](GemmConfig& c) { c.fused_reduce = 1, c.k_splits = 1; },
             "config: fused_reduce=1 sums split-K slices, but k_splits=1 splits nothing (give k_splits 0 or 2..32)"),
      config([](GemmConfig& c) { c.fused_reduce = 1, c.swap_ab = 1; },
             "config: fused_reduce=1 is for unswapped kernels, not with swap_ab=1"),
      config([](GemmConfig& c) { c.cluster_reduce = 2; },
             "config: cluster_reduce 2 is not -1 (auto), 0 (off) or 1 (across a cluster)"),
      config([](GemmConfig& c) { c.cluster_reduce = 1, c.k_splits = 3; },
             "config: cluster_reduce=1 runs each tile's slices as one cluster: k_splits 3 is not 0 (the planner's "
             "choice), 2, 4 or 8"),
      config([](GemmConfig& c) { c.cluster_reduce = 1, c.k_splits = 1; }, "k_splits 1 is not 0"),
      config([](GemmConfig& c) { c.cluster_reduce = 1, c.fused_reduce = 1; },
             "config: cluster_reduce=1 and fused_reduce=1 are two ways to sum the slices: pick one"),
      config([](GemmConfig& c) { c.cluster_reduce = 1, c.swap_ab = 1; },
             "config: cluster_reduce=1 is for unswapped kernels, not with swap_ab=1"),
      config([](GemmConfig& c) { c.cluster_reduce = 1, c.cluster_m = 2, c.cluster_n = 1; },
             "config: cluster_reduce=1: the cluster is the tile's slices, so cluster must be 1x1 (not 2x1)"),
      config([](GemmConfig& c) { c.split_columns = 2; }, "config: split_columns 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.split_columns = 1, c.block_m = 64; },
             "config: split_columns=1 with block_m 64: column-split tiles are 128, 192 or 256 rows"),
      config([](GemmConfig& c) { c.split_columns = 0, c.block_m = 256; },
             "config: block_m 256 is not 64, 128 or 192 (0: the planner's choice)"),
      config([](GemmConfig& c) { c.split_columns = 1, c.k_splits = 2; },
             "config: split_columns=1 is for unsplit, unswapped kernels"),
      config([](GemmConfig& c) { c.split_columns = 1, c.swap_ab = 1; },
             "config: split_columns=1 is for unsplit, unswapped kernels"),
      config([](GemmConfig& c) { c.split_columns = 1, c.cluster_m = 4, c.cluster_n = 1; },
             "config: split_columns=1 with cluster 4x1: a column-split tile's cluster is at most 2 CTAs along M"),
      config([](GemmConfig& c) { c.pingpong = 2; }, "config: pingpong 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.pingpong = 1, c.block_m = 192; },
             "config: pingpong=1 with block_m 192: a ping-pong tile is 64 or 128 rows"),
      config([](GemmConfig& c) { c.pingpong = 1, c.k_splits = 2; },
             "config: pingpong=1 is for unsplit, unswapped kernels (not with swap_ab=1, k_splits > 1, fused_reduce=1, "
             "cluster_reduce=1 or split_columns=1)"),
      config([](GemmConfig& c) { c.pingpong = 1, c.swap_ab = 1; }, "config: pingpong=1 is for unsplit, unswapped kernels"),
      config([](GemmConfig& c) { c.pingpong = 1, c.split_columns = 1; },
             "config: pingpong=1 is for unsplit, unswapped kernels"),
      config([](GemmConfig& c) { c.pingpong = 1, c.cluster_m = 2, c.cluster_n = 2, c.companion = 1; },
             "config: pingpong=1 runs without a companion launch (companion=1)"),
      config([](GemmConfig& c) { c.k_serpentine = 2; }, "config: k_serpentine 2 is not -1 (auto), 0 (off) or 1 (on)"),
      config([](GemmConfig& c) { c.k_serpentine = 1, c.cluster_m = 2, c.cluster_n = 2, c.companion = 1; },
             "config: k_serpentine=1 runs without a companion launch (companion=1): a claimed unit's wave is not "
             "its index's"),
      config([](GemmConfig& c) { c.k_serpentine = 1, c.fused_reduce = 1; },
             "config: k_serpentine=1 is not for fused_reduce=1 kernels"),
  });
  // The grouped calls check it too.
  CallArgs g = x;
  g.group.type = GemmType::kMGroupedMasked;
  g.config.stages = 99;
  EXPECT_NE(error_of(g).find("config: stages 99"), std::string::npos);
}

// Streams: device 0's are below kDevice1 as handles; a handle of device 1 above.
int fake_stream_device(cudaStream_t s) { return reinterpret_cast<uintptr_t>(s) < kDevice1 ? 0 : 1; }

std::string stream_error(cudaStream_t s) {
  try {
    check_stream(s, 0, fake_stream_device);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GemmValidation, AStreamOfAnotherDeviceIsRefused) {
  EXPECT_EQ(stream_error(reinterpret_cast<cudaStream_t>(0x1000)), "");
  EXPECT_EQ(stream_error(reinterpret_cast<cudaStream_t>(kDevice1)),
            "tilecast: stream belongs to device 1, but the call runs on device 0 (the current one): cudaSetDevice to "
            "the stream's device first");
  // The default streams follow the current device: never asked about.
  const StreamQuery never = [](cudaStream_t) -> int { throw Error("asked"); };
  for (cudaStream_t s : {cudaStream_t{nullptr}, cudaStreamLegacy, cudaStreamPerThread}) EXPECT_NO_THROW(check_stream(s, 0, never));
}

const int32_t* device_array(uintptr_t addr) { return reinterpret_cast<const int32_t*>(addr); }

// 8 experts, 1000 rows in all, n = 384, k = 512.
CallArgs contiguous_call(ContiguousLayout kind = ContiguousLayout::kOffsets) {
  CallArgs x;
  x.a = view(0x1000000, DType::kBF16, 1000, 512);
  x.b = view(0x2000000, DType::kBF16, 384, 512, 0, 8);
  x.d = view(0x4000000, DType::kBF16, 1000, 384);
  x.group.type = GemmType::kMGroupedContiguous;
  x.group.layout = kind;
  x.group.data = device_array(0x800000);
  return x;
}

// 6 experts of max_m = 256 rows, n = 384, k = 512, 64 rows expected.
CallArgs masked_call() {
  CallArgs x;
  x.a = view(0x1000000, DType::kBF16, 256, 512, 0, 6);
  x.b = view(0x2000000, DType::kBF16, 384, 512, 0, 6);
  x.d = view(0x4000000, DType::kFP32, 256, 384, 0, 6);
  x.group.type = GemmType::kMGroupedMasked;
  x.group.data = device_array(0x800000);
  x.group.expected_m = 64;
  return x;
}

// 5 k-groups over k = 1024 columns, m = 256, n = 384, FP32 out.
CallArgs kgrouped_call(bool accumulate = false) {
  CallArgs x;
  x.a = view(0x1000000, DType::kBF16, 256, 1024);
  x.b = view(0x2000000, DType::kBF16, 384, 1024);
  x.d = view(0x4000000, DType::kFP32, 256, 384, 0, 5);
  x.group.type = GemmType::kKGroupedContiguous;
  x.group.data = device_array(0x800000);
  x.group.accumulate = accumulate;
  if (accumulate) {
    x.c = x.d;
    x.has_c = true;
  }
  return x;
}

TEST(GroupedValidation, GoodArgumentsGiveEachFormsProblem) {
  const plan::GemmDesc c = validate_call(contiguous_call(), fake_device);
  EXPECT_EQ(c.problem.type, GemmType::kMGroupedContiguous);
  EXPECT_EQ(c.problem.contiguous_layout, ContiguousLayout::kOffsets);
  EXPECT_EQ(c.problem.m, 1000u);
  EXPECT_EQ(c.problem.n, 384u);
  EXPECT_EQ(c.problem.k, 512u);
  EXPECT_EQ(c.problem.num_groups, 8u);
  EXPECT_EQ(c.problem.group_data, device_array(0x800000)) << "the kernel's parameters carry the caller's array";
  EXPECT_EQ(validate_call(contiguous_call(ContiguousLayout::kRowIndex), fake_device).problem.contiguous_layout,
            ContiguousLayout::kRowIndex);

  const plan::GemmDesc m = validate_call(masked_call(), fake_device);
  EXPECT_EQ(m.problem.type, GemmType::kMGroupedMasked);
  EXPECT_EQ(m.problem.m, 256u);
  EXPECT_EQ(m.problem.num_groups, 6u);
  EXPECT_EQ(m.expected_m, 64u);
  EXPECT_EQ(m.out, DType::kFP32);

  const plan::GemmDesc k = validate_call(kgrouped_call(true), fake_device);
  EXPECT_EQ(k.problem.type, GemmType::kKGroupedContiguous);
  EXPECT_EQ(k.problem.m, 256u);
  EXPECT_EQ(k.problem.k, 1024u);
  EXPECT_EQ(k.problem.num_groups, 5u);
  EXPECT_TRUE(k.has_c) << "accumulating is the C = D epilogue";
  EXPECT_FALSE(validate_call(kgrouped_call(false), fake_device).has_c);

  // A group array whose allocation is known and long enough: 16 int32 hold 8 experts' offsets.
  CallArgs fits = contiguous_call();
  fits.group.data = device_array(kShortArray);
  EXPECT_EQ(error_of(fits), "");
}

TEST(GroupedValidation, NoRowsNoColumnsOrNoGroupsAreNoOps) {
  // No token routed to any expert this step, or n = 0: nothing to write, pointers not looked at.
  const auto no_op = [](CallArgs x) {
    x.a.data = x.d.data = x.c.data = nullptr;
    x.group.data = nullptr;
    EXPECT_TRUE(nothing_to_do(validate_call(x, fake_device)));
  };
  CallArgs c = contiguous_call();
  c.a.rows = c.d.rows = 0;
  no_op(c);
  CallArgs m = masked_call();
  m.a.rows = m.d.rows = 0;
  no_op(m);
  CallArgs k = kgrouped_call(true);
  k.b.rows = k.d.cols = k.c.cols = 0;
  no_op(k);
  // No expert or no group, as cuBLAS's grouped GEMM with a group count of 0.
  CallArgs c0 = contiguous_call();
  c0.b.batch = 0;
  no_op(c0);
  CallArgs m0 = masked_call();
  m0.a.batch = m0.b.batch = m0.d.batch = 0;
  no_op(m0);
  CallArgs k0 = kgrouped_call(true);
  k0.d.batch = k0.c.batch = 0;
  no_op(k0);
  // Still checked with nothing to do: the operands' agreement.
  m0.b.batch = 1;
  EXPECT_NE(error_of(m0).find("batches differ (A 0, B 1, D 0)"), std::string::npos) << error_of(m0);
}

TEST(GroupedValidation, EveryBadArgumentIsNamedWithItsRule) {
  const CallArgs c = contiguous_call(), m = masked_call(), k = kgrouped_call();
  expect_refused({
      // The group arrays: null, misaligned, on the host or another device, too short, overlapping D.
      refused(c, [](CallArgs& x) { x.group.data = nullptr; }, "m-grouped contiguous: layout.data (expert offsets) is null"),
      refused(m, [](CallArgs& x) { x.group.data = nullptr; }, "m-grouped masked: masked_m is null"),
      refused(k, [](CallArgs& x) { x.group.data = nullptr; }, "k-grouped: k_sizes is null"),
      refused(m, [](CallArgs& x) { x.group.data = device_array(0x800002); }, "masked_m is not 4-byte aligned"),
      refused(k, [](CallArgs& x) { x.group.data = device_array(kHost); },
              "k-grouped: k_sizes is not in device memory (a host pointer, or one CUDA does not know) (the kernel reads "
              "it; the host never does)"),
      refused(m, [](CallArgs& x) { x.group.data = device_array(kDevice1); },
              "m-grouped masked: masked_m is on device 1, but the call runs on device 0"),
      refused(c, [](CallArgs& x) { x.group.layout = ContiguousLayout::kRowIndex, x.group.data = device_array(kShortArray); },
              "layout.data (expert of each row) needs 1000 int32 (4000 bytes), but its allocation ends 64 bytes after it"),
      refused(m, [](CallArgs& x) { x.group.data = device_array(kShortArray + 48); }, "masked_m needs 6 int32 (24 bytes)"),
      refused(k, [](CallArgs& x) { x.group.data = static_cast<const int32_t*>(x.d.data) + 8; }, "k_sizes overlaps D"),
      refused(c, [](CallArgs& x) { x.group.layout = static_cast<ContiguousLayout>(7); },
              "layout.kind 7 is neither kOffsets nor kRowIndex"),
      // Group counts that operands disagree on, or negative.
      refused(c, [](CallArgs& x) { x.b.batch = -1; }, "m-grouped contiguous: B has a negative size (-1x384x512)"),
      refused(m, [](CallArgs& x) { x.b.batch = 5; }, "batches differ (A 6, B 5, D 6)"),
      refused(c, [](CallArgs& x) { x.a.batch = 2; }, "batch must be 1, not 2"),
      refused(k, [](CallArgs& x) { x.b.batch = 2; }, "their batch must be 1 (A 1, B 2)"),
      // Shapes against the form.
      refused(c, [](CallArgs& x) { x.d.rows = 999; }, "D has 999 rows, A has 1000"),
      refused(c, [](CallArgs& x) { x.d.cols = 392; }, "D has 392 columns, expected n = rows of B = 384"),
      refused(c, [](CallArgs& x) { x.b.cols = 504; }, "K differs"),
      refused(m, [](CallArgs& x) { x.d.rows = 128; }, "D has 128 rows per expert, A has 256 (max_m)"),
      refused(m, [](CallArgs& x) { x.group.expected_m = 0; }, "expected_m 0 is not in 1..max_m = 256"),
      refused(m, [](CallArgs& x) { x.group.expected_m = 257; }, "expected_m 257 is not in 1..max_m = 256"),
      refused(k, [](CallArgs& x) { x.d.rows = 128; }, "D has 128 rows, expected m = rows of A = 256"),
      refused(k, [](CallArgs& x) { x.has_c = true, x.c = x.d, x.c.data = at(0x6000000); },
              "accumulating reads D itself, no other C"),
      refused(c, [](CallArgs& x) { x.a.cols = x.b.cols = 0; }, "m-grouped contiguous: k is 0 (A is 1x1000x0)"),
      refused(k, [](CallArgs& x) { x.a.cols = x.b.cols = 0; }, "k-grouped: k is 0"),
      // No epilogue of their own.
      refused(m, [](CallArgs& x) { x.alpha = 2.0f; }, "m-grouped masked: takes no alpha, beta or bias"),
      refused(c, [](CallArgs& x) { x.bias = {at(0x900000), DType::kFP32, 384}; }, "takes no alpha, beta or bias"),
      // The operands' own rules, with the form named.
      refused(m, [](CallArgs& x) { x.a.dtype = DType::kFP32; }, "m-grouped masked: A must be bf16"),
      refused(k, [](CallArgs& x) { x.d.dtype = static_cast<DType>(9); }, "k-grouped: D: dtype 9 is not a tilecast::DType"),
      refused(k, [](CallArgs& x) { x.a.cols = 1020, x.b.cols = 1020; },
              "k-grouped: A: row stride of 1020 elements is 2040 bytes, not a multiple of 16"),
      refused(c, [](CallArgs& x) { x.a.data = at(0x1000008); }, "m-grouped contiguous: A: base address is not 16-byte aligned"),
      refused(c, [](CallArgs& x) { x.a.rows = x.d.rows = int64_t{1} << 31; }, "has a size of 2^31 or more"),
      refused(m, [](CallArgs& x) { x.a.rows = -5; }, "m-grouped masked: A has a negative size"),
      refused(k, [](CallArgs& x) { x.a.rows = x.d.rows = 1 << 30, x.d.batch = 1 << 12; },
              "k-grouped: D (4096x1073741824x384) has 412316860416 tiles of 64x64, 2^32 or more"),
      refused(c, [](CallArgs& x) { x.b.data = at(kDevice1); }, "m-grouped contiguous: B is on device 1"),
      refused(k, [](CallArgs& x) { x.d.data = at(kAlloc + 4096); }, "k-grouped: D reaches past its allocation"),
      refused(m, [](CallArgs& x) { x.d.data = x.b.data; }, "D overlaps A or B"),
      refused(k, [](CallArgs& x) { x.d.batch_stride = 100; }, "k-grouped: D: batch stride 100 is smaller than one matrix"),
  });
}

}  // namespace
}  // namespace tilecast::api
