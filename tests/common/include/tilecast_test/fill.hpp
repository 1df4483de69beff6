// Filling buffers on the device: random data, poison, and the check that a kernel wrote exactly
// the elements it owns.
//
// Recommended use for a kernel under test:
//   inputs:  poison(A) then fill_uniform(A.view, fresh_seed()): padding between rows stays NaN, so
//            a kernel that reads past K (and uses what it reads) produces NaN and fails the check;
//   output:  poison(D) before the launch, then check_written(D): every element of the view must
//            have been overwritten and every element outside it (row padding, guards, other
//            batches or masked rows where a region is given) must still hold the poison pattern.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <cuda_runtime_api.h>

#include "tilecast_test/device_matrix.hpp"

namespace tilecast::test {

// A new seed on every call. The sequence starts from TILECAST_TEST_SEED when that is set (to
// replay a failure), else from std::random_device; seed_base() says which, for failure messages.
uint64_t fresh_seed();
uint64_t seed_base();

// Element (b, r, c) of the view gets a value uniform in [lo, hi) from a hash of (seed, b, r, c),
// rounded to the view's dtype. Only the view's elements are written. Asynchronous on `stream`.
void fill_uniform(const MatrixView& v, uint64_t seed, cudaStream_t stream = nullptr, float lo = -1.0f,
                  float hi = 1.0f);

// dst = src element by element (same rows, cols and batch; any strides), converting between bf16
// and fp32 (round to nearest even). E.g. an FP32 copy of a bf16 C for an FP32 reference.
void copy_convert(const MatrixView& src, const MatrixView& dst, cudaStream_t stream = nullptr);

// Quiet-NaN patterns with a payload no arithmetic produces (CUDA's canonical NaNs are 0x7FFF and
// 0x7FFFFFFF), so "still poisoned" is told apart from "computed a NaN".
inline constexpr uint16_t kPoisonBF16 = 0xFFDB;
inline constexpr uint32_t kPoisonFP32 = 0xFFDB5A5Au;

// The whole allocation (guards included) set to the poison pattern. Asynchronous on `stream`.
void poison(const DeviceMatrix& m, cudaStream_t stream = nullptr);
// Raw: `elems` elements of `dtype` at `data`.
void poison(void* data, int64_t elems, DType dtype, cudaStream_t stream = nullptr);

struct WriteCheck {
  int64_t region_elems = 0;   // elements that had to be written
  int64_t unwritten = 0;      // of those, still holding the poison pattern
  int64_t touched = 0;        // elements outside the region (guards included) not holding it
  // First offender of each kind (smallest offset), as a position in the region's (b, r, c) or as
  // an element offset from the allocation start (negative: none).
  int64_t first_unwritten_b = -1, first_unwritten_r = -1, first_unwritten_c = -1;
  int64_t first_touched_offset = -1;
  bool ok() const { return unwritten == 0 && touched == 0; }
  std::string summary() const;
};

// Region = m.view. Synchronizes `stream`.
WriteCheck check_written(const DeviceMatrix& m, cudaStream_t stream = nullptr);
// Region = `region` (a view into m's allocation, e.g. rows_of(m.view, 0, 5)); when rows_per_batch
// is given (one entry per batch of the region, masked layouts), batch b's region is its rows
// [0, rows_per_batch[b]). Synchronizes `stream`.
WriteCheck check_written(const DeviceMatrix& m, const MatrixView& region,
                         std::span<const int64_t> rows_per_batch = {}, cudaStream_t stream = nullptr);

}  // namespace tilecast::test
