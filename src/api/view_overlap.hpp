// Whether two strided views share a byte: the exact test behind "D overlaps A", "C overlaps D"
// and the bias and group-array checks. Views of one buffer that interleave without touching
// (column halves of each row, the even and odd rows) are disjoint and must stay legal, so the
// bounding-span test alone would refuse calls that are fine.
#pragma once

#include <cstdint>

#include "tilecast/types.hpp"

namespace tilecast::api {

// A set of bytes: `batches` blocks `batch_step` bytes apart, each `rows` runs `row_step` bytes
// apart, each run `width` contiguous bytes from base + b * batch_step + r * row_step. Every count
// is at least 1; a step matters only where its count is above 1, and is then at least 1.
struct StridedBytes {
  uint64_t base = 0;
  uint64_t batches = 1, batch_step = 0;
  uint64_t rows = 1, row_step = 0;
  uint64_t width = 0;

  // One past the last byte.
  uint64_t end() const { return base + (batches - 1) * batch_step + (rows - 1) * row_step + width; }
};

// The bytes a (non-empty) matrix view covers: each row's columns are contiguous.
StridedBytes bytes_of(const MatrixView& v);
// The bytes of a vector (the bias) or of a group array of `entries` int32.
StridedBytes bytes_of(const void* data, uint64_t bytes);

// Exact: true iff some byte lies in both. Costs O(1) when the bounding spans are disjoint (views
// in different allocations), else one step per row of the view with fewer rows inside the common
// span (a few nanoseconds each, paid once per distinct call: validation is cached with the call).
bool overlap(const StridedBytes& x, const StridedBytes& y);

}  // namespace tilecast::api
