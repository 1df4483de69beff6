#include "gemm_case.hpp"

#include "tilecast/diagnostics.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {

plan::GemmDesc desc_of(const GemmCase& c) {
  plan::GemmDesc d =
      plan::dense_desc(c.m, c.n, c.k, c.batch, c.out, c.with_c && c.c_source != CSource::kNaN, c.layout);
  d.has_bias = c.with_bias;
  d.bias_type = c.with_bias ? c.bias_dtype : DType::kFP32;
  // A's and B's rows as run_gemm_case stores them (line-aligned bases: make_matrix's guard), so
  // that the plan warmed is the plan the call makes.
  const int64_t a_cols = a_mn_major(c.layout) ? c.m : c.k, b_cols = b_mn_major(c.layout) ? c.n : c.k;
  const auto rows_at = [&](int64_t cols, int64_t rows) {
    const uint64_t ld_bytes = static_cast<uint64_t>(aligned_ld(cols + c.row_padding, DType::kBF16)) * 2;
    return plan::row_alignment(0, ld_bytes, c.batch > 1 ? ld_bytes * static_cast<uint64_t>(rows) : 0);
  };
  d.a_row_alignment = rows_at(a_cols, a_mn_major(c.layout) ? c.k : c.m);
  d.b_row_alignment = rows_at(b_cols, b_mn_major(c.layout) ? c.k : c.n);
  return d;
}

std::string GemmCase::name() const {
  std::string s = std::string(what) + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (batch > 1) s.append("x").append(std::to_string(batch));
  s += out == DType::kFP32 ? "_fp32" : "_bf16";
  if (with_c) s += c_source == CSource::kInPlace ? "_CinD" : c_source == CSource::kNaN ? "_CnanBeta0" : "_C";
  if (alpha != 1.0f || beta != 1.0f)
    s += "_a" + std::to_string(static_cast<int>(alpha * 10)) + "b" + std::to_string(static_cast<int>(beta * 10));
  if (with_bias) s += bias_dtype == DType::kFP32 ? "_bias32" : "_bias16";
  if (layout != GemmLayout::kNT) s += std::string("_") + layout_name(layout);
  if (row_padding) s.append("_pad").append(std::to_string(row_padding));
  return s + config_name(config);
}

std::string config_name(const GemmConfig& config) {
  std::string s;
  if (config.cluster_m) s += "_c" + std::to_string(config.cluster_m) + "x" + std::to_string(config.cluster_n);
  if (config.block_m) s += "_b" + std::to_string(config.block_m) + "x" + std::to_string(config.block_n);
  if (config.multicast_a == 0 && config.multicast_b == 0) s += "_unicast";
  if (config.companion == 1) s += "_companion";
  if (config.k_splits) s += "_splits" + std::to_string(config.k_splits);
  if (config.swap_ab == 1) s += "_swapab";
  if (config.fused_reduce != -1) s += config.fused_reduce ? "_fused" : "_reducekernel";
  if (config.cluster_reduce == 1) s += "_inclusterreduce";
  if (config.split_columns == 1) s += "_splitcols";
  if (config.pingpong == 1) s += "_pingpong";
  if (config.k_serpentine == 1) s += "_serpentine";
  return s;
}

