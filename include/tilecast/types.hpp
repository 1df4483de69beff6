// Public vocabulary: element types, the error type and tensor views.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tilecast/device/dtype.cuh"
#include "tilecast/device/gemm_layout.cuh"

namespace tilecast {

inline constexpr size_t dtype_size(DType t) { return dtype_bytes(t); }
inline const char* dtype_name(DType t) { return t == DType::kBF16 ? "bf16" : "fp32"; }

// Every error tilecast reports, before anything is launched where the input is at fault.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error("tilecast: " + what) {}
};

// A row-major matrix (or a batch of them) in device memory: element (b, r, c) sits at
// data + b * batch_stride + r * row_stride + c, in elements. Columns are contiguous. A view always
// describes the matrix as stored: an operand stored transposed (GemmLayout) is a view of the
// stored [k, m] or [k, n] matrix.
struct MatrixView {
  void* data = nullptr;
  DType dtype = DType::kBF16;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;    // elements between rows; 0 means cols
  int64_t batch_stride = 0;  // elements between batches; 0 means rows * row_stride
  int64_t batch = 1;         // matrices in the batch

  int64_t ld() const { return row_stride ? row_stride : cols; }
  int64_t batch_step() const { return batch_stride ? batch_stride : rows * ld(); }
  bool operator==(const MatrixView&) const = default;
};

// A vector in device memory: `length` contiguous elements of `dtype`.
struct VectorView {
  void* data = nullptr;
  DType dtype = DType::kFP32;
  int64_t length = 0;
  bool operator==(const VectorView&) const = default;
};

}  // namespace tilecast
