// Argument checks of tilecast::gemm and of the grouped calls (tilecast/grouped.hpp), without a GPU:
// every bad input is refused with an error that names the argument and the rule, before anything
// could be launched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/validate.hpp"

namespace tilecast::api {
namespace {

// Pretends every pointer below 2^40 is device memory of the current device.
PointerFacts fake_device(const void* p) {
  return {reinterpret_cast<uintptr_t>(p) < (uintptr_t{1} << 40), 0};
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

struct Args {
  MatrixView a = view(0x100000, DType::kBF16, 256, 512);
  MatrixView b = view(0x200000, DType::kBF16, 384, 512);
  MatrixView d = view(0x400000, DType::kBF16, 256, 384);
};

std::string error_of(const Args& x, const MatrixView* c = nullptr) {
  try {
    GemmEpilogue e;
    e.c = c;
    validate_gemm(x.a, x.b, x.d, e, fake_device);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GemmValidation, GoodArgumentsGiveTheShape) {
  Args x;
  const plan::GemmDesc s = validate_gemm(x.a, x.b, x.d, {}, fake_device);
  EXPECT_EQ(s.problem.m, 256u);
  EXPECT_EQ(s.problem.n, 384u);
  EXPECT_EQ(s.problem.k, 512u);
  EXPECT_EQ(s.problem.num_groups, 1u);
  EXPECT_EQ(s.problem.type, GemmType::kNormal);
  EXPECT_FALSE(s.has_c);
  // D = D + A * B^T: C may be D itself.
  EXPECT_EQ(error_of(x, &x.d), "");
}

TEST(GemmValidation, BadArgumentsNameTheOperandAndTheRule) {
  auto expect = [](Args x, const std::string& what, const MatrixView* c = nullptr) {
    const std::string e = error_of(x, c);
    EXPECT_NE(e.find(what), std::string::npos) << "expected '" << what << "', got '" << e << "'";
  };
  Args x;
  x.a.dtype = DType::kFP32;
  expect(x, "A must be bf16");
  x = {};
  x.b.cols = 504;
  expect(x, "K differs");
  x = {};
  x.d.cols = 392;
  expect(x, "D is 256x392");
  x = {};
  x.a.data = reinterpret_cast<void*>(0x100008);
  expect(x, "A: base address is not 16-byte aligned");
  x = {};
  x.a.cols = 500;
  x.b.cols = 500;
  expect(x, "A: row stride of 500 elements is 1000 bytes, not a multiple of 16");
  x = {};
  x.b.row_stride = 256;
  expect(x, "B: row stride 256 is smaller than its 512 columns");
  x = {};
  x.a.rows = 0;
  x.d.rows = 0;
  expect(x, "A is empty");
  x = {};
  x.d.data = reinterpret_cast<void*>(0x100000 + 1024);
  expect(x, "D overlaps A or B");
  x = {};
  x.b.data = reinterpret_cast<void*>(uintptr_t{1} << 41);
  expect(x, "B is not in device memory");
  x = {};
  x.a.batch = 2;
  x.b.batch = 2;
  expect(x, "batch counts differ");
  x = {};
  x.a.batch = 2;
  x.b.batch = 2;
  x.d.batch = 2;
  x.d.batch_stride = 100;
  expect(x, "D: batch stride 100 is smaller than one matrix");
  x = {};
  MatrixView c = view(0x800000, DType::kFP32, 256, 384);
  expect(x, "C is fp32 but D is bf16", &c);
  c = view(0x400000 + 64, DType::kBF16, 256, 384);
  expect(x, "C overlaps D without being D itself", &c);
}

std::string epilogue_error(const GemmEpilogue& e) {
  const Args x;
  try {
    validate_gemm(x.a, x.b, x.d, e, fake_device);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

// Grouped calls: pointers below 2^40 are device memory; the allocation at kShortArray ends 64
// bytes in (16 int32), the others' ends are unknown (as a caching allocator's may be).
constexpr uintptr_t kShortArray = 0x900000;
PointerFacts fake_device_with_sizes(const void* p) {
  PointerFacts f = fake_device(p);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (at >= kShortArray && at < kShortArray + 64) f.bytes_to_end = kShortArray + 64 - at;
  return f;
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

std::string grouped_error(const CallArgs& x) {
  try {
    validate_call(x, fake_device_with_sizes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

VectorView bias_of(uintptr_t addr, DType t, int64_t length) { return {reinterpret_cast<void*>(addr), t, length}; }

TEST(GemmValidation, EpilogueArgumentsAreChecked) {
  const auto expect = [](const GemmEpilogue& e, const std::string& what) {
    const std::string err = epilogue_error(e);
    EXPECT_NE(err.find(what), std::string::npos) << "expected '" << what << "', got '" << err << "'";
  };
  GemmEpilogue e;
  e.bias = bias_of(0x900000, DType::kFP32, 384);
  EXPECT_EQ(epilogue_error(e), "");
  e.bias.length = 383;
  expect(e, "bias has 383 elements but D has 384 columns");
  e.bias = bias_of(0x900004, DType::kBF16, 384);
  expect(e, "bias: base address is not 16-byte aligned");
  e.bias = bias_of(uintptr_t{1} << 41, DType::kBF16, 384);
  expect(e, "bias is not in device memory");
  e.bias = bias_of(0x400000 + 256, DType::kBF16, 384);
  expect(e, "bias overlaps D");
  e.bias = bias_of(0, DType::kBF16, 384);
  expect(e, "bias has 384 elements but no data pointer");
  e.bias = bias_of(0x900000, static_cast<DType>(7), 384);
  expect(e, "bias must be bf16 or fp32");
  e = {};
  e.beta = 0.5f;
  expect(e, "beta is 0.5");  // no C to scale
  e.alpha = 2.0f;
  e.beta = 1.0f;
  EXPECT_EQ(epilogue_error(e), "") << "alpha alone is fine";
}

TEST(GemmValidation, BetaZeroNeverReadsC) {
  const Args x;
  const MatrixView c = view(0x800000, DType::kBF16, 256, 384);
  GemmEpilogue e;
  e.c = &c;
  EXPECT_TRUE(validate_gemm(x.a, x.b, x.d, e, fake_device).has_c);
  e.beta = 0.0f;
  EXPECT_FALSE(validate_gemm(x.a, x.b, x.d, e, fake_device).has_c) << "the plan must not read C";
  e.bias = bias_of(0x900000, DType::kBF16, 384);
  const plan::GemmDesc d = validate_gemm(x.a, x.b, x.d, e, fake_device);
  EXPECT_TRUE(d.has_bias);
  EXPECT_EQ(d.bias_type, DType::kBF16);
}

TEST(GroupedValidation, GoodArgumentsGiveEachFormsProblem) {
  const plan::GemmDesc c = validate_call(contiguous_call(), fake_device_with_sizes);
  EXPECT_EQ(c.problem.type, GemmType::kMGroupedContiguous);
  EXPECT_EQ(c.problem.contiguous_layout, ContiguousLayout::kOffsets);
  EXPECT_EQ(c.problem.m, 1000u);
  EXPECT_EQ(c.problem.n, 384u);
  EXPECT_EQ(c.problem.k, 512u);
  EXPECT_EQ(c.problem.num_groups, 8u);
  EXPECT_EQ(c.problem.group_data, device_array(0x800000)) << "the kernel's parameters carry the caller's array";
  EXPECT_EQ(validate_call(contiguous_call(ContiguousLayout::kRowIndex), fake_device_with_sizes).problem.contiguous_layout,
            ContiguousLayout::kRowIndex);

  const plan::GemmDesc m = validate_call(masked_call(), fake_device_with_sizes);
  EXPECT_EQ(m.problem.type, GemmType::kMGroupedMasked);
  EXPECT_EQ(m.problem.m, 256u);
  EXPECT_EQ(m.problem.num_groups, 6u);
  EXPECT_EQ(m.expected_m, 64u);
  EXPECT_EQ(m.out, DType::kFP32);

  const plan::GemmDesc k = validate_call(kgrouped_call(true), fake_device_with_sizes);
  EXPECT_EQ(k.problem.type, GemmType::kKGroupedContiguous);
  EXPECT_EQ(k.problem.m, 256u);
  EXPECT_EQ(k.problem.k, 1024u);
  EXPECT_EQ(k.problem.num_groups, 5u);
  EXPECT_TRUE(k.has_c) << "accumulating is the C = D epilogue";
  EXPECT_FALSE(validate_call(kgrouped_call(false), fake_device_with_sizes).has_c);

  // A group array whose allocation is known and long enough: 16 int32 hold 8 experts' offsets.
  CallArgs fits = contiguous_call();
  fits.group.data = device_array(kShortArray);
  EXPECT_EQ(grouped_error(fits), "");
}

TEST(GroupedValidation, EveryBadArgumentIsNamedWithItsRule) {
  struct Case {
    CallArgs args;
    const char* message;
  };
  std::vector<Case> cases;
  const auto add = [&](CallArgs x, auto change, const char* message) {
    change(x);
    cases.push_back({x, message});
  };
  const CallArgs c = contiguous_call(), m = masked_call(), k = kgrouped_call();
  // The group arrays: null, misaligned, on the host, too short, overlapping D.
  add(c, [](CallArgs& x) { x.group.data = nullptr; }, "m-grouped contiguous: layout.data (expert offsets) is null");
  add(m, [](CallArgs& x) { x.group.data = nullptr; }, "m-grouped masked: masked_m is null");
  add(k, [](CallArgs& x) { x.group.data = nullptr; }, "k-grouped: k_sizes is null");
  add(m, [](CallArgs& x) { x.group.data = device_array(0x800002); }, "masked_m is not 4-byte aligned");
  add(k, [](CallArgs& x) { x.group.data = device_array(uintptr_t{1} << 41); },
      "k_sizes is not in device memory of the current device");
  add(c, [](CallArgs& x) { x.group.layout = ContiguousLayout::kRowIndex, x.group.data = device_array(kShortArray); },
      "layout.data (expert of each row) needs 1000 int32 (4000 bytes), but its allocation ends 64 bytes after it");
  add(m, [](CallArgs& x) { x.group.data = device_array(kShortArray + 48); }, "masked_m needs 6 int32 (24 bytes)");
  add(k, [](CallArgs& x) { x.group.data = static_cast<const int32_t*>(x.d.data) + 8; }, "k_sizes overlaps D");
  add(c, [](CallArgs& x) { x.group.layout = static_cast<ContiguousLayout>(7); },
      "layout.kind 7 is neither kOffsets nor kRowIndex");
  // Group counts of 0 (each form counts its groups in another operand's batch).
  add(c, [](CallArgs& x) { x.b.batch = 0; }, "m-grouped contiguous: B.batch is 0: it is the number of experts, at least 1");
  add(m, [](CallArgs& x) { x.a.batch = 0; }, "m-grouped masked: A.batch is 0");
  add(k, [](CallArgs& x) { x.d.batch = 0; }, "k-grouped: D.batch is 0: it is the number of groups");
  // Shapes against the form.
  add(c, [](CallArgs& x) { x.a.batch = 2; }, "batch must be 1, not 2");
  add(c, [](CallArgs& x) { x.d.rows = 999; }, "D has 999 rows, A has 1000");
  add(c, [](CallArgs& x) { x.d.cols = 392; }, "D has 392 columns, expected n = rows of B = 384");
  add(c, [](CallArgs& x) { x.b.cols = 504; }, "K differs");
  add(m, [](CallArgs& x) { x.b.batch = 5; }, "batches differ (A 6, B 5, D 6)");
  add(m, [](CallArgs& x) { x.d.rows = 128; }, "D has 128 rows per expert, A has 256 (max_m)");
  add(m, [](CallArgs& x) { x.group.expected_m = 0; }, "expected_m 0 is not in 1..max_m = 256");
  add(m, [](CallArgs& x) { x.group.expected_m = 257; }, "expected_m 257 is not in 1..max_m = 256");
  add(k, [](CallArgs& x) { x.b.batch = 2; }, "their batch must be 1 (A 1, B 2)");
  add(k, [](CallArgs& x) { x.d.rows = 128; }, "D has 128 rows, expected m = rows of A = 256");
  add(k, [](CallArgs& x) { x.has_c = true, x.c = x.d, x.c.data = reinterpret_cast<void*>(0x6000000); },
      "accumulating reads D itself, no other C");
  // The operands' own rules, with the form named.
  add(m, [](CallArgs& x) { x.a.dtype = DType::kFP32; }, "m-grouped masked: A must be bf16");
  add(k, [](CallArgs& x) { x.a.cols = 1020, x.b.cols = 1020; },
      "k-grouped: A: row stride of 1020 elements is 2040 bytes, not a multiple of 16");
  add(c, [](CallArgs& x) { x.a.data = reinterpret_cast<void*>(0x1000008); },
      "m-grouped contiguous: A: base address is not 16-byte aligned");
  add(c, [](CallArgs& x) { x.a.rows = x.d.rows = int64_t{1} << 31; }, "has a size of 2^31 or more");
  add(k, [](CallArgs& x) { x.a.rows = 0, x.d.rows = 0; }, "k-grouped: A is empty");
  add(m, [](CallArgs& x) { x.d.data = x.b.data; }, "D overlaps A or B");
  add(k, [](CallArgs& x) { x.d.batch_stride = 100; }, "k-grouped: D: batch stride 100 is smaller than one matrix");
  for (const Case& cs : cases) {
    const std::string e = grouped_error(cs.args);
    EXPECT_NE(e.find(cs.message), std::string::npos) << "expected '" << cs.message << "', got '" << e << "'";
  }
}

}  // namespace
}  // namespace tilecast::api
