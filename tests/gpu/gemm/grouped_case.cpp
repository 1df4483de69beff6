#include "grouped_case.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "tilecast/diagnostics.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"
#include "tilecast_test/gtest_check.hpp"
#include "tilecast_test/reference_gemm.hpp"

namespace tilecast::test {
namespace {

constexpr int64_t kRun = kMGroupedRowAlignment;  // row-index runs start on multiples of this

int64_t total(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// The sizes a case's buffers have, from its initial group sizes.
struct Shape {
  int64_t groups = 0;
  int64_t rows = 0;        // rows of A and D (per expert for masked)
  int64_t k = 0;           // columns of A and B
  int64_t expected_m = 0;  // masked
};

// Rows of the row-index layout: each expert's run padded to kRun, at least c.rows.
int64_t row_index_rows(const GroupedCase& c) {
  int64_t rows = 0;
  for (int64_t s : c.sizes) rows += (s + kRun - 1) / kRun * kRun;
  return std::max({rows, c.rows, kRun}) / kRun * kRun;
}

Shape shape_of(const GroupedCase& c) {
  Shape s;
  s.groups = static_cast<int64_t>(c.sizes.size());
  switch (c.form) {
    case GroupedForm::kOffsets:
      s.rows = std::max(c.rows, total(c.sizes));
      s.k = c.k;
      break;
    case GroupedForm::kRowIndex:
      s.rows = row_index_rows(c);
      s.k = c.k;
      break;
    case GroupedForm::kMasked:
      s.rows = c.rows;
      s.k = c.k;
      s.expected_m = c.expected_m ? c.expected_m : std::clamp<int64_t>(total(c.sizes) / s.groups, 1, c.rows);
      break;
    case GroupedForm::kKGrouped:
      s.rows = c.rows;
      s.k = c.k ? c.k : std::max<int64_t>(total(c.sizes), 1);
      break;
  }
  return s;
}

const char* form_name(GroupedForm f) {
  switch (f) {
    case GroupedForm::kOffsets: return "offsets";
    case GroupedForm::kRowIndex: return "rowindex";
    case GroupedForm::kMasked: return "masked";
    case GroupedForm::kKGrouped: return "kgrouped";
  }
  return "?";
}

// The int32 group data of `sizes` in the form's layout (row index: `rows` entries).
std::vector<int32_t> group_data(GroupedForm form, const std::vector<int64_t>& sizes, int64_t rows) {
  std::vector<int32_t> out;
  switch (form) {
    case GroupedForm::kOffsets:
      out.push_back(0);
      for (int64_t s : sizes) out.push_back(out.back() + static_cast<int32_t>(s));
      break;
    case GroupedForm::kRowIndex:
      for (size_t g = 0; g < sizes.size(); ++g) {
        const int64_t padded = (sizes[g] + kRun - 1) / kRun * kRun;
        for (int64_t r = 0; r < padded; ++r) out.push_back(r < sizes[g] ? static_cast<int32_t>(g) : -1);
      }
      if (static_cast<int64_t>(out.size()) > rows) throw std::invalid_argument("row index: more rows than the buffers");
      out.resize(static_cast<size_t>(rows), -1);  // trailing padding runs
      break;
    default:
      for (int64_t s : sizes) out.push_back(static_cast<int32_t>(s));
      break;
  }
  return out;
}

// A [rows, n] matrix seen as a batch of kRun-row chunks (row-index layouts: each chunk's rows
// that belong to an expert come first).
MatrixView chunks(const MatrixView& v) {
  MatrixView s = v;
  s.rows = kRun;
  s.batch = v.rows / kRun;
  s.batch_stride = kRun * v.ld();
  return s;
}

}  // namespace

std::string GroupedCase::name() const {
  std::string s = std::string(what) + "_" + form_name(form) + "_g" + std::to_string(sizes.size()) + "_n" +
                  std::to_string(n);
  if (k) s += "_k" + std::to_string(k);
  s += out == DType::kFP32 ? "_fp32" : "_bf16";
  if (accumulate) s += "_acc";
  return s + config_name(config);
}

namespace {

plan::GemmDesc sized_desc(const GroupedCase& c) {
  const Shape s = shape_of(c);
  switch (c.form) {
    case GroupedForm::kOffsets:
      return plan::mgrouped_contiguous_desc(ContiguousLayout::kOffsets, s.rows, c.n, s.k, s.groups, c.out);
    case GroupedForm::kRowIndex:
      return plan::mgrouped_contiguous_desc(ContiguousLayout::kRowIndex, s.rows, c.n, s.k, s.groups, c.out);
    case GroupedForm::kMasked: return plan::mgrouped_masked_desc(s.rows, c.n, s.k, s.groups, s.expected_m, c.out);
    case GroupedForm::kKGrouped: return plan::kgrouped_desc(s.rows, c.n, s.k, s.groups, c.out, c.accumulate);
  }
  throw std::invalid_argument("unknown grouped form");
}

}  // namespace

plan::GemmDesc desc_of(const GroupedCase& c) {
  plan::GemmDesc d = sized_desc(c);
  plan::assume_padded_rows(d);  // the runs store A and B in rows padded to 16 bytes (aligned_ld)
  return d;
}

struct GroupedRun::Impl {
  GroupedCase c;
  Shape shape;
  cudaStream_t stream;
  std::vector<int64_t> sizes;  // the current ones
  std::vector<int32_t> data;   // their group data, as on the device
  DeviceMatrix a, b, d, initial_d, ref;
  DeviceBuffer group;
  CublasLt* lt;

