#include "api/view_overlap.hpp"

#include <algorithm>
#include <utility>

namespace tilecast::api {
namespace {

// Indices i in [0, count) with i * step in the open interval (lo, hi), for step >= 1; lo and hi
// may be negative. Empty when first > last.
struct IndexRange {
  int64_t first, last;
};

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

IndexRange indices_between(int64_t lo, int64_t hi, uint64_t count, uint64_t step) {
  if (count == 1) return lo < 0 && 0 < hi ? IndexRange{0, 0} : IndexRange{1, 0};
  const int64_t s = static_cast<int64_t>(step);
  const int64_t first = std::max<int64_t>(floor_div(lo, s) + 1, 0);
  const int64_t last = std::min<int64_t>(floor_div(hi - 1, s), static_cast<int64_t>(count) - 1);
  return {first, last};
}

// Whether the run [s, s + w) (absolute bytes) meets any run of y.
bool run_meets(int64_t s, int64_t w, const StridedBytes& y) {
  const int64_t y0 = static_cast<int64_t>(y.base);
  const int64_t block = static_cast<int64_t>((y.rows - 1) * y.row_step + y.width);  // one batch's extent
  // Batch b's block [y0 + b * step, + block) meets the run iff b * step lies in (s - y0 - block, s - y0 + w).
  const IndexRange bs = indices_between(s - y0 - block, s - y0 + w, y.batches, y.batch_step);
  const int64_t width = static_cast<int64_t>(y.width);
  for (int64_t b = bs.first; b <= bs.last; ++b) {
    const int64_t t = s - y0 - b * static_cast<int64_t>(y.batch_step);  // the run relative to batch b
    // Row r's run [r * row_step, + width) meets [t, t + w) iff r * row_step lies in (t - width, t + w).
    const IndexRange rs = indices_between(t - width, t + w, y.rows, y.row_step);
    if (rs.first <= rs.last) return true;
  }
  return false;
}

}  // namespace

StridedBytes bytes_of(const MatrixView& v) {
  const uint64_t elem = dtype_size(v.dtype);
  StridedBytes s;
  s.base = reinterpret_cast<uintptr_t>(v.data);
  s.batches = static_cast<uint64_t>(v.batch);
  s.batch_step = static_cast<uint64_t>(v.batch_step()) * elem;
  s.rows = static_cast<uint64_t>(v.rows);
  s.row_step = static_cast<uint64_t>(v.ld()) * elem;
  s.width = static_cast<uint64_t>(v.cols) * elem;
  return s;
}

StridedBytes bytes_of(const void* data, uint64_t bytes) {
  StridedBytes s;
  s.base = reinterpret_cast<uintptr_t>(data);
  s.width = bytes;
  return s;
}

bool overlap(const StridedBytes& x0, const StridedBytes& y0) {
  if (x0.width == 0 || y0.width == 0) return false;
  const uint64_t lo = std::max(x0.base, y0.base), hi = std::min(x0.end(), y0.end());
  if (lo >= hi) return false;
  // Walk the runs of the view with fewer of them, and only those inside the common span.
  const bool x_fewer = x0.batches * x0.rows <= y0.batches * y0.rows;
  const StridedBytes& x = x_fewer ? x0 : y0;
  const StridedBytes& y = x_fewer ? y0 : x0;
  const int64_t xb = static_cast<int64_t>(x.base), w = static_cast<int64_t>(x.width);
  const int64_t block = static_cast<int64_t>((x.rows - 1) * x.row_step + x.width);
  const int64_t rel_lo = static_cast<int64_t>(lo) - xb, rel_hi = static_cast<int64_t>(hi) - xb;
  const IndexRange bs = indices_between(rel_lo - block, rel_hi, x.batches, x.batch_step);
  for (int64_t b = bs.first; b <= bs.last; ++b) {
    const int64_t t = b * static_cast<int64_t>(x.batch_step);
    const IndexRange rs = indices_between(rel_lo - t - w, rel_hi - t, x.rows, x.row_step);
    for (int64_t r = rs.first; r <= rs.last; ++r)
      if (run_meets(xb + t + r * static_cast<int64_t>(x.row_step), w, y)) return true;
  }
  return false;
}

}  // namespace tilecast::api
