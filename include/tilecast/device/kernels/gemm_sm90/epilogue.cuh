// The epilogue of one consumer warpgroup: D = alpha * acc + beta * C + bias, converted, written
// into 64-row slabs of shared memory in the TMA's 128-byte swizzle and stored slab by slab with a
// TMA store; the TMA clips rows and columns outside D.
//
// What it reads (the policy's source): without C, nothing, and two slab buffers alternate so
// that filling one overlaps the store of the other (one where a second would cost a stage:
// geometry.cuh). With C, the epilogue loader (epilogue_loader.cuh) has TMA-loaded each C slab
// into the slab buffer in D's own layout, overlapping the main loop; each thread reads the C
// elements of its own accumulators and the slab is overwritten with D in place. The bias tile of
// the tile's columns sits in a ring of its own. What it applies: alpha, beta and the bias, in
// FP32. What it stores: BF16 or FP32.
//
// M-grouped GEMMs own only some rows of D's row space: a tile at the end of an expert is followed
// by the next expert's rows, masked rows past an expert's count and padding rows of a row-index
// layout belong to nobody. The TMA cannot clip there, so a 64-row atom that holds such rows is
// stored element by element (pairs of columns) up to its last own row, and the rest keep what they
// held. (Grouped GEMMs other than k-grouped take no C and no bias: gemm_spec_error.)
#pragma once

#include <cuda/ptx>
#include <cuda_bf16.h>

#include "tilecast/device/kernels/epilogue_value.cuh"
#include "tilecast/device/kernels/gemm_sm90/accumulator_layout.cuh"
#include "tilecast/device/kernels/gemm_sm90/coordinates.cuh"
#include "tilecast/device/kernels/gemm_sm90/epilogue_loader.cuh"
#include "tilecast/device/kernels/gemm_sm90/named_barrier.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

template <typename Cfg>
class Epilogue {
 public:
  using Out = pick_type<Cfg::kOutputFP32, float, __nv_bfloat16>;
  using Bias = pick_type<Cfg::kBiasFP32, float, __nv_bfloat16>;
  static constexpr uint32_t kOutBytes = Cfg::kOutputFP32 ? 4 : 2;
  static constexpr uint32_t kGroupsPerSlab = Cfg::kSlabCols / 8;  // 8-column accumulator groups

  TC_DEVICE Epilogue(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor& tma_d, const TmaDescriptor& tma_d_narrow,
                     const GemmParams& params, uint32_t warpgroup)
      : smem_(smem), tma_d_(tma_d), tma_d_narrow_(tma_d_narrow), params_(params),
        c_ring_(c_ring(smem, params, warpgroup)), bias_ring_(bias_ring(smem, params)), warpgroup_(warpgroup),
        thread_(threadIdx.x % 128) {}

