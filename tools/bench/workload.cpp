#include "workload.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::bench {
namespace {

test::DeviceMatrix alloc(DType t, int64_t rows, int64_t cols, int64_t batch, uint32_t row_bytes = kLeastRowBytes) {
  const int64_t per_row = std::max<int64_t>(1, row_bytes / static_cast<int64_t>(dtype_size(t)));
  return test::make_matrix(t, rows, cols, batch, std::max(test::aligned_ld(cols, t), (cols + per_row - 1) / per_row * per_row));
}

void randomize(test::DeviceMatrix& m, uint64_t seed, cudaStream_t stream) {
  test::poison(m, stream);  // row padding stays NaN: a kernel that reads it and uses it fails
  test::fill_uniform(m.view, seed, stream);
}

}  // namespace

std::unique_ptr<Workload> make_workload(const BenchProblem& p, uint64_t seed, cudaStream_t stream) {
  auto w = std::make_unique<Workload>();
  w->seed = seed;
  w->has_c = p.with_c;
  const bool masked = p.kind == Kind::kMasked, kgrouped = p.kind == Kind::kKGrouped;
  const int64_t batch = (p.kind == Kind::kBatched || masked) ? p.groups : 1;
  const int64_t d_batch = kgrouped ? p.groups : batch;
  const int64_t rows = p.kind == Kind::kMGrouped ? p.rows_total() : p.m;
  const int64_t b_batch = p.kind == Kind::kDense || kgrouped ? 1 : p.groups;

  // Dense and batched problems store A and B as their layout says (the grouped ones are NT).
  const bool a_t = a_mn_major(p.layout), b_t = b_mn_major(p.layout);
  w->a = a_t ? alloc(DType::kBF16, p.k, rows, batch, p.row_bytes) : alloc(DType::kBF16, rows, p.k, batch, p.row_bytes);
  w->b = b_t ? alloc(DType::kBF16, p.k, p.n, b_batch, p.row_bytes) : alloc(DType::kBF16, p.n, p.k, b_batch, p.row_bytes);
  w->d_cublas = alloc(p.out, rows, p.n, d_batch);
  w->d_tilecast = alloc(p.out, rows, p.n, d_batch);
  w->d_check = alloc(DType::kFP32, rows, p.n, d_batch);
  if (p.with_c) w->c = alloc(p.out, rows, p.n, d_batch);

  randomize(w->a, seed * 4 + 0, stream);
  randomize(w->b, seed * 4 + 1, stream);
  if (p.with_c) {
    randomize(w->c, seed * 4 + 2, stream);
    w->c_check = alloc(DType::kFP32, rows, p.n, d_batch);
    test::copy_convert(w->c.view, w->c_check.view, stream);
  }
  if (p.with_bias) {
    w->has_bias = true;
    w->bias = alloc(p.out, 1, p.n, 1);
    w->bias_check = alloc(DType::kFP32, 1, p.n, 1);
    randomize(w->bias, seed * 4 + 3, stream);
    test::copy_convert(w->bias.view, w->bias_check.view, stream);
  }
  // Outputs start poisoned too: nothing is ever timed or compared on zeros.
  test::poison(w->d_cublas, stream);
  test::poison(w->d_tilecast, stream);
  test::poison(w->d_check, stream);
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<int64_t> group_data;
  if (p.kind == Kind::kMGrouped) {
    std::vector<int64_t> offsets{0};
    for (int64_t r : p.group_rows) offsets.push_back(offsets.back() + r);
    w->spans = test::spans_from_offsets(offsets);
    group_data = offsets;
  } else if (masked) {
    w->rows_per_batch = p.group_rows;
    w->spans = test::spans_from_masked(p.group_rows, p.m);
    group_data = p.group_rows;
  } else if (kgrouped) {
    w->k_sizes = p.group_k;
    group_data = p.group_k;
  }
  if (!group_data.empty()) {
    const std::vector<int32_t> as_int32(group_data.begin(), group_data.end());
    w->group_data = test::DeviceBuffer(as_int32.size() * sizeof(int32_t));
    TC_CUDA_CHECK(cudaMemcpy(w->group_data.get(), as_int32.data(), w->group_data.bytes(), cudaMemcpyHostToDevice));
  }
  for (const test::DeviceMatrix* m :
       {&w->a, &w->b, &w->c, &w->c_check, &w->bias, &w->bias_check, &w->d_cublas, &w->d_tilecast, &w->d_check})
    w->device_bytes += static_cast<double>(m->buffer.bytes());
  return w;
}

}  // namespace tilecast::bench
