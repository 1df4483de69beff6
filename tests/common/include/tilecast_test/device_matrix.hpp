// Owning device memory for test and benchmark matrices, and the tilecast::MatrixView over it.
//
// A DeviceMatrix allocates guard bytes before and after the matrix, so that check_written()
// (fill.hpp) also catches writes just outside it; the view's data pointer stays 256-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tilecast/types.hpp"

namespace tilecast::test {

// cudaMalloc'ed bytes, freed on destruction. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Bytes of guard on each side of a DeviceMatrix's elements.
inline constexpr size_t kGuardBytes = 1024;

struct DeviceMatrix {
  DeviceBuffer buffer;  // guard | matrix footprint | guard
  MatrixView view;      // row_stride and batch_stride always explicit (never 0)

  void* alloc_begin() const { return buffer.get(); }
  // Elements in the whole allocation, guards included (what poison() and check_written() cover).
  int64_t alloc_elems() const { return static_cast<int64_t>(buffer.bytes() / dtype_size(view.dtype)); }
  // Offset of view.data from alloc_begin(), in elements.
  int64_t data_offset_elems() const { return static_cast<int64_t>(kGuardBytes / dtype_size(view.dtype)); }
};

// rows x cols per matrix, `batch` matrices. ld 0: cols (tight); batch_stride 0: rows * ld.
// Throws tilecast::test::CudaError when the allocation fails, std::invalid_argument on bad sizes.
DeviceMatrix make_matrix(DType dtype, int64_t rows, int64_t cols, int64_t batch = 1, int64_t ld = 0,
                         int64_t batch_stride = 0);

// The smallest row stride >= cols whose rows start on 16-byte boundaries (what TMA needs).
inline int64_t aligned_ld(int64_t cols, DType dtype) {
  const int64_t per16 = static_cast<int64_t>(16 / dtype_size(dtype));
  return (cols + per16 - 1) / per16 * per16;
}

// Elements from view.data to one past the last element of the last row of the last batch.
inline int64_t footprint_elems(const MatrixView& v) {
  if (v.rows == 0 || v.cols == 0 || v.batch == 0) return 0;
  return (v.batch - 1) * v.batch_step() + (v.rows - 1) * v.ld() + v.cols;
}

// Views into a view (no copies).
MatrixView batch_of(const MatrixView& v, int64_t b);                       // one matrix
MatrixView rows_of(const MatrixView& v, int64_t row_begin, int64_t row_end);  // rows of every batch
// A batch whose matrices follow each other without gaps seen as one tall matrix; throws otherwise.
MatrixView flatten_batches(const MatrixView& v);

// Element-wise host copies (any strides), as float. For small test matrices. They synchronize the
// device first (plain cudaMemcpy does not wait for non-blocking streams).
std::vector<float> to_host(const MatrixView& v);           // b-major, then rows, then cols
void from_host(const MatrixView& v, const std::vector<float>& values);  // bf16: round to nearest even
void set_element(const MatrixView& v, int64_t b, int64_t r, int64_t c, float value);
float get_element(const MatrixView& v, int64_t b, int64_t r, int64_t c);

// bf16 <-> float on the host, bit exact (round to nearest even, NaN kept NaN).
float bf16_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float f);

}  // namespace tilecast::test
