#include "tilecast_test/compare.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <cuda_runtime.h>

#include "kernel_util.cuh"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"

namespace tilecast::test {
namespace {

constexpr int kThreads = 256;

struct Partial {
  double diff2, ref2, max_abs;
  long long worst;  // flat index of max_abs, -1 none
  long long out_nonfinite, ref_nonfinite, count;
};

__device__ void merge(Partial& a, const Partial& b) {
  a.diff2 += b.diff2;
  a.ref2 += b.ref2;
  if (b.max_abs > a.max_abs || (b.max_abs == a.max_abs && b.worst >= 0 && (a.worst < 0 || b.worst < a.worst))) {
    a.max_abs = b.max_abs;
    a.worst = b.worst;
  }
  a.out_nonfinite += b.out_nonfinite;
  a.ref_nonfinite += b.ref_nonfinite;
  a.count += b.count;
}

// One partial per block (summed on the host in double, in a fixed order: deterministic).
__global__ void compare_kernel(const void* out, bool out_bf16, detail::Walk wo, const void* ref,
                               bool ref_bf16, detail::Walk wr, int64_t total,
                               const int64_t* rows_per_batch, Partial* partials) {
  Partial p{0, 0, 0, -1, 0, 0, 0};
  const int64_t per_batch = wo.rows * wo.cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (rows_per_batch) {
      const int64_t b = i / per_batch;
      if ((i - b * per_batch) / wo.cols >= rows_per_batch[b]) continue;
    }
    const float o = detail::load_as_float(out, out_bf16, wo.offset_of_flat(i));
    const float r = detail::load_as_float(ref, ref_bf16, wr.offset_of_flat(i));
    ++p.count;
    const bool of = isfinite(o), rf = isfinite(r);
    p.out_nonfinite += !of;
    p.ref_nonfinite += !rf;
    if (!of || !rf) continue;
    const double d = static_cast<double>(o) - static_cast<double>(r);
    p.diff2 += d * d;
    p.ref2 += static_cast<double>(r) * r;
    if (fabs(d) > p.max_abs || p.worst < 0) {
      p.max_abs = fabs(d);
      p.worst = i;
    }
  }
  __shared__ Partial s[kThreads];
  s[threadIdx.x] = p;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) merge(s[threadIdx.x], s[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

}  // namespace

CompareResult compare(const MatrixView& out, const MatrixView& ref, cudaStream_t stream,
                      std::span<const int64_t> rows_per_batch) {
  if (out.rows != ref.rows || out.cols != ref.cols || out.batch != ref.batch)
    throw std::invalid_argument("compare: out and ref differ in rows, cols or batch");
  if (!rows_per_batch.empty() && static_cast<int64_t>(rows_per_batch.size()) != out.batch)
    throw std::invalid_argument("compare: rows_per_batch needs one entry per batch");
  CompareResult res;
  const int64_t total = out.batch * out.rows * out.cols;
  if (total == 0) return res;

  DeviceBuffer rows_dev;
  if (!rows_per_batch.empty()) {
    rows_dev = DeviceBuffer(rows_per_batch.size() * sizeof(int64_t));
    TC_CUDA_CHECK(cudaMemcpyAsync(rows_dev.get(), rows_per_batch.data(), rows_dev.bytes(),
                                  cudaMemcpyHostToDevice, stream));
  }
  const unsigned blocks = detail::grid_for(total);
  DeviceBuffer partials_dev(blocks * sizeof(Partial));
  compare_kernel<<<blocks, kThreads, 0, stream>>>(
      out.data, out.dtype == DType::kBF16, detail::walk_of(out), ref.data,
      ref.dtype == DType::kBF16, detail::walk_of(ref), total,
      static_cast<const int64_t*>(rows_dev.get()), static_cast<Partial*>(partials_dev.get()));
  TC_CHECK_LAUNCH("compare_kernel");
  std::vector<Partial> parts(blocks);
  TC_CUDA_CHECK(cudaMemcpyAsync(parts.data(), partials_dev.get(), blocks * sizeof(Partial),
                                cudaMemcpyDeviceToHost, stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));

  double diff2 = 0, ref2 = 0, max_abs = 0;
  long long worst = -1;
  for (const Partial& p : parts) {
    diff2 += p.diff2;
    ref2 += p.ref2;
    if (p.worst >= 0 && (worst < 0 || p.max_abs > max_abs)) {
      max_abs = p.max_abs;
      worst = p.worst;
    }
    res.out_nonfinite += p.out_nonfinite;
    res.ref_nonfinite += p.ref_nonfinite;
    res.elements += p.count;
  }
  res.max_abs_error = max_abs;
  res.rel_fro_error = ref2 > 0 ? std::sqrt(diff2) / std::sqrt(ref2) : std::sqrt(diff2);
  const int64_t finite = res.elements - std::max(res.out_nonfinite, res.ref_nonfinite);
  res.ref_rms = finite > 0 ? std::sqrt(ref2 / static_cast<double>(finite)) : 0.0;
  res.max_abs_over_rms = res.ref_rms > 0 ? max_abs / res.ref_rms
                         : (max_abs > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  if (worst >= 0) {
    const int64_t per_batch = out.rows * out.cols;
    res.worst_b = worst / per_batch;
    res.worst_r = (worst % per_batch) / out.cols;
    res.worst_c = worst % out.cols;
    res.worst_out = get_element(out, res.worst_b, res.worst_r, res.worst_c);
    res.worst_ref = get_element(ref, res.worst_b, res.worst_r, res.worst_c);
  }
  return res;
}

Tolerance default_tolerance(DType out, DType ref) {
  if (out == DType::kBF16 && ref == DType::kBF16) return {1e-2, 0.1};
  if (out == DType::kFP32 && ref == DType::kFP32) return {1e-3, 1e-2};
  return {1e-2, 0.05};  // one side rounded to bf16 once: half an ulp
}

std::string failure_reason(const CompareResult& r, const Tolerance& tol) {
  std::ostringstream os;
  if (r.out_nonfinite) os << r.out_nonfinite << " NaN/Inf in the output; ";
  if (r.ref_nonfinite) os << r.ref_nonfinite << " NaN/Inf in the reference; ";
  if (!(r.rel_fro_error <= tol.rel_fro))
    os << "relative Frobenius error " << r.rel_fro_error << " > " << tol.rel_fro << "; ";
  if (!(r.max_abs_over_rms <= tol.max_abs_over_rms))
    os << "max |err| / ref RMS " << r.max_abs_over_rms << " > " << tol.max_abs_over_rms << "; ";
  std::string s = os.str();
  if (s.size() >= 2) s.resize(s.size() - 2);
  return s;
}

bool passes(const CompareResult& r, const Tolerance& tol) { return failure_reason(r, tol).empty(); }

std::string CompareResult::summary() const {
  std::ostringstream os;
  os.precision(3);
  os << "rel_fro=" << std::scientific << rel_fro_error << " max_abs=" << max_abs_error
     << " (" << max_abs_over_rms << " x ref RMS " << ref_rms << ")" << std::defaultfloat
     << " nonfinite out/ref=" << out_nonfinite << "/" << ref_nonfinite << " over " << elements
     << " elements";
  if (worst_b >= 0)
    os << "; worst at b=" << worst_b << " r=" << worst_r << " c=" << worst_c << ": out " << worst_out
       << " ref " << worst_ref;
  return os.str();
}

}  // namespace tilecast::test