  TC_DEVICE void store(const TileWork& w, float (&acc)[Cfg::kAtomsM][Cfg::kWarpgroupN / 2]) {
    // A TMA store writes whole 16-byte chunks: where a row of D does not end on a 16-byte
    // boundary, storing the slab that holds the row's end would also write past it (into row
    // padding, or the next columns of a wider matrix D is a slice of). That slab is stored
    // element by element instead; slabs wholly past the end are not stored at all. The narrow
    // last slab of a 96-, 144- or 176-wide tile goes through tma_d_narrow, whose box is that
    // narrow and unswizzled.
    const bool ragged_rows = (params_.problem.n * kOutBytes) % 16 != 0;
    const uint8_t* bias = smem_.bias;
    if constexpr (Cfg::kHasBias) {
      bias_ring_.wait(bias_state_);
      bias = smem_.bias + bias_state_.stage * Cfg::kGeo.bias_tile_bytes;
    }
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a) {
      const uint32_t first_row = row0() + a * 64;
      // The same on every thread of the warpgroup, and on the epilogue loader (same test there).
      if (first_row >= w.rows) continue;  // no row of the atom is the tile's
      const AtomRows own = atom_rows(w, first_row);
      if (own.end <= first_row) continue;  // a row-index atom of padding only
#pragma unroll
      for (uint32_t slab = 0; slab < Cfg::kSlabs; ++slab) {
        const uint32_t slab_col = col0() + slab * Cfg::kSlabCols;  // of the tile
        if (slab_col >= w.cols) continue;  // the same on every thread of the warpgroup (and the loader)
        const bool narrow = slab_col + Cfg::kSlabCols > col0() + Cfg::kWarpgroupN;
        const uint32_t width = narrow ? Cfg::kNarrowSlabCols : Cfg::kSlabCols;
        const bool direct = own.direct || (ragged_rows && slab_col + width > w.cols);
        // A slab stored element by element needs no buffer, unless its C is in one.
        uint8_t* buffer = Cfg::kHasC || !direct ? take_buffer() : nullptr;
        const SlabSource src{shared_address(buffer), shared_address(bias)};
        if (direct) {
          store_direct(w, acc[a], a, slab, narrow, own.end, src);
          // Every thread has read its C from the buffer (generic proxy) before the loader's next
          // TMA load (async proxy) may write it.
          if constexpr (Cfg::kHasC) cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
          sync();
          retire(false);
          continue;
        }
        if (narrow)
          write_slab<true>(buffer, acc[a], slab, src);
        else
          write_slab<false>(buffer, acc[a], slab, src);
        // Generic-proxy writes, read next by the TMA (async proxy).
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        sync();
        if (thread_ == 0) {
          int32_t c[3];
          TileCoords<Cfg::kGemmType>::d(w, first_row, slab_col, c);
          cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared,
                                          narrow ? &tma_d_narrow_ : &tma_d_, c, buffer);
          cuda::ptx::cp_async_bulk_commit_group();
        }
        retire(true);
      }
    }
    if constexpr (Cfg::kHasBias) {
      sync();  // every thread of the warpgroup is done with the tile's bias
      if (thread_ == 0) bias_ring_.release_by_thread(bias_state_.stage);
      bias_state_.advance();
    }
  }

  // A tile the other warpgroup stores (kPingpong): its bias takes a slot of the shared ring, which
  // this warpgroup passes over. (Its C goes to the other warpgroup's own ring.) The turns make the
  // skip safe: this warpgroup's next wait on that slot comes after the skipped tile's bias landed
  // (consumer.cuh).
  TC_DEVICE void skip_tile() {
    if constexpr (Cfg::kHasBias) bias_state_.advance();
  }

  // Before the CTA exits: every store has finished reading shared memory.
  TC_DEVICE void drain() {
    if (thread_ == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  }

 private:
  // Where a slab's C and the tile's bias are read from: shared-window addresses (32 bits).
  struct SlabSource {
    uint32_t c;
    uint32_t bias;
  };
  static TC_DEVICE TC_FORCEINLINE uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
  }
  static constexpr uint32_t kNoBuffer = ~0u;

  // The buffer the next slab is written in. With C: the C ring's next slot, once the loader's C
  // slab has landed in it. Without: the next buffer in turn, once the store that last read it is
  // done reading.
  TC_DEVICE uint8_t* take_buffer() {
    if constexpr (Cfg::kHasC) {
      c_ring_.wait(c_state_);
      return smem_.slabs[warpgroup_][c_state_.stage];
    } else {
      uint8_t* buffer = smem_.slabs[warpgroup_][buffer_];
      if (thread_ == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<Cfg::kSlabBuffers - 1>{});
      sync();
      buffer_ = (buffer_ + 1) % Cfg::kSlabBuffers;
      return buffer;
    }
  }

  // After a slab left (by TMA: `by_tma`, or element by element): with C, its buffer goes back to
  // the loader once no store reads it any more. With two buffers or more, the buffer of a
  // TMA-stored slab is given back one slab later, so that waiting for its store to have read it
  // costs nothing; with one, at once (holding it would leave the loader nothing to fill).
  TC_DEVICE void retire(bool by_tma) {
    if constexpr (Cfg::kHasC && Cfg::kSlabBuffers == 1) {
      if (thread_ == 0) {
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
        c_ring_.release_by_thread(0);
      }
      c_state_.advance();
    } else if constexpr (Cfg::kHasC) {
      if (thread_ == 0) {
        if (by_tma)
          cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<1>{});
        else
          cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
        if (pending_ != kNoBuffer) c_ring_.release_by_thread(pending_);
        pending_ = kNoBuffer;
        if (by_tma)
          pending_ = c_state_.stage;
        else
          c_ring_.release_by_thread(c_state_.stage);
      }
      c_state_.advance();
    } else {
      (void)by_tma;
    }
  }

  // The 64-row atom at tile row first_row: its rows below `end` are the tile's, and `direct` says
  // whether rows past them lie inside D (then it is stored element by element). Uniform over the
  // warpgroup: every thread reads the same entries.
  struct AtomRows {
    uint32_t end;
    bool direct;
  };
  TC_DEVICE TC_FORCEINLINE AtomRows atom_rows(const TileWork& w, uint32_t first_row) const {
    if constexpr (Cfg::kGemmType == GemmType::kMGroupedContiguous && Cfg::kContiguousLayout == ContiguousLayout::kRowIndex) {
      // A row-index block is its expert's rows, then padding (the layout's contract, which the
      // kernel's check of the group data traps on: group_data_check.cuh): the atom is all the
      // expert's when its last row is (rows past D's end the TMA clips); otherwise the expert's
      // last row is found by bisection, which only atoms at the end of an expert's run pay for.
      // (No trap here: a trap's record costs the consumers registers they do not have.)
      const int32_t* rows = params_.problem.group_data + w.row;
      const int32_t expert = static_cast<int32_t>(w.group);
      const uint32_t last = (first_row + 64 < w.rows ? first_row + 64 : w.rows) - 1;
      if (rows[last] == expert) return {w.rows, false};
      uint32_t lo = first_row, hi = last;  // rows[hi] is not the expert's: find the first such row
      while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (rows[mid] == expert) lo = mid + 1;
        else hi = mid;
      }
      return {lo, true};
    } else if constexpr (Cfg::kGemmType == GemmType::kMGroupedContiguous || Cfg::kGemmType == GemmType::kMGroupedMasked) {
      return {w.rows, first_row + 64 > w.rows};  // the next expert's rows, or masked rows, follow
    } else {
      return {w.rows, false};  // a tile's rows end where D's do: the TMA clips the rest
    }
  }

  TC_DEVICE TC_FORCEINLINE void sync() {
    // Reconverge the warp first (thread 0 may come from the store-wait branch): compute-sanitizer's
    // synccheck reports warps that reach a CTA barrier divergent.
    __syncwarp();
    ptx::barrier_sync(static_cast<uint32_t>(NamedBarrier::kFirstConsumerWarpgroup) + warpgroup_, 128);
  }

  // Where the warpgroup's part of the tile starts, worked out where used.
  TC_DEVICE TC_FORCEINLINE uint32_t row0() const { return Cfg::warpgroup_row(warpgroup_); }
  TC_DEVICE TC_FORCEINLINE uint32_t col0() const { return Cfg::warpgroup_col(warpgroup_); }

  // This thread's accumulator rows and columns in the atom (accumulator_layout.cuh).
  TC_DEVICE TC_FORCEINLINE uint32_t atom_row(uint32_t half) const { return acc_atom_row(thread_, half); }
  TC_DEVICE TC_FORCEINLINE uint32_t first_col() const { return acc_first_col(thread_); }

  // Byte offset of 16-byte chunk `chunk` of slab row `row`: in the 128-byte swizzle of tma_d's
  // box, or (narrow) in plain rows of the narrow last slab, tma_d_narrow's unswizzled box.
  template <bool kNarrow>
  static TC_DEVICE TC_FORCEINLINE uint32_t slab_offset(uint32_t row, uint32_t chunk) {
    constexpr uint32_t kPitch = kNarrow ? Cfg::kNarrowSlabCols * kOutBytes : 128;
    return kNarrow ? row * kPitch + chunk * 16 : row * 128 + ((chunk ^ (row % 8)) * 16);
  }
  // Byte offset, within the slab, of this thread's two elements of 8-column group g (of the slab)
  // in accumulator row half h. The two are adjacent, so one load reads both.
  template <bool kNarrow>
  TC_DEVICE TC_FORCEINLINE uint32_t pair_offset(uint32_t g, uint32_t half) const {
    const uint32_t byte = (g * 8 + first_col()) * kOutBytes;
    return slab_offset<kNarrow>(atom_row(half), byte / 16) + byte % 16;
  }

  // This thread's pair of 8-column group j (of the tile), row half h, with the epilogue applied.
  template <bool kNarrow>
  TC_DEVICE TC_FORCEINLINE float2 values(const float (&acc)[Cfg::kWarpgroupN / 2], uint32_t j, uint32_t half,
                                         const SlabSource& src) const {
    float2 c = make_float2(0.0f, 0.0f), b = make_float2(0.0f, 0.0f);
    if constexpr (Cfg::kHasC) c = load_pair<Out>(src.c + pair_offset<kNarrow>(j % kGroupsPerSlab, half));
    if constexpr (Cfg::kHasBias)
      b = load_pair<Bias>(src.bias + (col0() + j * 8 + first_col()) * static_cast<uint32_t>(sizeof(Bias)));
    constexpr bool kC = Cfg::kHasC, kBias = Cfg::kHasBias;
    return make_float2(epilogue_value<kC, kBias>(acc[4 * j + 2 * half], params_.alpha, params_.beta, c.x, b.x),
                       epilogue_value<kC, kBias>(acc[4 * j + 2 * half + 1], params_.alpha, params_.beta, c.y, b.y));
  }

  // Two adjacent elements of type T at a shared address, as floats.
  template <typename T>
  static TC_DEVICE TC_FORCEINLINE float2 load_pair(uint32_t addr) {
    if constexpr (sizeof(T) == 4) {
      uint32_t x, y;
      ptx::ld_shared_v2_b32(addr, x, y);
      return make_float2(__uint_as_float(x), __uint_as_float(y));
    } else {
      const uint32_t u = ptx::ld_shared_b32(addr);
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
    }
  }

  template <bool kNarrow>
  TC_DEVICE TC_FORCEINLINE uint32_t pack(const float (&acc)[Cfg::kWarpgroupN / 2], uint32_t j, uint32_t half,
                                         const SlabSource& src) const {
    const float2 f = values<kNarrow>(acc, j, half, src);
    const __nv_bfloat162 v = __floats2bfloat162_rn(f.x, f.y);
    return *reinterpret_cast<const uint32_t*>(&v);
  }

  // Writes slab `slab` of an atom's accumulators into `buffer`: a full slab in the 128-byte
  // swizzle, or (kNarrow) the narrow last slab of 16, 24, 32 or 48 columns as plain rows. With C the
  // buffer holds the slab's C in the same layout: each thread reads exactly the elements it then
  // writes (and the warps' rows are disjoint), so D can replace C in place.
  template <bool kNarrow>
  TC_DEVICE void write_slab(uint8_t* buffer, const float (&acc)[Cfg::kWarpgroupN / 2], uint32_t slab, const SlabSource& src) {
    constexpr uint32_t kCols = kNarrow ? Cfg::kNarrowSlabCols : Cfg::kSlabCols;
    static_assert(kCols % 8 == 0, "whole 8-column groups: stmatrix matrices and the TMA's 16-byte rows");
    const uint32_t lane = thread_ % 32;
    if constexpr (!Cfg::kOutputFP32) {
      // stmatrix x4: matrices (rows 0-7, cols 8j..), (rows 8-15, 8j..), (0-7, 8j+8..), (8-15, 8j+8..).
      const uint32_t matrix = lane / 8;
      const uint32_t row = (thread_ / 32) * 16 + (matrix % 2) * 8 + lane % 8;
      const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(buffer));
#pragma unroll
      for (uint32_t pair = 0; pair < kCols / 16; ++pair) {
        const uint32_t j = slab * kGroupsPerSlab + pair * 2;  // 8-column group
        const uint32_t r0 = pack<kNarrow>(acc, j, 0, src), r1 = pack<kNarrow>(acc, j, 1, src);
        const uint32_t r2 = pack<kNarrow>(acc, j + 1, 0, src), r3 = pack<kNarrow>(acc, j + 1, 1, src);
        __syncwarp();  // stmatrix is .aligned, and every lane has read its C before any lane writes
        ptx::stmatrix_x4(base + slab_offset<kNarrow>(row, pair * 2 + matrix / 2), r0, r1, r2, r3);
      }
      if constexpr (kCols % 16 != 0) {
        // An odd last group (a column-split warpgroup's 88 columns end in a slab of 24): stmatrix
        // x2, matrices (rows 0-7, cols 8j..) and (rows 8-15, 8j..) from lanes 0-15's addresses.
        const uint32_t g = kCols / 8 - 1, j = slab * kGroupsPerSlab + g;
        const uint32_t r0 = pack<kNarrow>(acc, j, 0, src), r1 = pack<kNarrow>(acc, j, 1, src);
        __syncwarp();
        ptx::stmatrix_x2(base + slab_offset<kNarrow>(row, g), r0, r1);
      }
    } else {
#pragma unroll
      for (uint32_t g = 0; g < kCols / 8; ++g) {  // 8-column groups of FP32, 32 bytes each
        const uint32_t j = slab * kGroupsPerSlab + g;
#pragma unroll
        for (uint32_t half = 0; half < 2; ++half) {
          const float2 v = values<kNarrow>(acc, j, half, src);
          ptx::st_shared_v2_b32(shared_address(buffer) + pair_offset<kNarrow>(g, half), __float_as_uint(v.x),
                                __float_as_uint(v.y));
        }
      }
    }
  }

  // Slab `slab` of atom `atom` straight to global memory, bounds checked per element: tile rows
  // below row_end, columns below w.cols.
  TC_DEVICE void store_direct(const TileWork& w, const float (&acc)[Cfg::kWarpgroupN / 2], uint32_t atom, uint32_t slab,
                              bool narrow, uint32_t row_end, const SlabSource& src) {
    const bool grouped_d = d_per_group(Cfg::kGemmType) || Cfg::kGemmType == GemmType::kNormal;  // split-K: kNormal too
    Out* d = static_cast<Out*>(params_.d_ptr) + w.col + (grouped_d ? uint64_t{w.d_group} * params_.d_batch : 0);
#pragma unroll
    for (uint32_t half = 0; half < 2; ++half) {
      const uint32_t tile_row = row0() + atom * 64 + atom_row(half);
      if (tile_row >= row_end) continue;
      Out* row = d + uint64_t{w.row + tile_row} * params_.ldd;
#pragma unroll
      for (uint32_t g = 0; g < kGroupsPerSlab; ++g) {
        const uint32_t j = slab * kGroupsPerSlab + g;
        if (j >= Cfg::kWarpgroupN / 8) break;  // past a narrow last slab
        const uint32_t col = col0() + j * 8 + first_col();
        const float2 v = narrow ? values<true>(acc, j, half, src) : values<false>(acc, j, half, src);
        // An even column of a row whose stride is a multiple of 16 bytes: the pair is aligned.
        if (col + 1 < w.cols) {
          if constexpr (Cfg::kOutputFP32) {
            *reinterpret_cast<float2*>(row + col) = v;
          } else {
            *reinterpret_cast<__nv_bfloat162*>(row + col) = __floats2bfloat162_rn(v.x, v.y);
          }
        } else if (col < w.cols) {
          row[col] = static_cast<Out>(v.x);
        }
      }
    }
  }

  const GemmSm90Smem<Cfg>& smem_;
  const TmaDescriptor& tma_d_;
  const TmaDescriptor& tma_d_narrow_;
  const GemmParams& params_;
  StageRing<Cfg::kCRing> c_ring_;
  StageRing<Cfg::kBiasRing> bias_ring_;
  PipelineState<Cfg::kSlabBuffers> c_state_ = consumer_start_state<Cfg::kSlabBuffers>();
  PipelineState<Cfg::kBiasSlots> bias_state_ = consumer_start_state<Cfg::kBiasSlots>();
  uint32_t warpgroup_;
  uint32_t thread_;
  uint32_t buffer_ = 0;            // without C: the next slab buffer
  uint32_t pending_ = kNoBuffer;   // with C: the buffer to give back after the next store
};

}  // namespace tilecast
