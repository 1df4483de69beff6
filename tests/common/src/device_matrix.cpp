#include "tilecast_test/device_matrix.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "tilecast_test/cuda_check.hpp"

namespace tilecast::test {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) TC_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a sticky error shows up elsewhere
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

DeviceMatrix make_matrix(DType dtype, int64_t rows, int64_t cols, int64_t batch, int64_t ld,
                         int64_t batch_stride) {
  if (rows < 0 || cols < 0 || batch < 1)
    throw std::invalid_argument("make_matrix: rows and cols must be >= 0 and batch >= 1");
  if (ld == 0) ld = cols;
  if (ld < cols) throw std::invalid_argument("make_matrix: ld < cols");
  if (batch_stride == 0) batch_stride = rows * ld;
  if (batch > 1 && batch_stride < rows * ld)
    throw std::invalid_argument("make_matrix: batch_stride < rows * ld (batches would overlap)");
  const size_t esize = dtype_size(dtype);
  const int64_t span = (batch - 1) * batch_stride + rows * ld;  // padding after the last row too
  DeviceMatrix m;
  m.buffer = DeviceBuffer(2 * kGuardBytes + static_cast<size_t>(span) * esize);
  m.view.data = static_cast<char*>(m.buffer.get()) + kGuardBytes;
  m.view.dtype = dtype;
  m.view.rows = rows;
  m.view.cols = cols;
  m.view.row_stride = ld;
  m.view.batch_stride = batch_stride;
  m.view.batch = batch;
  return m;
}

static char* elem_ptr(const MatrixView& v, int64_t b, int64_t r, int64_t c) {
  return static_cast<char*>(v.data) +
         static_cast<size_t>(b * v.batch_step() + r * v.ld() + c) * dtype_size(v.dtype);
}

MatrixView batch_of(const MatrixView& v, int64_t b) {
  if (b < 0 || b >= v.batch) throw std::out_of_range("batch_of: batch index out of range");
  MatrixView s = v;
  s.data = elem_ptr(v, b, 0, 0);
  s.batch = 1;
  s.row_stride = v.ld();
  s.batch_stride = v.rows * v.ld();
  return s;
}

MatrixView rows_of(const MatrixView& v, int64_t row_begin, int64_t row_end) {
  if (row_begin < 0 || row_end < row_begin || row_end > v.rows)
    throw std::out_of_range("rows_of: row range out of range");
  MatrixView s = v;
  s.data = elem_ptr(v, 0, row_begin, 0);
  s.rows = row_end - row_begin;
  s.row_stride = v.ld();
  s.batch_stride = v.batch_step();  // keeps the parent's step between batches
  return s;
}

MatrixView flatten_batches(const MatrixView& v) {
  if (v.batch == 1) return v;
  if (v.batch_step() != v.rows * v.ld())
    throw std::invalid_argument("flatten_batches: batches are not back to back (batch_stride " +
                                std::to_string(v.batch_step()) + " != rows * ld " +
                                std::to_string(v.rows * v.ld()) + ")");
  MatrixView s = v;
  s.rows = v.rows * v.batch;
  s.batch = 1;
  s.row_stride = v.ld();
  s.batch_stride = s.rows * v.ld();
  return s;
}

float bf16_bits_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) return 0x7FC0;  // NaN stays NaN
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);                       // nearest even
  return static_cast<uint16_t>((u + rounding) >> 16);
}

static float load_host(const char* p, DType t) {
  if (t == DType::kBF16) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return bf16_bits_to_float(bits);
  }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

static void store_host(char* p, DType t, float value) {
  if (t == DType::kBF16) {
    const uint16_t bits = float_to_bf16_bits(value);
    std::memcpy(p, &bits, 2);
  } else {
    std::memcpy(p, &value, 4);
  }
}

// These helpers read and write with plain cudaMemcpy, which does not wait for work on non-blocking
// streams: synchronize the device first so that they always see finished results.
std::vector<float> to_host(const MatrixView& v) {
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t esize = dtype_size(v.dtype);
  std::vector<char> raw(static_cast<size_t>(v.rows * v.cols) * esize);
  std::vector<float> out;
  out.reserve(static_cast<size_t>(v.batch * v.rows * v.cols));
  for (int64_t b = 0; b < v.batch; ++b) {
    if (v.rows && v.cols)
      TC_CUDA_CHECK(cudaMemcpy2D(raw.data(), v.cols * esize, elem_ptr(v, b, 0, 0), v.ld() * esize,
                                 v.cols * esize, v.rows, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < v.rows * v.cols; ++i) out.push_back(load_host(&raw[i * esize], v.dtype));
  }
  return out;
}

void from_host(const MatrixView& v, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != v.batch * v.rows * v.cols)
    throw std::invalid_argument("from_host: value count != batch * rows * cols");
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t esize = dtype_size(v.dtype);
  std::vector<char> raw(static_cast<size_t>(v.rows * v.cols) * esize);
  for (int64_t b = 0; b < v.batch; ++b) {
    for (int64_t i = 0; i < v.rows * v.cols; ++i)
      store_host(&raw[i * esize], v.dtype, values[b * v.rows * v.cols + i]);
    if (v.rows && v.cols)
      TC_CUDA_CHECK(cudaMemcpy2D(elem_ptr(v, b, 0, 0), v.ld() * esize, raw.data(), v.cols * esize,
                                 v.cols * esize, v.rows, cudaMemcpyHostToDevice));
  }
}

void set_element(const MatrixView& v, int64_t b, int64_t r, int64_t c, float value) {
  char raw[4];
  store_host(raw, v.dtype, value);
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  TC_CUDA_CHECK(cudaMemcpy(elem_ptr(v, b, r, c), raw, dtype_size(v.dtype), cudaMemcpyHostToDevice));
}

float get_element(const MatrixView& v, int64_t b, int64_t r, int64_t c) {
  char raw[4];
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  TC_CUDA_CHECK(cudaMemcpy(raw, elem_ptr(v, b, r, c), dtype_size(v.dtype), cudaMemcpyDeviceToHost));
  return load_host(raw, v.dtype);
}

}  // namespace tilecast::test
