#include "jit/tma.hpp"

#include <sstream>

#include "driver/driver.hpp"

namespace tilecast::jit {
namespace {

constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kMaxStrideBytes = uint64_t{1} << 40;
constexpr uint32_t kMaxBox = 256;

const char* swizzle_name(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::kNone: return "none";
    case TmaSwizzle::k32B: return "32B";
    case TmaSwizzle::k64B: return "64B";
    case TmaSwizzle::k128B: return "128B";
  }
  return "invalid";
}

CUtensorMapSwizzle to_driver(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::kNone: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TmaSwizzle::k32B: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TmaSwizzle::k64B: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TmaSwizzle::k128B: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  throw Error("TMA descriptor: unknown swizzle mode " + std::to_string(static_cast<uint32_t>(s)));
}

CUtensorMapL2promotion to_driver(TmaL2Promotion p) {
  switch (p) {
    case TmaL2Promotion::kNone: return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case TmaL2Promotion::k64B: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case TmaL2Promotion::k128B: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case TmaL2Promotion::k256B: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  throw Error("TMA descriptor: unknown L2 promotion " + std::to_string(static_cast<uint32_t>(p)));
}

CUtensorMapDataType to_driver(DType t) {
  switch (t) {
    case DType::kBF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::kFP32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
  throw Error("TMA descriptor: unknown dtype " + std::to_string(static_cast<uint32_t>(t)));
}

}  // namespace

TmaTensor tma_2d(const void* base, DType dtype, uint64_t rows, uint64_t cols, uint64_t row_stride,
                 uint32_t box_rows, uint32_t box_cols, TmaSwizzle swizzle) {
  TmaTensor t;
  t.base = base;
  t.dtype = dtype;
  t.rank = 2;
  t.dims[0] = cols;
  t.dims[1] = rows;
  t.strides[1] = row_stride ? row_stride : cols;
  t.box[0] = box_cols;
  t.box[1] = box_rows;
  t.swizzle = swizzle;
  return t;
}

TmaTensor tma_3d(const void* base, DType dtype, uint64_t batch, uint64_t rows, uint64_t cols,
                 uint64_t row_stride, uint64_t batch_stride, uint32_t box_batch, uint32_t box_rows,
                 uint32_t box_cols, TmaSwizzle swizzle) {
  TmaTensor t = tma_2d(base, dtype, rows, cols, row_stride, box_rows, box_cols, swizzle);
  t.rank = 3;
  t.dims[2] = batch;
  t.strides[2] = batch_stride ? batch_stride : rows * t.strides[1];
  t.box[2] = box_batch;
  return t;
}

TmaTensor tma_tensor(const MatrixView& view, uint32_t box_rows, uint32_t box_cols,
                     TmaSwizzle swizzle) {
  const bool batched = view.batch > 1;
  if (view.rows < 0 || view.cols < 0 || view.batch < 1 || view.row_stride < 0 || (batched && view.batch_stride < 0)) {
    throw Error("TMA descriptor: a MatrixView with a negative size or stride, or batch < 1");
  }
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const uint64_t batch_step = batched ? u(view.batch_step()) : u(view.rows) * u(view.ld());
  return tma_3d(view.data, view.dtype, u(view.batch), u(view.rows), u(view.cols), u(view.ld()), batch_step, 1,
                box_rows, box_cols, swizzle);
}

std::string describe(const TmaTensor& t) {
  std::ostringstream s;
  s << t.rank << "-D " << dtype_name(t.dtype) << " [";
  if (t.rank == 3) s << "batch=" << t.dims[2] << ", ";
  s << "rows=" << t.dims[1] << ", cols=" << t.dims[0] << "] row_stride=" << t.strides[1];
  if (t.rank == 3) s << " batch_stride=" << t.strides[2];
  s << " box=[";
  if (t.rank == 3) s << t.box[2] << ", ";
  s << t.box[1] << ", " << t.box[0] << "] swizzle=" << swizzle_name(t.swizzle) << " base=" << t.base;
  return s.str();
}

TmaEncodeArgs tma_encode_args(const TmaTensor& t) {
  const auto fail = [&](const std::string& why) {
    throw Error("TMA descriptor: " + why + " [" + describe(t) + "]");
  };
  if (t.rank != 2 && t.rank != 3) fail("rank must be 2 or 3, not " + std::to_string(t.rank));
  const uint64_t elem = dtype_size(t.dtype);
  if (t.dtype != DType::kBF16 && t.dtype != DType::kFP32) fail("dtype must be bf16 or fp32");

  const auto address = reinterpret_cast<uintptr_t>(t.base);
  if (address == 0) fail("the base address is null");
  if (address % 16 != 0) fail("the base address is not 16-byte aligned");

  static const char* const kDimNames[] = {"cols", "rows", "batch"};
  for (uint32_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] == 0 || t.dims[i] > kMaxDim) {
      fail(std::string(kDimNames[i]) + " must be in [1, 2^32], not " + std::to_string(t.dims[i]));
    }
  }
  static const char* const kStrideNames[] = {"", "row stride", "batch stride"};
  for (uint32_t i = 1; i < t.rank; ++i) {
    const std::string name = kStrideNames[i];
    // Bounded first, so that its bytes cannot wrap; the extent below is 128-bit for the same reason.
    if (t.strides[i] >= kMaxStrideBytes / elem) {
      fail(name + " of " + std::to_string(t.strides[i]) + " elements is 2^40 bytes or more");
    }
    const uint64_t bytes = t.strides[i] * elem;
    // Elements spanned by one step of the dimension below.
    const unsigned __int128 extent = static_cast<unsigned __int128>(t.dims[i - 1]) * t.strides[i - 1];
    if (t.strides[i] < extent) {
      fail(name + " of " + std::to_string(t.strides[i]) + " elements is smaller than the " +
           (extent >> 64 ? std::string("2^64 or more") : std::to_string(static_cast<uint64_t>(extent))) +
           " elements it must span");
    }
    if (bytes % 16 != 0) {
      fail(name + " of " + std::to_string(t.strides[i]) + " elements (" + std::to_string(bytes) +
           " bytes) is not a multiple of 16 bytes");
    }
  }
  static const char* const kBoxNames[] = {"box cols", "box rows", "box batch"};
  for (uint32_t i = 0; i < t.rank; ++i) {
    if (t.box[i] == 0 || t.box[i] > kMaxBox) {
      fail(std::string(kBoxNames[i]) + " must be in [1, 256], not " + std::to_string(t.box[i]));
    }
  }
  const uint64_t inner_bytes = t.box[0] * elem;
  if (inner_bytes % 16 != 0) {
    fail("the box's inner row of " + std::to_string(t.box[0]) + " elements (" +
         std::to_string(inner_bytes) + " bytes) is not a multiple of 16 bytes");
  }
  const uint64_t span = static_cast<uint32_t>(t.swizzle);
  if (span != 0 && inner_bytes > span) {
    fail("the box's inner row of " + std::to_string(inner_bytes) + " bytes exceeds the " +
         std::to_string(span) + "-byte swizzle span (at most " + std::to_string(span / elem) +
         " " + dtype_name(t.dtype) + " per box row)");
  }

