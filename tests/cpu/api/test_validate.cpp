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
    validate_gemm(x.a, x.b, x.d, c, fake_device);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GemmValidation, GoodArgumentsGiveTheShape) {
  Args x;
  const plan::GemmDesc s = validate_gemm(x.a, x.b, x.d, nullptr, fake_device);
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

}  // namespace
}  // namespace tilecast::api
