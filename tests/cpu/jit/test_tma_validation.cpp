// TMA descriptor arguments and their validation: pure host code, no driver call.
#include <gtest/gtest.h>

#include "jit/tma.hpp"
#include "jit_test_util.hpp"

namespace tilecast::jit {
namespace {

using test::Contains;

// A fake, well-aligned device address: validation never dereferences it.
const void* const kBase = reinterpret_cast<const void*>(uintptr_t{0x7f0000000000});

std::string error_of(const TmaTensor& t) {
  try {
    tma_encode_args(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JitTma, TwoDimensionalBf16WithSwizzle) {
  const TmaEncodeArgs a = tma_encode_args(tma_2d(kBase, DType::kBF16, 4096, 7168, 0, 128, 64));
  EXPECT_EQ(a.data_type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.address, kBase);
  EXPECT_EQ(a.dims[0], 7168u);  // innermost first
  EXPECT_EQ(a.dims[1], 4096u);
  EXPECT_EQ(a.strides_bytes[0], 7168u * 2);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.element_strides[0], 1u);
  EXPECT_EQ(a.element_strides[1], 1u);
  EXPECT_EQ(a.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(a.oob_fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(JitTma, ThreeDimensionalFp32WithoutSwizzle) {
  TmaTensor t = tma_3d(kBase, DType::kFP32, 8, 100, 36, 40, 0, 1, 32, 36, TmaSwizzle::kNone);
  t.l2_promotion = TmaL2Promotion::k128B;
  const TmaEncodeArgs a = tma_encode_args(t);
  EXPECT_EQ(a.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.dims[0], 36u);
  EXPECT_EQ(a.dims[1], 100u);
  EXPECT_EQ(a.dims[2], 8u);
  EXPECT_EQ(a.strides_bytes[0], 40u * 4);
  EXPECT_EQ(a.strides_bytes[1], 100u * 40 * 4);  // batch stride 0 means rows * row_stride
  EXPECT_EQ(a.box[0], 36u);
  EXPECT_EQ(a.box[1], 32u);
  EXPECT_EQ(a.box[2], 1u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(a.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

TEST(JitTma, FromMatrixView) {
  MatrixView v;
  v.data = const_cast<void*>(kBase);
  v.rows = 256;
  v.cols = 512;
  const TmaTensor one = tma_tensor(v, 128, 64);
  EXPECT_EQ(one.rank, 3u);
  EXPECT_EQ(one.dims[2], 1u);
  EXPECT_EQ(one.strides[1], 512u);
  EXPECT_EQ(one.strides[2], 256u * 512);
  // One matrix's batch stride is never stepped: whatever it says (validation lets it be anything,
  // in place C = D included), the descriptor encodes.
  for (const int64_t any : {int64_t{100}, int64_t{3}, int64_t{-5}, int64_t{1} << 45}) {
    v.batch_stride = any;
    EXPECT_NO_THROW(tma_encode_args(tma_tensor(v, 128, 64))) << "batch stride " << any;
  }
  v.batch_stride = 0;
  v.batch = 3;
  v.row_stride = 520;
  const TmaTensor three = tma_tensor(v, 128, 64);
  EXPECT_EQ(three.rank, 3u);
  EXPECT_EQ(three.dims[2], 3u);
  EXPECT_EQ(three.strides[1], 520u);
  EXPECT_EQ(three.strides[2], 256u * 520);
  EXPECT_EQ(three.box[2], 1u);
  EXPECT_NO_THROW(tma_encode_args(three));
}

TEST(JitTma, RejectsMisalignedOrNullBase) {
  const auto misaligned = reinterpret_cast<const void*>(uintptr_t{0x7f0000000008});
  EXPECT_TRUE(Contains(error_of(tma_2d(misaligned, DType::kBF16, 64, 64, 0, 64, 64)),
                       "base address is not 16-byte aligned"));
  EXPECT_TRUE(Contains(error_of(tma_2d(nullptr, DType::kBF16, 64, 64, 0, 64, 64)),
                       "base address is null"));
}

TEST(JitTma, RejectsBadStrides) {
  // 100 bf16 = 200 bytes between rows.
  const std::string e = error_of(tma_2d(kBase, DType::kBF16, 64, 100, 100, 64, 64));
  EXPECT_TRUE(Contains(e, "row stride of 100 elements (200 bytes) is not a multiple of 16 bytes"));
  EXPECT_TRUE(Contains(e, "2-D bf16 [rows=64, cols=100]"));
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 64, 128, 120, 64, 64)),
                       "row stride of 120 elements is smaller than the 128"));
  EXPECT_TRUE(Contains(error_of(tma_3d(kBase, DType::kFP32, 4, 64, 64, 64, 64 * 60, 1, 32, 32,
                                       TmaSwizzle::k128B)),
                       "batch stride of 3840 elements is smaller than the 4096"));
  EXPECT_TRUE(Contains(error_of(tma_3d(kBase, DType::kBF16, 4, 64, 64, 64, 64 * 64 + 4, 1, 32, 64)),
                       "batch stride of 4100 elements (8200 bytes) is not a multiple of 16"));
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 4, uint64_t{1} << 40, 0, 4, 64)),
                       "cols must be in [1, 2^32]"));
  // Strides whose bytes or spans pass 2^64: refused, not wrapped into small legal-looking ones.
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kFP32, 64, 64, uint64_t{1} << 62, 64, 32)),
                       "row stride of 4611686018427387904 elements is 2^40 bytes or more"));
  const uint64_t rows = uint64_t{1} << 32, ld = uint64_t{1} << 36;  // rows x ld = 2^68 elements
  EXPECT_TRUE(Contains(error_of(tma_3d(kBase, DType::kBF16, 2, rows, 64, ld, 8, 1, 64, 64)),
                       "batch stride of 8 elements is smaller than the 2^64 or more elements it must span"));
}

TEST(JitTma, RejectsBadBoxes) {
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 1024, 1024, 0, 512, 64)),
                       "box rows must be in [1, 256], not 512"));
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 1024, 1024, 0, 0, 64)),
                       "box rows must be in [1, 256], not 0"));
  // 128 bf16 = 256 bytes: wider than the 128B swizzle span, fine without swizzle.
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 1024, 1024, 0, 64, 128)),
                       "256 bytes exceeds the 128-byte swizzle span (at most 64 bf16"));
  EXPECT_NO_THROW(tma_encode_args(tma_2d(kBase, DType::kBF16, 1024, 1024, 0, 64, 128,
                                         TmaSwizzle::kNone)));
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kFP32, 1024, 1024, 0, 64, 32,
                                       TmaSwizzle::k64B)),
                       "exceeds the 64-byte swizzle span (at most 16 fp32"));
  // 4 bf16 = 8 bytes: not a multiple of 16.
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 1024, 1024, 0, 64, 4)),
                       "inner row of 4 elements (8 bytes) is not a multiple of 16 bytes"));
}

TEST(JitTma, RejectsBadRankAndZeroDims) {
  TmaTensor t = tma_2d(kBase, DType::kBF16, 64, 64, 0, 64, 64);
  t.rank = 4;
  EXPECT_TRUE(Contains(error_of(t), "rank must be 2 or 3"));
  EXPECT_TRUE(Contains(error_of(tma_2d(kBase, DType::kBF16, 0, 64, 0, 64, 64)),
                       "rows must be in [1, 2^32], not 0"));
}

}  // namespace
}  // namespace tilecast::jit