::testing::AssertionResult run_gemm_case(const GemmCase& c, cudaStream_t stream) {
  static CublasLt lt;
  // A and B as the layout stores them: [m, k] or [k, m], [n, k] or [k, n].
  const int64_t pad = c.row_padding;
  const bool a_t = a_mn_major(c.layout), b_t = b_mn_major(c.layout);
  const int64_t a_rows = a_t ? c.k : c.m, a_cols = a_t ? c.m : c.k;
  const int64_t b_rows = b_t ? c.k : c.n, b_cols = b_t ? c.n : c.k;
  DeviceMatrix a = make_matrix(DType::kBF16, a_rows, a_cols, c.batch, aligned_ld(a_cols + pad, DType::kBF16));
  DeviceMatrix b = make_matrix(DType::kBF16, b_rows, b_cols, c.batch, aligned_ld(b_cols + pad, DType::kBF16));
  // D's rows padded past n (when n is not a multiple of 8) so that a write into padding shows.
  DeviceMatrix d_buffer = make_matrix(c.out, c.m + c.guard_rows, c.n, c.batch, aligned_ld(c.n + 1 + pad, c.out));
  const MatrixView d_view = c.guard_rows ? rows_of(d_buffer.view, 0, c.m) : d_buffer.view;
  DeviceMatrix ref = make_matrix(DType::kFP32, c.m, c.n, c.batch);
  DeviceMatrix cm = make_matrix(c.out, c.m, c.n, c.batch, aligned_ld(c.n + pad, c.out));
  DeviceMatrix c32 = make_matrix(DType::kFP32, c.m, c.n, c.batch);
  DeviceMatrix bias = make_matrix(c.bias_dtype, 1, c.n);
  DeviceMatrix bias32 = make_matrix(DType::kFP32, 1, c.n);
  // The padding past each row of A and B stays NaN: a kernel that reads past K (or, stored
  // MN-major, past M or N) into a product that is kept fails the comparison.
  poison(a, stream);
  poison(b, stream);
  fill_uniform(a.view, fresh_seed(), stream);
  fill_uniform(b.view, fresh_seed(), stream);
  poison(d_buffer, stream);
  GemmEpilogue epilogue;
  epilogue.alpha = c.alpha;
  LtEpilogue lt_epilogue;
  lt_epilogue.alpha = c.alpha;
  const MatrixView* ref_c = nullptr;
  if (c.with_c) {
    epilogue.beta = c.beta;
    switch (c.c_source) {
      case CSource::kSeparate:
        fill_uniform(cm.view, fresh_seed(), stream);
        copy_convert(cm.view, c32.view, stream);  // the reference's C: the same values, in FP32
        epilogue.c = &cm.view;
        ref_c = &c32.view;
        break;
      case CSource::kInPlace:
        fill_uniform(d_view, fresh_seed(), stream);  // D starts as C (its padding stays poisoned)
        copy_convert(d_view, c32.view, stream);
        epilogue.c = &d_view;
        ref_c = &c32.view;
        break;
      case CSource::kNaN:
        poison(cm, stream);  // NaN everywhere: reading it would show
        epilogue.c = &cm.view;
        epilogue.beta = 0.0f;
        break;
    }
    lt_epilogue.beta = c.beta;
  }
  if (c.with_bias) {
    fill_uniform(bias.view, fresh_seed(), stream);
    copy_convert(bias.view, bias32.view, stream);
    epilogue.bias = {bias.view.data, c.bias_dtype, c.n};
    lt_epilogue.bias = {bias32.view.data, DType::kFP32, c.n};
  }
  // The reference first, from the inputs as they are before the kernel runs: a stray store into
  // A or B would otherwise feed both sides alike.
  reference_gemm(lt, a.view, b.view, ref.view, stream, ref_c, lt_epilogue, c.layout);
  try {
    if (c.layout == GemmLayout::kNT)
      gemm(a.view, b.view, d_view, stream, epilogue, c.config);  // the original NT entry point
    else
      gemm(c.layout, a.view, b.view, d_view, stream, epilogue, c.config);
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << c.name() << ": " << e.what();
  }
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    const auto report = take_wait_timeout_report();
    return ::testing::AssertionFailure() << c.name() << ": kernel failed: " << cudaGetErrorString(err)
                                         << (report ? "; " + *report : std::string());
  }
  for (const DeviceMatrix* input : {&a, &b}) {
    const WriteCheck w = check_written(*input, stream);
    if (w.touched != 0)
      return ::testing::AssertionFailure() << c.name() << ": the kernel stored into an input's padding: "
                                           << w.summary();
  }
  // In place, D was written over C: the view holds no poison, so "written" proves nothing there
  // (the values do), but the padding and guards around it still hold poison that any stray store
  // would overwrite.
  auto written = all_written(check_written(d_buffer, d_view, {}, stream));
  if (!written) return written << " (" << c.name() << ")";
  auto close = matches(d_view, ref.view, std::nullopt, stream);
  if (!close) return close << " (" << c.name() << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace tilecast::test
