#include "gemm_case.hpp"

#include "tilecast/diagnostics.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {

plan::GemmDesc desc_of(const GemmCase& c) { return plan::dense_desc(c.m, c.n, c.k, c.batch, c.out, c.with_c); }

std::string GemmCase::name() const {
  std::string s = std::string(what) + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (batch > 1) s += "x" + std::to_string(batch);
  s += out == DType::kFP32 ? "_fp32" : "_bf16";
  if (with_c) s += "_C";
  return s + config_name(config);
}

std::string config_name(const GemmConfig& config) {
  std::string s;
  if (config.cluster_m) s += "_c" + std::to_string(config.cluster_m) + "x" + std::to_string(config.cluster_n);
  if (config.block_m) s += "_b" + std::to_string(config.block_m) + "x" + std::to_string(config.block_n);
  if (config.companion == 1) s += "_companion";
  return s;
}

::testing::AssertionResult run_gemm_case(const GemmCase& c, cudaStream_t stream) {
  static CublasLt lt;
  DeviceMatrix a = make_matrix(DType::kBF16, c.m, c.k, c.batch, aligned_ld(c.k, DType::kBF16));
  DeviceMatrix b = make_matrix(DType::kBF16, c.n, c.k, c.batch, aligned_ld(c.k, DType::kBF16));
  // D's rows padded past n (when n is not a multiple of 8) so that a write into padding shows.
  DeviceMatrix d = make_matrix(c.out, c.m, c.n, c.batch, aligned_ld(c.n + 1, c.out));
  DeviceMatrix ref = make_matrix(DType::kFP32, c.m, c.n, c.batch);
  DeviceMatrix cm = make_matrix(c.out, c.m, c.n, c.batch, aligned_ld(c.n, c.out));
  fill_uniform(a.view, fresh_seed(), stream);
  fill_uniform(b.view, fresh_seed(), stream);
  DeviceMatrix c32 = make_matrix(DType::kFP32, c.m, c.n, c.batch);
  if (c.with_c) {
    fill_uniform(cm.view, fresh_seed(), stream);
    copy_convert(cm.view, c32.view, stream);  // the reference's C: the same values, in FP32
  }
  poison(d, stream);
  try {
    gemm(a.view, b.view, d.view, stream, c.with_c ? &cm.view : nullptr, c.config);
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << c.name() << ": " << e.what();
  }
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    const auto report = take_wait_timeout_report();
    return ::testing::AssertionFailure() << c.name() << ": kernel failed: " << cudaGetErrorString(err)
                                         << (report ? "; " + *report : std::string());
  }
  reference_gemm(lt, a.view, b.view, ref.view, stream, c.with_c ? &c32.view : nullptr);
  auto written = all_written(d, stream);
  if (!written) return written << " (" << c.name() << ")";
  auto close = matches(d.view, ref.view, std::nullopt, stream);
  if (!close) return close << " (" << c.name() << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace tilecast::test
