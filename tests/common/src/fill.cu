#include "tilecast_test/fill.hpp"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>

#include <cuda_runtime.h>

#include "kernel_util.cuh"
#include "tilecast_test/cuda_check.hpp"

namespace tilecast::test {
namespace {

__host__ __device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The value depends on (seed, logical index) only, not on the strides.
__global__ void fill_uniform_kernel(void* data, bool is_bf16, detail::Walk w, int64_t total,
                                    uint64_t seed, float lo, float width) {
  const uint64_t key = splitmix64(seed);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = splitmix64(key ^ (static_cast<uint64_t>(i) * 0xD1B54A32D192ED03ull));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    detail::store_from_float(data, is_bf16, w.offset_of_flat(i), lo + width * u);
  }
}

__global__ void copy_convert_kernel(const void* src, bool src_bf16, detail::Walk ws, void* dst,
                                    bool dst_bf16, detail::Walk wd, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    detail::store_from_float(dst, dst_bf16, wd.offset_of_flat(i),
                             detail::load_as_float(src, src_bf16, ws.offset_of_flat(i)));
}

__global__ void poison_kernel(void* data, int64_t elems, bool is_bf16) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elems;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (is_bf16) static_cast<uint16_t*>(data)[i] = kPoisonBF16;
    else static_cast<uint32_t*>(data)[i] = kPoisonFP32;
  }
}

struct WriteCounters {
  unsigned long long unwritten, touched, first_unwritten_rel, first_touched;
};

// Element i of the allocation is in the region when its offset from the region's first element
// decomposes as b * batch_step + r * ld + c with b < batch, r < rows of batch b, c < cols.
__global__ void check_written_kernel(const void* base, int64_t alloc_elems, bool is_bf16,
                                     int64_t region_offset, int64_t rows, int64_t cols, int64_t ld,
                                     int64_t batch, int64_t batch_step,
                                     const int64_t* rows_per_batch, WriteCounters* out) {
  unsigned long long unwritten = 0, touched = 0;
  unsigned long long first_unwritten = ULLONG_MAX, first_touched = ULLONG_MAX;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < alloc_elems;
       i += int64_t{gridDim.x} * blockDim.x) {
    const bool poisoned = is_bf16 ? static_cast<const uint16_t*>(base)[i] == kPoisonBF16
                                  : static_cast<const uint32_t*>(base)[i] == kPoisonFP32;
    const int64_t rel = i - region_offset;
    bool inside = false;
    if (rel >= 0) {
      const int64_t b = rel / batch_step;
      const int64_t rem = rel - b * batch_step;
      const int64_t r = rem / ld;
      const int64_t c = rem - r * ld;
      if (b < batch) inside = r < (rows_per_batch ? rows_per_batch[b] : rows) && c < cols;
    }
    if (inside && poisoned) {
      ++unwritten;
      if (static_cast<unsigned long long>(rel) < first_unwritten) first_unwritten = rel;
    } else if (!inside && !poisoned) {
      ++touched;
      if (static_cast<unsigned long long>(i) < first_touched) first_touched = i;
    }
  }
  if (unwritten) {
    atomicAdd(&out->unwritten, unwritten);
    atomicMin(&out->first_unwritten_rel, first_unwritten);
  }
  if (touched) {
    atomicAdd(&out->touched, touched);
    atomicMin(&out->first_touched, first_touched);
  }
}

}  // namespace