  TmaEncodeArgs a{};
  a.data_type = to_driver(t.dtype);
  a.rank = t.rank;
  a.address = const_cast<void*>(t.base);
  for (uint32_t i = 0; i < 3; ++i) {
    a.dims[i] = i < t.rank ? t.dims[i] : 1;
    a.box[i] = i < t.rank ? t.box[i] : 1;
    a.element_strides[i] = 1;
  }
  a.strides_bytes[0] = t.strides[1] * elem;
  a.strides_bytes[1] = t.rank == 3 ? t.strides[2] * elem : 0;
  a.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  a.swizzle = to_driver(t.swizzle);
  a.l2_promotion = to_driver(t.l2_promotion);
  a.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;  // out-of-bounds elements read as zero
  return a;
}

CUtensorMap make_tensor_map(const TmaTensor& t) {
  TmaEncodeArgs a = tma_encode_args(t);
  CUtensorMap map{};
  const Driver& d = Driver::get();
  const CUresult r = d.cuTensorMapEncodeTiled(&map, a.data_type, a.rank, a.address, a.dims,
                                              a.strides_bytes, a.box, a.element_strides,
                                              a.interleave, a.swizzle, a.l2_promotion, a.oob_fill);
  if (r != CUDA_SUCCESS) {
    throw Error("cuTensorMapEncodeTiled failed: " + d.describe(r) + " [" + describe(t) + "]");
  }
  return map;
}

}  // namespace tilecast::jit
