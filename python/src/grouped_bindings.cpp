// The grouped GEMMs of tilecast/grouped.hpp (m-grouped contiguous, m-grouped masked, k-grouped)
// and their prepare calls, for DLPack tensors, under DeepGEMM's names. The group arrays (expert
// offsets or row indices, masked row counts, k-group sizes) are int32 device tensors whose contents
// no code here reads: only their rank, dtype, stride, length and device are checked. The checks run
// in gemm_bindings.cpp's order (ranks, dtypes and strides, shapes and scalars, devices), each raising
// the Python exception a torch user expects, then the config's own rules (tilecast.Error, as what
// the C++ API refuses after them: 16-byte alignment, overlap, a group array whose allocation is too
// short). `d` is allocated through the caller's allocator only after every check passed.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "device_guard.hpp"
#include "tensor_view.hpp"
#include "tilecast/grouped.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::python {
namespace nb = nanobind;
namespace {

constexpr const char* kContiguous = "m_grouped_bf16_gemm_nt_contiguous";
constexpr const char* kMasked = "m_grouped_bf16_gemm_nt_masked";
constexpr const char* kKGrouped = "k_grouped_bf16_gemm_nt_contiguous";

std::string prefix(const std::string& where) { return "tilecast." + where + ": "; }

[[noreturn]] void value_error(const std::string& where, const std::string& what) {
  throw nb::value_error((prefix(where) + what).c_str());
}

std::string shape3(int64_t x, int64_t y, int64_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}
std::string shape2(int64_t x, int64_t y) { return "(" + std::to_string(x) + ", " + std::to_string(y) + ")"; }

// What one grouped call was given, checked.
struct Grouped {
  MatrixView a, b, d;
  const int32_t* data = nullptr;  // the group array
  int device = 0;
  bool empty = false;  // nothing to compute: the call returns d untouched
};

// The output as given (None: to be allocated) and the dtype the call writes.
struct Output {
  std::optional<Tensor> tensor;
  DType dtype = DType::kBF16;
};

// d's rank (phase 1): `d` may be None.
Output output_rank(const std::string& where, const nb::object& d, size_t rank, const char* dims) {
  Output o;
  if (!d.is_none()) {
    o.tensor = tensor_arg(where.c_str(), "d", d);
    check_ndim(where.c_str(), "d", *o.tensor, rank, dims);
  }
  return o;
}

// d's dtype (phase 2): d's own, which out_dtype must agree with, else out_dtype, else bfloat16.
void output_dtype(const std::string& where, Output& o, MatrixView& view, const std::optional<std::string>& out_dtype) {
  std::optional<DType> want;
  if (out_dtype) want = *out_dtype == "float32" ? DType::kFP32 : DType::kBF16;
  if (o.tensor) {
    view = matrix_view(where.c_str(), "d", *o.tensor, Allowed::kBF16OrFP32);
    if (want && *want != view.dtype)
      throw nb::type_error((prefix(where) + "d is " + dtype_text(*o.tensor) + " but out_dtype is " + *out_dtype).c_str());
    o.dtype = view.dtype;
  } else {
    o.dtype = want.value_or(DType::kBF16);
  }
}

void check_entries(const std::string& where, const char* name, const Tensor& t, int64_t entries,
                   const std::string& why) {
  const auto got = static_cast<int64_t>(t.shape(0));
  if (got != entries)
    value_error(where, std::string(name) + " has " + std::to_string(got) + " entries, expected " +
                           std::to_string(entries) + " (" + why + ")");
}

// The last phase: the config's own rules, then d allocated when it was None (and what the allocator
// returned checked).
void allocate(const std::string& where, nb::object& d, const Output& o, MatrixView& view, const nb::tuple& shape,
              const nb::object& alloc, int device, const GemmConfig& config) {
  // The C++ API's first check, made here too: an empty problem returns before the call (and must
  // still get it, as the API's own empty calls do), and a refused call allocates nothing.
  plan::check_overrides(config);
  if (o.tensor) return;
  d = alloc(shape, nb::str(o.dtype == DType::kFP32 ? "float32" : "bfloat16"));
  const Tensor t = tensor_arg(where.c_str(), "the allocated d", d);
  view = matrix_view(where.c_str(), "the allocated d", t, Allowed::kBF16OrFP32);
  check_cuda(where.c_str(), "the allocated d", t, device);
}

ContiguousLayout layout_kind(const std::string& where, const std::string& layout) {
  if (layout == "row_index") return ContiguousLayout::kRowIndex;
  if (layout == "offsets") return ContiguousLayout::kOffsets;
  value_error(where, "layout must be 'row_index' (grouped_layout[r] is row r's expert, -1 for padding) or "
                     "'offsets' (grouped_layout[g]..grouped_layout[g + 1] are expert g's rows), got '" +
                         layout + "'");
}

// a [rows, k], b [num_groups, n, k], d [rows, n]; grouped_layout: rows entries (row_index) or
// num_groups + 1 (offsets).
Grouped check_contiguous(const std::string& where, const Tensor& a, const Tensor& b, nb::object& d,
                         const Tensor& layout_data, ContiguousLayout layout,
                         const std::optional<std::string>& out_dtype, const GemmConfig& config,
                         const nb::object& alloc) {
  const char* w = where.c_str();
  check_ndim(w, "a", a, 2, "[rows, k] (every expert's rows, one after another)");
  check_ndim(w, "b", b, 3, "[num_groups, n, k] (one matrix per expert)");
  Output o = output_rank(where, d, 2, "[rows, n]");
  Grouped g;
  g.a = matrix_view(w, "a", a, Allowed::kBF16);
  g.b = matrix_view(w, "b", b, Allowed::kBF16);
  output_dtype(where, o, g.d, out_dtype);
  g.data = int32_vector(w, "grouped_layout", layout_data);

  if (g.a.cols != g.b.cols)
    value_error(where, "a is [rows=" + std::to_string(g.a.rows) + ", k=" + std::to_string(g.a.cols) +
                           "] but b is [num_groups=" + std::to_string(g.b.batch) + ", n=" + std::to_string(g.b.rows) +
                           ", k=" + std::to_string(g.b.cols) + "]: they must agree on k");
  if (o.tensor && (g.d.rows != g.a.rows || g.d.cols != g.b.rows))
    value_error(where, "d is " + shape2(g.d.rows, g.d.cols) + ", expected (rows of a, n) = " +
                           shape2(g.a.rows, g.b.rows));
  if (layout == ContiguousLayout::kOffsets)
    check_entries(where, "grouped_layout", layout_data, g.b.batch + 1,
                  "layout='offsets': num_groups + 1 = b.shape[0] + 1 offsets, the first one 0");
  else
    check_entries(where, "grouped_layout", layout_data, g.a.rows, "layout='row_index': one per row of a");

  g.device = check_cuda(w, "a", a);
  check_cuda(w, "b", b, g.device);
  check_cuda(w, "grouped_layout", layout_data, g.device);
  if (o.tensor) check_cuda(w, "d", *o.tensor, g.device);
  allocate(where, d, o, g.d, nb::make_tuple(g.a.rows, g.b.rows), alloc, g.device, config);
  g.empty = g.a.rows == 0 || g.b.rows == 0 || g.b.batch == 0;
  return g;
}

// a [num_groups, max_m, k], b [num_groups, n, k], d [num_groups, max_m, n]; masked_m: num_groups
// entries; 1 <= expected_m <= max_m.
Grouped check_masked(const std::string& where, const Tensor& a, const Tensor& b, nb::object& d,
                     const Tensor& masked_m, int64_t expected_m, const std::optional<std::string>& out_dtype,
                     const GemmConfig& config, const nb::object& alloc) {
  const char* w = where.c_str();
  check_ndim(w, "a", a, 3, "[num_groups, max_m, k] (one row buffer per expert)");
  check_ndim(w, "b", b, 3, "[num_groups, n, k] (one matrix per expert)");
  Output o = output_rank(where, d, 3, "[num_groups, max_m, n]");
  Grouped g;
  g.a = matrix_view(w, "a", a, Allowed::kBF16);
  g.b = matrix_view(w, "b", b, Allowed::kBF16);
  output_dtype(where, o, g.d, out_dtype);
  g.data = int32_vector(w, "masked_m", masked_m);

  if (g.a.cols != g.b.cols || g.a.batch != g.b.batch)
    value_error(where, "a is [num_groups=" + std::to_string(g.a.batch) + ", max_m=" + std::to_string(g.a.rows) +
                           ", k=" + std::to_string(g.a.cols) + "] but b is [num_groups=" + std::to_string(g.b.batch) +
                           ", n=" + std::to_string(g.b.rows) + ", k=" + std::to_string(g.b.cols) +
                           "]: they must agree on num_groups and k");
  if (o.tensor && (g.d.batch != g.a.batch || g.d.rows != g.a.rows || g.d.cols != g.b.rows))
    value_error(where, "d is " + shape3(g.d.batch, g.d.rows, g.d.cols) + ", expected (num_groups, max_m, n) = " +
                           shape3(g.a.batch, g.a.rows, g.b.rows));
  check_entries(where, "masked_m", masked_m, g.a.batch, "one row count per expert: a.shape[0]");
  if (expected_m < 1 || (g.a.rows > 0 && expected_m > g.a.rows))
    value_error(where, "expected_m is " + std::to_string(expected_m) + ", not in 1..max_m = " +
                           std::to_string(g.a.rows) + " (the rows per expert the plan is made for)");

  g.device = check_cuda(w, "a", a);
  check_cuda(w, "b", b, g.device);
  check_cuda(w, "masked_m", masked_m, g.device);
  if (o.tensor) check_cuda(w, "d", *o.tensor, g.device);
  allocate(where, d, o, g.d, nb::make_tuple(g.a.batch, g.a.rows, g.b.rows), alloc, g.device, config);
  g.empty = g.a.batch == 0 || g.a.rows == 0 || g.b.rows == 0;
  return g;
}

// a [m, k], b [n, k] (the groups side by side along k), d [num_groups, m, n]; k_sizes: num_groups
// entries. c, when given, must be d itself: D[g] += A_g @ B_g^T.
Grouped check_kgrouped(const std::string& where, const Tensor& a, const Tensor& b, nb::object& d,
                       const Tensor& k_sizes, const std::optional<Tensor>& c,
                       const std::optional<std::string>& out_dtype, const GemmConfig& config,
                       const nb::object& alloc, bool& accumulate) {
  const char* w = where.c_str();
  check_ndim(w, "a", a, 2, "[m, k] (the groups' columns side by side)");
  check_ndim(w, "b", b, 2, "[n, k] (the groups' columns side by side)");
  Output o = output_rank(where, d, 3, "[num_groups, m, n]");
  if (c) check_ndim(w, "c", *c, 3, "[num_groups, m, n], d itself");
  Grouped g;
  g.a = matrix_view(w, "a", a, Allowed::kBF16);
  g.b = matrix_view(w, "b", b, Allowed::kBF16);
  output_dtype(where, o, g.d, out_dtype);
  g.data = int32_vector(w, "k_sizes", k_sizes);
  MatrixView cv;
  if (c) cv = matrix_view(w, "c", *c, Allowed::kBF16OrFP32);

  if (g.a.cols != g.b.cols)
    value_error(where, "a is [m=" + std::to_string(g.a.rows) + ", k=" + std::to_string(g.a.cols) + "] but b is [n=" +
                           std::to_string(g.b.rows) + ", k=" + std::to_string(g.b.cols) + "]: they must agree on k");
  const auto groups = static_cast<int64_t>(k_sizes.shape(0));
  if (o.tensor) {
    if (g.d.rows != g.a.rows || g.d.cols != g.b.rows)
      value_error(where, "d is " + shape3(g.d.batch, g.d.rows, g.d.cols) + ", expected (num_groups, m, n) = " +
                             shape3(g.d.batch, g.a.rows, g.b.rows));
    check_entries(where, "k_sizes", k_sizes, g.d.batch, "one k size per group: d.shape[0]");
  }
  accumulate = c.has_value();
  if (c && (!o.tensor || !(cv == g.d)))
    value_error(where, std::string("c must be d itself (D[g] += A_g @ B_g^T accumulates in place) or None") +
                           (o.tensor ? "; copy c into d first" : ": pass d"));

  g.device = check_cuda(w, "a", a);
  check_cuda(w, "b", b, g.device);
  check_cuda(w, "k_sizes", k_sizes, g.device);
  if (o.tensor) check_cuda(w, "d", *o.tensor, g.device);
  allocate(where, d, o, g.d, nb::make_tuple(groups, g.a.rows, g.b.rows), alloc, g.device, config);
  g.empty = groups == 0 || g.a.rows == 0 || g.b.rows == 0;
  return g;
}

// Runs the call on *stream, or prepares it when stream is empty (the prepare_* functions).
template <class Call, class Prepare>
nb::object run(const Grouped& g, nb::object d, std::optional<uintptr_t> stream, Call call, Prepare prep) {
  if (g.empty) return d;
  {
    nb::gil_scoped_release unlocked;  // the first call of a shape compiles for seconds
    DeviceGuard device(g.device);
    if (stream)
      call(reinterpret_cast<cudaStream_t>(*stream));
    else
      prep();
  }
  return d;
}

nb::object contiguous(const Tensor& a, const Tensor& b, nb::object d, const Tensor& layout_data,
                      const std::string& layout, const std::optional<std::string>& out_dtype, const GemmConfig& config,
                      std::optional<uintptr_t> stream, const nb::object& alloc) {
  const std::string where = stream ? kContiguous : std::string("prepare_") + kContiguous;
  const ContiguousLayout kind = layout_kind(where, layout);
  const Grouped g = check_contiguous(where, a, b, d, layout_data, kind, out_dtype, config, alloc);
  const GroupedLayout l{kind, g.data};
  return run(
      g, d, stream, [&](cudaStream_t s) { gemm_mgrouped_contiguous(g.a, g.b, g.d, l, s, config); },
      [&] { prepare_mgrouped_contiguous(g.a, g.b, g.d, l, config); });
}

nb::object masked(const Tensor& a, const Tensor& b, nb::object d, const Tensor& masked_m, int64_t expected_m,
                  const std::optional<std::string>& out_dtype, const GemmConfig& config,
                  std::optional<uintptr_t> stream, const nb::object& alloc) {
  const std::string where = stream ? kMasked : std::string("prepare_") + kMasked;
  const Grouped g = check_masked(where, a, b, d, masked_m, expected_m, out_dtype, config, alloc);
  return run(
      g, d, stream, [&](cudaStream_t s) { gemm_mgrouped_masked(g.a, g.b, g.d, g.data, expected_m, s, config); },
      [&] { prepare_mgrouped_masked(g.a, g.b, g.d, g.data, expected_m, config); });
}

nb::object kgrouped(const Tensor& a, const Tensor& b, nb::object d, const Tensor& k_sizes,
                    const std::optional<Tensor>& c, const std::optional<std::string>& out_dtype,
                    const GemmConfig& config, std::optional<uintptr_t> stream, const nb::object& alloc) {
  const std::string where = stream ? kKGrouped : std::string("prepare_") + kKGrouped;
  bool accumulate = false;
  const Grouped g = check_kgrouped(where, a, b, d, k_sizes, c, out_dtype, config, alloc, accumulate);
  return run(
      g, d, stream, [&](cudaStream_t s) { gemm_kgrouped(g.a, g.b, g.d, g.data, accumulate, s, config); },
      [&] { prepare_kgrouped(g.a, g.b, g.d, g.data, accumulate, config); });
}

}  // namespace