uint64_t seed_base() {
  static const uint64_t base = []() -> uint64_t {
    if (const char* s = std::getenv("TILECAST_TEST_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return base;
}

uint64_t fresh_seed() {
  static std::atomic<uint64_t> counter{0};
  return splitmix64(seed_base() + counter.fetch_add(1));
}

void fill_uniform(const MatrixView& v, uint64_t seed, cudaStream_t stream, float lo, float hi) {
  const int64_t total = v.batch * v.rows * v.cols;
  if (total == 0) return;
  if (!v.data) throw std::invalid_argument("fill_uniform: null data");
  fill_uniform_kernel<<<detail::grid_for(total), 256, 0, stream>>>(
      v.data, v.dtype == DType::kBF16, detail::walk_of(v), total, seed, lo, hi - lo);
  TC_CHECK_LAUNCH("fill_uniform_kernel");
}

void copy_convert(const MatrixView& src, const MatrixView& dst, cudaStream_t stream) {
  if (src.rows != dst.rows || src.cols != dst.cols || src.batch != dst.batch)
    throw std::invalid_argument("copy_convert: src and dst differ in rows, cols or batch");
  const int64_t total = src.batch * src.rows * src.cols;
  if (total == 0) return;
  copy_convert_kernel<<<detail::grid_for(total), 256, 0, stream>>>(
      src.data, src.dtype == DType::kBF16, detail::walk_of(src), dst.data,
      dst.dtype == DType::kBF16, detail::walk_of(dst), total);
  TC_CHECK_LAUNCH("copy_convert_kernel");
}

void poison(void* data, int64_t elems, DType dtype, cudaStream_t stream) {
  if (elems == 0) return;
  poison_kernel<<<detail::grid_for(elems), 256, 0, stream>>>(data, elems, dtype == DType::kBF16);
  TC_CHECK_LAUNCH("poison_kernel");
}

void poison(const DeviceMatrix& m, cudaStream_t stream) {
  poison(m.alloc_begin(), m.alloc_elems(), m.view.dtype, stream);
}

WriteCheck check_written(const DeviceMatrix& m, cudaStream_t stream) {
  return check_written(m, m.view, {}, stream);
}

WriteCheck check_written(const DeviceMatrix& m, const MatrixView& region,
                         std::span<const int64_t> rows_per_batch, cudaStream_t stream) {
  if (region.dtype != m.view.dtype) throw std::invalid_argument("check_written: dtype differs");
  const size_t esize = dtype_size(region.dtype);
  const auto* begin = static_cast<const char*>(m.alloc_begin());
  const auto* data = static_cast<const char*>(region.data);
  const int64_t offset_bytes = data - begin;
  if (offset_bytes < 0 || offset_bytes % static_cast<int64_t>(esize) != 0 ||
      offset_bytes / static_cast<int64_t>(esize) + footprint_elems(region) > m.alloc_elems())
    throw std::invalid_argument("check_written: region is not inside the matrix's allocation");
  if (region.batch > 1 && region.batch_step() < region.rows * region.ld())
    throw std::invalid_argument("check_written: region batches overlap");
  if (!rows_per_batch.empty() && static_cast<int64_t>(rows_per_batch.size()) != region.batch)
    throw std::invalid_argument("check_written: rows_per_batch needs one entry per batch");

  WriteCheck w;
  int64_t region_elems = 0;
  for (int64_t b = 0; b < region.batch; ++b) {
    const int64_t rows = rows_per_batch.empty() ? region.rows : rows_per_batch[b];
    if (rows < 0 || rows > region.rows)
      throw std::invalid_argument("check_written: rows_per_batch entry out of [0, rows]");
    region_elems += rows * region.cols;
  }
  w.region_elems = region_elems;

  DeviceBuffer rows_dev;
  if (!rows_per_batch.empty()) {
    rows_dev = DeviceBuffer(rows_per_batch.size() * sizeof(int64_t));
    TC_CUDA_CHECK(cudaMemcpyAsync(rows_dev.get(), rows_per_batch.data(), rows_dev.bytes(),
                                  cudaMemcpyHostToDevice, stream));
  }
  DeviceBuffer counters(sizeof(WriteCounters));
  const WriteCounters init{0, 0, ULLONG_MAX, ULLONG_MAX};
  TC_CUDA_CHECK(cudaMemcpyAsync(counters.get(), &init, sizeof init, cudaMemcpyHostToDevice, stream));

  const int64_t ld = region.ld() > 0 ? region.ld() : 1;
  const int64_t step = region.batch > 1 ? region.batch_step() : region.rows * ld;
  check_written_kernel<<<detail::grid_for(m.alloc_elems()), 256, 0, stream>>>(
      m.alloc_begin(), m.alloc_elems(), region.dtype == DType::kBF16,
      offset_bytes / static_cast<int64_t>(esize), region.rows, region.cols, ld, region.batch,
      step > 0 ? step : 1, static_cast<const int64_t*>(rows_dev.get()),
      static_cast<WriteCounters*>(counters.get()));
  TC_CHECK_LAUNCH("check_written_kernel");
  WriteCounters got{};
  TC_CUDA_CHECK(cudaMemcpyAsync(&got, counters.get(), sizeof got, cudaMemcpyDeviceToHost, stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));

  w.unwritten = static_cast<int64_t>(got.unwritten);
  w.touched = static_cast<int64_t>(got.touched);
  if (got.unwritten) {
    const int64_t rel = static_cast<int64_t>(got.first_unwritten_rel);
    const int64_t s = step > 0 ? step : 1;
    w.first_unwritten_b = rel / s;
    w.first_unwritten_r = (rel % s) / ld;
    w.first_unwritten_c = (rel % s) % ld;
  }
  if (got.touched) w.first_touched_offset = static_cast<int64_t>(got.first_touched);
  return w;
}

std::string WriteCheck::summary() const {
  std::ostringstream os;
  os << "written " << (region_elems - unwritten) << "/" << region_elems;
  if (unwritten)
    os << ", UNWRITTEN " << unwritten << " (first at b=" << first_unwritten_b
       << " r=" << first_unwritten_r << " c=" << first_unwritten_c << ")";
  if (touched)
    os << ", TOUCHED OUTSIDE " << touched << " (first at element " << first_touched_offset
       << " of the allocation, guard of " << kGuardBytes << " bytes included)";
  else
    os << ", nothing outside touched";
  return os.str();
}

}  // namespace tilecast::test
