// The kernels the GPU JIT tests launch, as KernelSpecs. The CPU tests compile every one of them
// with NVRTC (tests/cpu/jit/test_gpu_kernels_compile.cpp), so a GPU run finds them compiling and
// spill-free.
#pragma once

#include <cstdint>
#include <string>

#include "jit/compiler.hpp"

namespace tilecast::jit::test {

// out[2 * cta] = %cluster_ctarank, out[2 * cta + 1] = %cluster_nctarank, where
// cta = blockIdx.y * gridDim.x + blockIdx.x.
inline KernelSpec cluster_rank_spec() {
  KernelSpec spec;
  spec.source = R"(
#include "tilecast/device/common.cuh"
#include <cuda/ptx>

namespace tc_test {
__global__ void cluster_rank(tilecast::uint32_t* out) {
  if (threadIdx.x != 0) return;
  const tilecast::uint32_t cta = blockIdx.y * gridDim.x + blockIdx.x;
  out[2 * cta] = cuda::ptx::get_sreg_cluster_ctarank();
  out[2 * cta + 1] = cuda::ptx::get_sreg_cluster_nctarank();
}
}  // namespace tc_test
)";
  spec.name_expression = "tc_test::cluster_rank";
  return spec;
}

// One TMA copy of the box at (batch, row0, col0) of a bf16 tensor (rank 2 or 3) into shared
// memory, waited for on an mbarrier, then written back to out[kBoxRows * kBoxCols] with the
// swizzle undone. status[0] = the tile's shared address mod 1024 (0 expected).
inline KernelSpec tma_load_spec(uint32_t rank, uint32_t box_rows, uint32_t box_cols,
                                uint32_t swizzle_bytes) {
  KernelSpec spec;
  spec.source = R"(
#include "tilecast/device/common.cuh"
#include <cuda/ptx>

namespace tc_test {
// Byte image of a CUtensorMap (cuda.h is not for NVRTC): 128 bytes, 64-byte aligned.
struct alignas(64) TmaDescriptor {
  unsigned long long words[16];
};

template <tilecast::uint32_t kRank, tilecast::uint32_t kBoxRows, tilecast::uint32_t kBoxCols,
          tilecast::uint32_t kSwizzleBytes>
__global__ void tma_load_tile(const __grid_constant__ TmaDescriptor desc, int batch, int row0,
                              int col0, tilecast::uint16_t* out, tilecast::uint32_t* status) {
  constexpr tilecast::uint32_t kRowBytes = kBoxCols * 2;
  constexpr tilecast::uint32_t kTileBytes = kBoxRows * kRowBytes;
  __shared__ alignas(1024) unsigned char tile[kTileBytes];
  __shared__ tilecast::uint64_t bar;

  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(&bar, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    status[0] = static_cast<tilecast::uint32_t>(__cvta_generic_to_shared(tile)) % 1024u;
    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, &bar, kTileBytes);
    if constexpr (kRank == 2) {
      const tilecast::int32_t coords[2] = {col0, row0};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, tile,
                                      &desc, coords, &bar);
    } else {
      const tilecast::int32_t coords[3] = {col0, row0, batch};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, tile,
                                      &desc, coords, &bar);
    }
  }
  while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0u)) {
  }
  for (tilecast::uint32_t i = threadIdx.x; i < kBoxRows * kBoxCols; i += blockDim.x) {
    const tilecast::uint32_t r = i / kBoxCols;
    const tilecast::uint32_t c = i % kBoxCols;
    tilecast::uint32_t offset = r * kRowBytes + c * 2;
    // 128B swizzle: within each 1024-byte block the 16-byte chunk index (address bits 4-6) is
    // XORed with the 128-byte row index (bits 7-9).
    if constexpr (kSwizzleBytes == 128) offset ^= ((offset >> 7) & 7u) << 4;
    out[i] = *reinterpret_cast<const tilecast::uint16_t*>(tile + offset);
  }
}
}  // namespace tc_test
)";
  spec.name_expression = "tc_test::tma_load_tile<" + std::to_string(rank) + ", " +
                         std::to_string(box_rows) + ", " + std::to_string(box_cols) + ", " +
                         std::to_string(swizzle_bytes) + ">";
  return spec;
}

// *counter += kValue once per CTA: the kernel of the cached-launch timing test.
inline KernelSpec add_spec(int value) {
  KernelSpec spec;
  spec.source = R"(
namespace tc_test {
template <int kValue>
__global__ void add_to(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, kValue);
}
}  // namespace tc_test
)";
  spec.name_expression = "tc_test::add_to<" + std::to_string(value) + ">";
  return spec;
}

}  // namespace tilecast::jit::test
