#include "tilecast_test/late_writer.hpp"

#include <stdexcept>

#include "tilecast_test/cuda_check.hpp"

namespace tilecast::test {
namespace {

// Few blocks: the other SMs stay free for the grid behind, which can then start before the write.
constexpr uint32_t kWriterBlocks = 8, kWriterThreads = 1024;

__global__ void copy_late_kernel(const uint16_t* src, uint16_t* dst, uint64_t elems, uint64_t delay_ns) {
  // The grid behind may launch now: only its griddepcontrol.wait keeps it from reading dst early.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (uint64_t now = start; now - start < delay_ns;) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < elems; i += uint64_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

}  // namespace

void copy_late(const MatrixView& src, const MatrixView& dst, uint32_t delay_us, cudaStream_t stream) {
  const auto contiguous = [](const MatrixView& v) { return v.ld() == v.cols && v.batch_step() == v.rows * v.cols; };
  if (src.dtype != DType::kBF16 || dst.dtype != DType::kBF16 || src.rows != dst.rows || src.cols != dst.cols ||
      src.batch != dst.batch || !contiguous(src) || !contiguous(dst))
    throw std::invalid_argument("copy_late: two contiguous bf16 matrices of one shape");
  const uint64_t elems = uint64_t(src.batch) * src.rows * src.cols;
  copy_late_kernel<<<kWriterBlocks, kWriterThreads, 0, stream>>>(
      static_cast<const uint16_t*>(src.data), static_cast<uint16_t*>(dst.data), elems, uint64_t{delay_us} * 1000);
  TC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tilecast::test
