// Argument checks of tilecast::gemm, without a GPU: every bad input is refused with an error that
// names the operand and the rule, before anything could be launched.
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace tilecast::api
