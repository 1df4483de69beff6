// The epilogue of one consumer warpgroup: optionally adds C, converts, writes 64-row slabs into
// shared memory in the TMA's 128-byte swizzle, and stores each slab with a TMA store. Two slab
// buffers alternate so that filling one overlaps the store of the other; the TMA clips rows and
// columns outside D. (One buffer where a second would cost a pipeline stage: geometry.cuh.)
// M-grouped GEMMs own only some rows of D's row space: a tile at the end of an expert is followed
// by the next expert's rows, masked rows past an expert's count and padding rows of a row-index
// layout belong to nobody. The TMA cannot clip there, so a 64-row atom that holds such rows is
// stored element by element (pairs of columns) up to its last own row, and the rest keep what they
// held.
#pragma once

#include <cuda/ptx>
#include <cuda/std/type_traits>
#include <cuda_bf16.h>

#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/named_barrier.cuh"
#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

template <typename Cfg>
class Epilogue {
 public:
  TC_DEVICE Epilogue(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_d, const TmaDescriptor& tma_d_narrow,
                     const GemmParams& params, uint32_t warpgroup)
      : smem_(smem), tma_d_(tma_d), tma_d_narrow_(tma_d_narrow), params_(params), warpgroup_(warpgroup),
        thread_(threadIdx.x % 128) {}