void bind_grouped(nb::module_& m) {
  using namespace nb::literals;
  m.def(
      kContiguous,
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& layout_data, const std::string& layout,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, uintptr_t stream,
         const nb::object& alloc) { return contiguous(a, b, d, layout_data, layout, out_dtype, config, stream, alloc); },
      "a"_a, "b"_a, "d"_a.none(), "grouped_layout"_a, "layout"_a, "out_dtype"_a.none(), "config"_a, "stream"_a,
      "alloc"_a, "tilecast::gemm_mgrouped_contiguous on `stream`; returns d. Use tilecast.m_grouped_bf16_gemm_nt_contiguous.");
  m.def(
      (std::string("prepare_") + kContiguous).c_str(),
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& layout_data, const std::string& layout,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, const nb::object& alloc) {
        return contiguous(a, b, d, layout_data, layout, out_dtype, config, std::nullopt, alloc);
      },
      "a"_a, "b"_a, "d"_a.none(), "grouped_layout"_a, "layout"_a, "out_dtype"_a.none(), "config"_a, "alloc"_a,
      "tilecast::prepare_mgrouped_contiguous. Use tilecast.prepare_m_grouped_bf16_gemm_nt_contiguous.");
  m.def(
      kMasked,
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& masked_m, int64_t expected_m,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, uintptr_t stream,
         const nb::object& alloc) { return masked(a, b, d, masked_m, expected_m, out_dtype, config, stream, alloc); },
      "a"_a, "b"_a, "d"_a.none(), "masked_m"_a, "expected_m"_a, "out_dtype"_a.none(), "config"_a, "stream"_a,
      "alloc"_a, "tilecast::gemm_mgrouped_masked on `stream`; returns d. Use tilecast.m_grouped_bf16_gemm_nt_masked.");
  m.def(
      (std::string("prepare_") + kMasked).c_str(),
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& masked_m, int64_t expected_m,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, const nb::object& alloc) {
        return masked(a, b, d, masked_m, expected_m, out_dtype, config, std::nullopt, alloc);
      },
      "a"_a, "b"_a, "d"_a.none(), "masked_m"_a, "expected_m"_a, "out_dtype"_a.none(), "config"_a, "alloc"_a,
      "tilecast::prepare_mgrouped_masked. Use tilecast.prepare_m_grouped_bf16_gemm_nt_masked.");
  m.def(
      kKGrouped,
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& k_sizes, const std::optional<Tensor>& c,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, uintptr_t stream,
         const nb::object& alloc) { return kgrouped(a, b, d, k_sizes, c, out_dtype, config, stream, alloc); },
      "a"_a, "b"_a, "d"_a.none(), "k_sizes"_a, "c"_a.none(), "out_dtype"_a.none(), "config"_a, "stream"_a,
      "alloc"_a, "tilecast::gemm_kgrouped on `stream` (accumulating when c is d); returns d. Use "
      "tilecast.k_grouped_bf16_gemm_nt_contiguous.");
  m.def(
      (std::string("prepare_") + kKGrouped).c_str(),
      [](const Tensor& a, const Tensor& b, nb::object d, const Tensor& k_sizes, const std::optional<Tensor>& c,
         const std::optional<std::string>& out_dtype, const GemmConfig& config, const nb::object& alloc) {
        return kgrouped(a, b, d, k_sizes, c, out_dtype, config, std::nullopt, alloc);
      },
      "a"_a, "b"_a, "d"_a.none(), "k_sizes"_a, "c"_a.none(), "out_dtype"_a.none(), "config"_a, "alloc"_a,
      "tilecast::prepare_kgrouped. Use tilecast.prepare_k_grouped_bf16_gemm_nt_contiguous.");
}

}  // namespace tilecast::python
