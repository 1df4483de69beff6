#include "api/validate.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace tilecast::api {
namespace {

// TMA coordinates are signed 32-bit and its extents at most 2^32; keep every size well inside.
constexpr int64_t kMaxExtent = int64_t{1} << 31;

std::string dims(const MatrixView& v) {
  return std::to_string(v.batch) + "x" + std::to_string(v.rows) + "x" + std::to_string(v.cols);
}

void check_view(const char* name, const MatrixView& v, PointerQuery where_is) {
  const std::string n = name;
  if (v.data == nullptr) throw Error(n + " is null");
  if (v.rows <= 0 || v.cols <= 0 || v.batch <= 0)
    throw Error(n + " is empty (" + dims(v) + "): every size must be at least 1");
  if (v.rows >= kMaxExtent || v.cols >= kMaxExtent || v.batch >= kMaxExtent)
    throw Error(n + " (" + dims(v) + ") has a size of 2^31 or more");
  const int64_t elem = static_cast<int64_t>(dtype_size(v.dtype));
  if (v.row_stride != 0 && v.row_stride < v.cols)
    throw Error(n + ": row stride " + std::to_string(v.row_stride) + " is smaller than its " + std::to_string(v.cols) +
                " columns");
  if ((v.ld() * elem) % 16 != 0)
    throw Error(n + ": row stride of " + std::to_string(v.ld()) + " elements is " + std::to_string(v.ld() * elem) +
                " bytes, not a multiple of 16 (TMA needs 16-byte aligned strides; pad the rows)");
  if (reinterpret_cast<uintptr_t>(v.data) % 16 != 0) throw Error(n + ": base address is not 16-byte aligned");
  if (v.batch > 1) {
    if (v.batch_stride != 0 && v.batch_stride < v.rows * v.ld())
      throw Error(n + ": batch stride " + std::to_string(v.batch_stride) + " is smaller than one matrix (" +
                  std::to_string(v.rows * v.ld()) + " elements): batches would overlap");
    if ((v.batch_step() * elem) % 16 != 0) throw Error(n + ": batch stride is not a multiple of 16 bytes");
  }
  const PointerFacts f = where_is(v.data);
  if (!f.device_memory) throw Error(n + " is not in device memory of the current device");
}

// Byte range [first, last) that a view spans.
std::pair<uintptr_t, uintptr_t> span(const MatrixView& v) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(v.data);
  const int64_t elems = (v.batch - 1) * v.batch_step() + (v.rows - 1) * v.ld() + v.cols;
  return {first, first + static_cast<uintptr_t>(elems) * dtype_size(v.dtype)};
}

bool overlap(const MatrixView& x, const MatrixView& y) {
  const auto [a0, a1] = span(x);
  const auto [b0, b1] = span(y);
  return a0 < b1 && b0 < a1;
}

}  // namespace

plan::GemmDesc validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GemmEpilogue& epilogue, PointerQuery where_is) {
  const MatrixView* c = epilogue.c;
  check_view("A", a, where_is);
  check_view("B", b, where_is);
  check_view("D", d, where_is);
  if (a.dtype != DType::kBF16) throw Error(std::string("A must be bf16, not ") + dtype_name(a.dtype));
  if (b.dtype != DType::kBF16) throw Error(std::string("B must be bf16, not ") + dtype_name(b.dtype));
  if (a.cols != b.cols)
    throw Error("A is [m=" + std::to_string(a.rows) + ", k=" + std::to_string(a.cols) + "] but B is [n=" +
                std::to_string(b.rows) + ", k=" + std::to_string(b.cols) + "]: K differs");
  if (d.rows != a.rows || d.cols != b.rows)
    throw Error("D is " + std::to_string(d.rows) + "x" + std::to_string(d.cols) + ", expected m x n = " +
                std::to_string(a.rows) + "x" + std::to_string(b.rows));
  if (a.batch != b.batch || a.batch != d.batch)
    throw Error("batch counts differ: A " + std::to_string(a.batch) + ", B " + std::to_string(b.batch) + ", D " +
                std::to_string(d.batch));
  if (overlap(d, a) || overlap(d, b)) throw Error("D overlaps A or B in memory");
  if (c) {
    check_view("C", *c, where_is);
    if (c->dtype != d.dtype)
      throw Error(std::string("C is ") + dtype_name(c->dtype) + " but D is " + dtype_name(d.dtype) +
                  ": C must have D's dtype");
    if (c->rows != d.rows || c->cols != d.cols || c->batch != d.batch)
      throw Error("C is " + dims(*c) + ", D is " + dims(d) + ": they must match");
    // D = D + A * B^T is fine (each element of C is read before the same element of D is
    // written); any other overlap of C and D is not.
    const bool same = c->data == d.data && c->ld() == d.ld() && c->batch_step() == d.batch_step();
    if (!same && overlap(*c, d)) throw Error("C overlaps D without being D itself");
  } else if (epilogue.beta != 1.0f) {
    throw Error("beta is " + std::to_string(epilogue.beta) + " but there is no C: beta scales C (give C, or leave beta at 1)");
  }
  const VectorView& bias = epilogue.bias;
  if (bias.data) {
    if (bias.dtype != DType::kBF16 && bias.dtype != DType::kFP32)
      throw Error("bias must be bf16 or fp32, not dtype " + std::to_string(static_cast<unsigned>(bias.dtype)));
    if (bias.length != d.cols)
      throw Error("bias has " + std::to_string(bias.length) + " elements but D has " + std::to_string(d.cols) +
                  " columns: one per column");
    if (reinterpret_cast<uintptr_t>(bias.data) % 16 != 0) throw Error("bias: base address is not 16-byte aligned (TMA)");
    if (!where_is(bias.data).device_memory) throw Error("bias is not in device memory of the current device");
    const uintptr_t b0 = reinterpret_cast<uintptr_t>(bias.data), b1 = b0 + bias.length * dtype_size(bias.dtype);
    const auto [d0, d1] = span(d);
    if (b0 < d1 && d0 < b1) throw Error("bias overlaps D in memory");
  } else if (bias.length != 0) {
    throw Error("bias has " + std::to_string(bias.length) + " elements but no data pointer");
  }
  plan::GemmDesc desc = plan::dense_desc(a.rows, b.rows, a.cols, a.batch, d.dtype, c != nullptr && epilogue.beta != 0.0f);
  desc.has_bias = bias.data != nullptr;
  desc.bias_type = desc.has_bias ? bias.dtype : DType::kFP32;
  return desc;
}

PointerFacts query_pointer(const void* p) {
  PointerFacts f;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer leaves a sticky-free error: clear it
    return f;
  }
  int current = -1;
  cudaGetDevice(&current);
  f.device = attr.device;
  f.device_memory = (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) && attr.device == current;
  return f;
}

}  // namespace tilecast::api