  TC_DEVICE void store(const TileWork& w, float (&acc)[Cfg::kAtomsM][Cfg::kBlockN / 2]) {
    // A TMA store writes whole 16-byte chunks: where a row of D does not end on a 16-byte
    // boundary, storing the slab that holds the row's end would also write past it (into row
    // padding, or the next columns of a wider matrix D is a slice of). That slab is stored
    // element by element instead; slabs wholly past the end are not stored at all. The narrow
    // last slab of a 96-, 144- or 176-wide tile goes through tma_d_narrow, whose box is that
    // narrow and unswizzled.
    constexpr uint32_t kOutBytes = Cfg::kOutputFP32 ? 4 : 2;
    const bool ragged_rows = (params_.problem.n * kOutBytes) % 16 != 0;
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a) {
      const uint32_t atom_row = warpgroup_ * Cfg::kWarpgroupM + a * 64;
      if (atom_row >= w.rows) continue;  // no row of the atom is the tile's (uniform, as w is)
      const AtomRows own = atom_rows(w, atom_row);
      if (own.end <= atom_row) continue;  // a row-index atom of padding only
#pragma unroll
      for (uint32_t slab = 0; slab < Cfg::kSlabs; ++slab) {
        const uint32_t slab_col = slab * Cfg::kSlabCols;
        if (slab_col >= w.cols) continue;  // the same on every thread of the warpgroup
        const bool narrow = slab_col + Cfg::kSlabCols > Cfg::kBlockN;
        const uint32_t width = narrow ? Cfg::kNarrowSlabCols : Cfg::kSlabCols;
        if (own.direct || (ragged_rows && slab_col + width > w.cols)) {
          store_direct(w, acc[a], a, slab, own.end);
          continue;
        }
        uint8_t* buffer = smem_.slabs[warpgroup_][buffer_];
        // The store that last read this buffer must be done reading it.
        if (thread_ == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<Cfg::kSlabBuffers - 1>{});
        sync();
        if (narrow)
          write_slab<true>(buffer, acc[a], slab, w, a);
        else
          write_slab<false>(buffer, acc[a], slab, w, a);
        // Generic-proxy writes, read next by the TMA (async proxy).
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        sync();
        if (thread_ == 0) {
          int32_t c[3];
          TileCoords<Cfg::kGemmType>::d(w, warpgroup_ * Cfg::kWarpgroupM + a * 64, slab * Cfg::kSlabCols, c);
          cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, narrow ? &tma_d_narrow_ : &tma_d_,
                                          c, buffer);
          cuda::ptx::cp_async_bulk_commit_group();
        }
        buffer_ = (buffer_ + 1) % Cfg::kSlabBuffers;
      }
    }
  }

  // Slab `slab` of atom `atom` (plus C) straight to global memory, bounds checked per element:
  // tile rows below row_end, columns below w.cols.
  TC_DEVICE void store_direct(const TileWork& w, const float (&acc)[Cfg::kBlockN / 2], uint32_t atom, uint32_t slab,
                              uint32_t row_end) {
    using Out = cuda::std::conditional_t<Cfg::kOutputFP32, float, __nv_bfloat16>;
    const CRows c_rows = c_rows_of(w, atom);
    const uint32_t first_col = (thread_ % 32 % 4) * 2;
    Out* d = static_cast<Out*>(params_.d_ptr) + w.col + (d_per_group(Cfg::kGemmType) ? uint64_t{w.group} * params_.d_batch : 0);
    constexpr uint32_t kGroups = Cfg::kSlabCols / 8;
#pragma unroll
    for (uint32_t half = 0; half < 2; ++half) {
      const uint32_t tile_row = warpgroup_ * Cfg::kWarpgroupM + atom * 64 + atom_row(half);
      if (tile_row >= row_end) continue;
      Out* row = d + uint64_t{w.row + tile_row} * params_.ldd;
#pragma unroll
      for (uint32_t g = 0; g < kGroups; ++g) {
        const uint32_t j = slab * kGroups + g;
        if (j >= Cfg::kBlockN / 8) break;  // past a narrow last slab
        const uint32_t col = j * 8 + first_col;
        // An even column of a row whose stride is a multiple of 16 bytes: the pair is aligned.
        if (col + 1 < w.cols) {
          store_pair(row + col, value(acc, j, half, 0, c_rows), value(acc, j, half, 1, c_rows));
        } else if (col < w.cols) {
          row[col] = static_cast<Out>(value(acc, j, half, 0, c_rows));
        }
      }
    }
  }

  // Before the CTA exits: every store has finished reading shared memory.
  TC_DEVICE void drain() {
    if (thread_ == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  }

 private:
  TC_DEVICE TC_FORCEINLINE void sync() {
    // Reconverge the warp first (thread 0 may come from the store-wait branch): compute-sanitizer's
    // synccheck reports warps that reach a CTA barrier divergent.
    __syncwarp();
    ptx::barrier_sync(static_cast<uint32_t>(NamedBarrier::kFirstConsumerWarpgroup) + warpgroup_, 128);
  }

  // The 64-row atom at tile row atom_row: its rows below `end` are the tile's, and `direct` says
  // whether rows past them lie inside D (then it is stored element by element). Uniform over the
  // warpgroup: every thread reads the same entries.
  struct AtomRows {
    uint32_t end;
    bool direct;
  };
  TC_DEVICE TC_FORCEINLINE AtomRows atom_rows(const TileWork& w, uint32_t atom_row) const {
    if constexpr (Cfg::kGemmType == GemmType::kMGroupedContiguous && Cfg::kContiguousLayout == ContiguousLayout::kRowIndex) {
      // A row-index block is its expert's rows, then padding (the layout's contract, which the
      // kernel's check of the group data traps on: group_data_check.cuh): the atom is all the
      // expert's when its last row is (rows past D's end the TMA clips); otherwise the expert's
      // last row is found by bisection, which only atoms at the end of an expert's run pay for.
      // (No trap here: a trap's record costs the consumers registers they do not have.)
      const int32_t* rows = params_.problem.group_data + w.row;
      const int32_t expert = static_cast<int32_t>(w.group);
      const uint32_t last = (atom_row + 64 < w.rows ? atom_row + 64 : w.rows) - 1;
      if (rows[last] == expert) return {w.rows, false};
      uint32_t lo = atom_row, hi = last;  // rows[hi] is not the expert's: find the first such row
      while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (rows[mid] == expert) lo = mid + 1;
        else hi = mid;
      }
      return {lo, true};
    } else if constexpr (Cfg::kGemmType == GemmType::kMGroupedContiguous || Cfg::kGemmType == GemmType::kMGroupedMasked) {
      return {w.rows, atom_row + 64 > w.rows};  // the next expert's rows, or masked rows, follow
    } else {
      return {w.rows, false};  // a tile's rows end where D's do: the TMA clips the rest
    }
  }

  template <typename Out>
  static TC_DEVICE TC_FORCEINLINE void store_pair(Out* at, float x, float y) {
    if constexpr (Cfg::kOutputFP32) {
      *reinterpret_cast<float2*>(at) = make_float2(x, y);
    } else {
      *reinterpret_cast<__nv_bfloat162*>(at) = __floats2bfloat162_rn(x, y);
    }
  }

  // Row of accumulator half h (0: rows 0-7, 1: rows 8-15 of the warp's 16) within the 64-row atom.
  TC_DEVICE TC_FORCEINLINE uint32_t atom_row(uint32_t half) const { return (thread_ / 32) * 16 + (thread_ % 32) / 4 + 8 * half; }

  // Byte offset of 16-byte chunk `chunk` of slab row `row` in the 128-byte swizzle.
  static TC_DEVICE TC_FORCEINLINE uint32_t swizzled(uint32_t row, uint32_t chunk) {
    return row * 128 + ((chunk ^ (row % 8)) * 16);
  }

  // Writes slab `slab` of atom `atom`'s accumulators (plus C) into `buffer`: a full slab in the
  // 128-byte swizzle of tma_d's box, or (kNarrow) the narrow last slab of 16, 32 or 48 columns as
  // plain rows, the layout of tma_d_narrow's unswizzled box.
  template <bool kNarrow>
  TC_DEVICE void write_slab(uint8_t* buffer, const float (&acc)[Cfg::kBlockN / 2], uint32_t slab, const TileWork& w,
                            uint32_t atom) {
    constexpr uint32_t kCols = kNarrow ? Cfg::kNarrowSlabCols : Cfg::kSlabCols;
    constexpr uint32_t kPitch = kNarrow ? kCols * (Cfg::kOutputFP32 ? 4 : 2) : 128;
    static_assert(kCols % 16 == 0, "stmatrix pairs and the TMA's 16-byte rows");
    // Byte offset of 16-byte chunk `chunk` of slab row `row`.
    const auto offset = [](uint32_t row, uint32_t chunk) {
      return kNarrow ? row * kPitch + chunk * 16 : swizzled(row, chunk);
    };
    const uint32_t lane = thread_ % 32;
    CRows c_rows = c_rows_of(w, atom);
    if constexpr (!Cfg::kOutputFP32) {
      __syncwarp();  // stmatrix is .aligned: the warp must be converged
      // stmatrix x4: matrices (rows 0-7, cols 8j..), (rows 8-15, 8j..), (0-7, 8j+8..), (8-15, 8j+8..).
      const uint32_t matrix = lane / 8;
      const uint32_t row = (thread_ / 32) * 16 + (matrix % 2) * 8 + lane % 8;
      const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(buffer));
#pragma unroll
      for (uint32_t pair = 0; pair < kCols / 16; ++pair) {
        const uint32_t j = slab * 8 + pair * 2;  // 8-column group
        ptx::stmatrix_x4(base + offset(row, pair * 2 + matrix / 2), pack(acc, j, 0, c_rows),
                         pack(acc, j, 1, c_rows), pack(acc, j + 1, 0, c_rows), pack(acc, j + 1, 1, c_rows));
      }
    } else {
#pragma unroll
      for (uint32_t g = 0; g < kCols / 8; ++g) {  // 8-column groups of FP32, 32 bytes each
        const uint32_t j = slab * 4 + g;
#pragma unroll
        for (uint32_t half = 0; half < 2; ++half) {
          const uint32_t byte = g * 32 + (lane % 4) * 8;
          float2* dst = reinterpret_cast<float2*>(buffer + offset(atom_row(half), byte / 16) + byte % 16);
          *dst = make_float2(value(acc, j, half, 0, c_rows), value(acc, j, half, 1, c_rows));
        }
      }
    }
  }

  // Where this thread's two accumulator rows of an atom read C: a row pointer each (null past the
  // tile's rows), and how many of its columns, from its first, lie inside the tile.
  struct CRows {
    const void* row[2];
    uint32_t cols;
  };

  TC_DEVICE TC_FORCEINLINE CRows c_rows_of(const TileWork& w, uint32_t atom) const {
    CRows r{{nullptr, nullptr}, 0};
    if constexpr (Cfg::kHasC) {
      using CType = cuda::std::conditional_t<Cfg::kOutputFP32, float, __nv_bfloat16>;
      const uint32_t first_col = (thread_ % 32 % 4) * 2;
      const CType* c = static_cast<const CType*>(params_.c_ptr) + w.col + first_col +
                       (d_per_group(Cfg::kGemmType) ? uint64_t{w.group} * params_.c_batch : 0);
      r.cols = w.cols > first_col ? w.cols - first_col : 0;
#pragma unroll
      for (uint32_t half = 0; half < 2; ++half) {
        const uint32_t tile_row = warpgroup_ * Cfg::kWarpgroupM + atom * 64 + atom_row(half);
        r.row[half] = tile_row < w.rows ? c + uint64_t{w.row + tile_row} * params_.ldc : nullptr;
      }
    }
    return r;
  }

  // Accumulator e (0, 1) of 8-column group j, row half h, plus C where the tile has one.
  TC_DEVICE TC_FORCEINLINE float value(const float (&acc)[Cfg::kBlockN / 2], uint32_t j, uint32_t half, uint32_t e,
                                       const CRows& c) const {
    float v = acc[4 * j + 2 * half + e];
    if constexpr (Cfg::kHasC) {
      using CType = cuda::std::conditional_t<Cfg::kOutputFP32, float, __nv_bfloat16>;
      if (c.row[half] != nullptr && j * 8 + e < c.cols) v += static_cast<float>(static_cast<const CType*>(c.row[half])[j * 8 + e]);
    }
    return v;
  }

  TC_DEVICE TC_FORCEINLINE uint32_t pack(const float (&acc)[Cfg::kBlockN / 2], uint32_t j, uint32_t half,
                                         const CRows& c) const {
    const __nv_bfloat162 v = __floats2bfloat162_rn(value(acc, j, half, 0, c), value(acc, j, half, 1, c));
    return *reinterpret_cast<const uint32_t*>(&v);
  }

  const GemmSm90Smem<Cfg>& smem_;
  const TmaDescriptor& tma_d_;
  const TmaDescriptor& tma_d_narrow_;
  const GemmParams& params_;
  uint32_t warpgroup_;
  uint32_t thread_;
  uint32_t buffer_ = 0;
};

}  // namespace tilecast
