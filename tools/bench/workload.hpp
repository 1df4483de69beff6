// The device buffers of one problem: random inputs (fresh per problem, padding poisoned), an
// output for cuBLAS, one for tilecast, and an FP32 output for the verification reference.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "suites.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::bench {

struct Workload {
  // Shapes by kind (rows x cols, batch):
  //   dense    A m x k, B n x k, D m x n (A k x m, B k x n where the layout stores them so)
  //   batched  the same with batch = groups
  //   m-grouped A (groups*m) x k, B n x k (batch groups), D (groups*m) x n
  //   masked   A m x k (batch groups, m = max rows), B n x k (batch groups), D m x n (batch groups)
  //   k-grouped A m x k, B n x k (k: every group's columns), D m x n (batch groups); C, the values
  //            D is accumulated onto, likewise
  // Row strides are padded to 16 bytes where K or N is not a multiple of 8 (bf16) / 4 (fp32).
  test::DeviceMatrix a, b, c;
  test::DeviceMatrix d_cublas, d_tilecast;
  test::DeviceMatrix d_check;  // FP32: what tilecast is verified against
  test::DeviceMatrix c_check;  // FP32 copy of C for that reference
  test::DeviceMatrix bias, bias_check;  // [1, n] of the output's dtype, and its FP32 copy
  bool has_c = false, has_bias = false;
  std::vector<int64_t> rows_per_batch;  // masked: valid rows of each expert
  std::vector<test::GroupSpan> spans;   // m-grouped and masked: rows of each expert
  std::vector<int64_t> k_sizes;         // k-grouped: columns of each group
  // The group data tilecast reads on the device: expert offsets (m-grouped), valid rows (masked),
  // K sizes (k-grouped), as int32.
  test::DeviceBuffer group_data;
  uint64_t seed = 0;
  double device_bytes = 0;

  const MatrixView* c_view() const { return has_c ? &c.view : nullptr; }
  const int32_t* group_ptr() const { return static_cast<const int32_t*>(group_data.get()); }
  const MatrixView* c_check_view() const { return has_c ? &c_check.view : nullptr; }
  VectorView bias_vector() const { return has_bias ? VectorView{bias.view.data, bias.view.dtype, bias.view.cols} : VectorView{}; }
  VectorView bias_check_vector() const {
    return has_bias ? VectorView{bias_check.view.data, DType::kFP32, bias_check.view.cols} : VectorView{};
  }
};

// Throws (CudaError on allocation failure).
std::unique_ptr<Workload> make_workload(const BenchProblem& p, uint64_t seed, cudaStream_t stream);

}  // namespace tilecast::bench