  int32_t* group_ptr() const { return static_cast<int32_t*>(group.get()); }

  // A's rows that belong to no expert (masked rows past a count, row-index padding) hold NaN: a
  // kernel that let them into an expert's rows would fail the comparison.
  void fill_a() {
    fill_uniform(a.view, fresh_seed(), stream);
    const int64_t ld = a.view.ld();
    if (c.form == GroupedForm::kMasked) {
      for (int64_t g = 0; g < shape.groups; ++g) {
        const int64_t valid = sizes[static_cast<size_t>(g)];
        if (valid < shape.rows)
          poison(static_cast<uint16_t*>(a.view.data) + g * a.view.batch_step() + valid * ld, (shape.rows - valid) * ld,
                 DType::kBF16, stream);
      }
    } else if (c.form == GroupedForm::kRowIndex) {
      for (int64_t r = 0; r < shape.rows;) {  // each run of padding rows at once
        int64_t end = r;
        while (end < shape.rows && data[static_cast<size_t>(end)] < 0) ++end;
        if (end > r) poison(static_cast<uint16_t*>(a.view.data) + r * ld, (end - r) * ld, DType::kBF16, stream);
        r = std::max(end, r + 1);
      }
    }
  }
};

GroupedRun::GroupedRun(const GroupedCase& c, cudaStream_t stream) : impl_(new Impl) {
  static CublasLt lt;
  Impl& x = *impl_;
  x.c = c;
  x.shape = shape_of(c);
  x.stream = stream;
  x.lt = &lt;
  x.sizes = c.sizes;
  const Shape& s = x.shape;
  const bool masked = c.form == GroupedForm::kMasked, kgrouped = c.form == GroupedForm::kKGrouped;
  const int64_t ab_batch = masked ? s.groups : 1;
  const int64_t d_batch = masked || kgrouped ? s.groups : 1;
  x.a = make_matrix(DType::kBF16, s.rows, s.k, ab_batch, aligned_ld(s.k, DType::kBF16));
  x.b = make_matrix(DType::kBF16, c.n, s.k, kgrouped ? 1 : s.groups, aligned_ld(s.k, DType::kBF16));
  // D's rows padded past n (when n is not a multiple of 8) so that a write into padding shows.
  x.d = make_matrix(c.out, s.rows, c.n, d_batch, aligned_ld(c.n + 1, c.out));
  x.ref = make_matrix(DType::kFP32, s.rows, c.n, d_batch);
  poison(x.a, stream);
  poison(x.b, stream);
  fill_uniform(x.b.view, fresh_seed(), stream);
  if (c.accumulate) {
    x.initial_d = make_matrix(c.out, s.rows, c.n, d_batch, aligned_ld(c.n + 1, c.out));
    poison(x.initial_d, stream);  // its padding and guards, which reset_output copies into D's, stay poison
    fill_uniform(x.initial_d.view, fresh_seed(), stream);
  }
  x.data = group_data(c.form, x.sizes, s.rows);
  x.group = DeviceBuffer(x.data.size() * sizeof(int32_t));
  TC_CUDA_CHECK(cudaMemcpyAsync(x.group.get(), x.data.data(), x.data.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                stream));
  x.fill_a();
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

GroupedRun::~GroupedRun() { delete impl_; }

void GroupedRun::set_sizes(const std::vector<int64_t>& sizes) {
  Impl& x = *impl_;
  if (sizes.size() != x.sizes.size()) throw std::invalid_argument("set_sizes: another number of groups");
  std::vector<int32_t> data = group_data(x.c.form, sizes, x.shape.rows);
  if (data.size() != x.data.size()) throw std::invalid_argument("set_sizes: another layout size");
  x.sizes = sizes;
  x.data = std::move(data);
  TC_CUDA_CHECK(cudaMemcpyAsync(x.group.get(), x.data.data(), x.data.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                x.stream));
  x.fill_a();  // A's NaN rows follow the new sizes
}

void GroupedRun::reset_output() {
  Impl& x = *impl_;
  if (x.c.accumulate) {
    TC_CUDA_CHECK(cudaMemcpyAsync(x.d.buffer.get(), x.initial_d.buffer.get(), x.d.buffer.bytes(),
                                  cudaMemcpyDeviceToDevice, x.stream));
  } else {
    poison(x.d, x.stream);
  }
}

// The case's call, or (kPrepare) its tilecast::prepare_*, with the same arguments.
template <bool kPrepare>
void invoke(const GroupedCase& c, const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* group,
            int64_t expected_m, cudaStream_t stream) {
  switch (c.form) {
    case GroupedForm::kOffsets:
    case GroupedForm::kRowIndex: {
      const GroupedLayout layout{c.form == GroupedForm::kOffsets ? ContiguousLayout::kOffsets : ContiguousLayout::kRowIndex,
                                 group};
      if constexpr (kPrepare) prepare_mgrouped_contiguous(a, b, d, layout, c.config);
      else gemm_mgrouped_contiguous(a, b, d, layout, stream, c.config);
      break;
    }
    case GroupedForm::kMasked:
      if constexpr (kPrepare) prepare_mgrouped_masked(a, b, d, group, expected_m, c.config);
      else gemm_mgrouped_masked(a, b, d, group, expected_m, stream, c.config);
      break;
    case GroupedForm::kKGrouped:
      if constexpr (kPrepare) prepare_kgrouped(a, b, d, group, c.accumulate, c.config);
      else gemm_kgrouped(a, b, d, group, c.accumulate, stream, c.config);
      break;
  }
}

void GroupedRun::call() {
  const Impl& x = *impl_;
  invoke<false>(x.c, x.a.view, x.b.view, x.d.view, x.group_ptr(), x.shape.expected_m, x.stream);
}

void GroupedRun::prepare() {
  const Impl& x = *impl_;
  invoke<true>(x.c, x.a.view, x.b.view, x.d.view, x.group_ptr(), x.shape.expected_m, x.stream);
}

::testing::AssertionResult GroupedRun::check() {
  Impl& x = *impl_;
  const GroupedCase& c = x.c;
  const std::string name = c.name();
  const cudaError_t err = cudaStreamSynchronize(x.stream);
  if (err != cudaSuccess) {
    const auto layout = take_layout_fault_report();
    const auto wait = take_wait_timeout_report();
    return ::testing::AssertionFailure() << name << ": kernel failed: " << cudaGetErrorString(err)
                                         << (layout ? "; " + *layout : std::string())
                                         << (wait ? "; " + *wait : std::string());
  }
  // The reference for the current sizes, into a poisoned FP32 D (rows no group owns stay NaN and
  // are left out of the comparison).
  poison(x.ref, x.stream);
  const Shape& s = x.shape;
  std::vector<int64_t> rows_per_batch;
  MatrixView out = x.d.view, ref = x.ref.view;
  WriteCheck written;
  switch (c.form) {
    case GroupedForm::kOffsets: {
      std::vector<int64_t> offsets(x.data.begin(), x.data.end());
      reference_grouped_gemm(*x.lt, x.a.view, x.b.view, x.ref.view, spans_from_offsets(offsets), x.stream);
      out = rows_of(x.d.view, 0, offsets.back());
      ref = rows_of(x.ref.view, 0, offsets.back());
      written = check_written(x.d, out, {}, x.stream);  // and rows past the last expert untouched
      break;
    }
    case GroupedForm::kRowIndex: {
      reference_grouped_gemm(*x.lt, x.a.view, x.b.view, x.ref.view, spans_from_row_index(x.data), x.stream);
      for (int64_t chunk = 0; chunk < s.rows / kRun; ++chunk) {
        int64_t valid = 0;
        while (valid < kRun && x.data[static_cast<size_t>(chunk * kRun + valid)] >= 0) ++valid;
        rows_per_batch.push_back(valid);
      }
      out = chunks(x.d.view);
      ref = chunks(x.ref.view);
      written = check_written(x.d, out, rows_per_batch, x.stream);  // padding rows untouched
      break;
    }
    case GroupedForm::kMasked:
      reference_grouped_gemm(*x.lt, x.a.view, x.b.view, x.ref.view, spans_from_masked(x.sizes, s.rows), x.stream);
      rows_per_batch = x.sizes;
      written = check_written(x.d, x.d.view, rows_per_batch, x.stream);  // rows past each count untouched
      break;
    case GroupedForm::kKGrouped:
      if (c.accumulate) copy_convert(x.initial_d.view, x.ref.view, x.stream);  // the reference's C: D's first values
      reference_kgrouped_gemm(*x.lt, x.a.view, x.b.view, x.ref.view, x.sizes, c.accumulate, x.stream);
      // Zero-K groups are written too (zeros). Accumulating, D's view starts as values, not poison:
      // the check then sees only stores outside it.
      written = check_written(x.d, x.stream);
      break;
  }
  if (!written.ok()) return all_written(written) << " (" << name << ")";
  auto close = matches(out, ref, std::nullopt, x.stream, rows_per_batch);
  if (!close) return close << " (" << name << ")";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult run_grouped_case(const GroupedCase& c, cudaStream_t stream) {
  try {
    GroupedRun run(c, stream);
    run.reset_output();
    run.call();
    return run.check();
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << c.name() << ": " << e.what();
  }
}

}  // namespace tilecast::test
