// TMA descriptors (CUtensorMap) for 2-D and 3-D row-major bf16/fp32 tensors: tiled mode, a box,
// swizzle none/32B/64B/128B, L2 promotion, out-of-bounds elements read as zero.
//
// Every argument is checked before the driver sees it (tma_encode_args is pure and needs no GPU),
// and a violation throws tilecast::Error saying which rule and which tensor.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "tilecast/types.hpp"

namespace tilecast::jit {

enum class TmaSwizzle : uint32_t { kNone = 0, k32B = 32, k64B = 64, k128B = 128 };
enum class TmaL2Promotion : uint32_t { kNone = 0, k64B = 64, k128B = 128, k256B = 256 };

// A tensor as TMA sees it, innermost dimension first (the driver's order): dims = {cols, rows}
// or {cols, rows, batch}. Strides are in elements; strides[0] is the element itself (1).
struct TmaTensor {
  const void* base = nullptr;
  DType dtype = DType::kBF16;
  uint32_t rank = 2;            // 2 or 3
  uint64_t dims[3] = {0, 0, 1};
  uint64_t strides[3] = {1, 0, 0};  // strides[1] = row stride, strides[2] = batch stride
  uint32_t box[3] = {0, 0, 1};      // box_cols, box_rows, box_batch
  TmaSwizzle swizzle = TmaSwizzle::k128B;
  TmaL2Promotion l2_promotion = TmaL2Promotion::k256B;
};

// A rows x cols matrix with `row_stride` elements between rows (0 means cols).
TmaTensor tma_2d(const void* base, DType dtype, uint64_t rows, uint64_t cols, uint64_t row_stride,
                 uint32_t box_rows, uint32_t box_cols, TmaSwizzle swizzle = TmaSwizzle::k128B);

// `batch` such matrices, `batch_stride` elements apart (0 means rows * row_stride).
TmaTensor tma_3d(const void* base, DType dtype, uint64_t batch, uint64_t rows, uint64_t cols,
                 uint64_t row_stride, uint64_t batch_stride, uint32_t box_batch, uint32_t box_rows,
                 uint32_t box_cols, TmaSwizzle swizzle = TmaSwizzle::k128B);

// A MatrixView as the GEMM kernels load it: 3-D, a box one matrix deep, even for one matrix,
// whose batch stride is never stepped and may be anything (its span stands in for it).
TmaTensor tma_tensor(const MatrixView& view, uint32_t box_rows, uint32_t box_cols,
                     TmaSwizzle swizzle = TmaSwizzle::k128B);

// The arguments of cuTensorMapEncodeTiled, innermost first.
struct TmaEncodeArgs {
  CUtensorMapDataType data_type;
  cuuint32_t rank;
  void* address;
  cuuint64_t dims[3];
  cuuint64_t strides_bytes[2];  // of dims 1 and 2 (dim 0 is contiguous)
  cuuint32_t box[3];
  cuuint32_t element_strides[3];
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2_promotion;
  CUtensorMapFloatOOBfill oob_fill;
};

// Checks t and lays out the driver's arguments; throws tilecast::Error on the first violation:
// rank 2 or 3; a base address that is not null and 16-byte aligned; dims in [1, 2^32]; strides
// that are multiples of 16 bytes, below 2^40 bytes and at least the extent of the dimension below
// (no overlapping rows or matrices); box dims in [1, 256]; an inner box row that is a multiple of
// 16 bytes and, with a swizzle, no wider than the swizzle span.
TmaEncodeArgs tma_encode_args(const TmaTensor& t);

// tma_encode_args, then cuTensorMapEncodeTiled. Throws tilecast::Error if either refuses.
CUtensorMap make_tensor_map(const TmaTensor& t);

// "2-D bf16 [rows=100, cols=200] row_stride=200 box=[64, 64] swizzle=128B".
std::string describe(const TmaTensor& t);

}  // namespace tilecast::jit
