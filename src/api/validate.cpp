#include "api/validate.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "driver/driver.hpp"

namespace tilecast::api {
namespace {

// TMA coordinates are signed 32-bit and its extents at most 2^32; keep every size well inside.
constexpr int64_t kMaxExtent = int64_t{1} << 31;

std::string dims(const MatrixView& v) {
  return std::to_string(v.batch) + "x" + std::to_string(v.rows) + "x" + std::to_string(v.cols);
}

void check_view(const std::string& n, const MatrixView& v, PointerQuery where_is) {
  if (v.data == nullptr) throw Error(n + " is null");
  if (v.rows <= 0 || v.cols <= 0 || v.batch <= 0)
    throw Error(n + " is empty (" + dims(v) + "): every size must be at least 1");
  if (v.rows >= kMaxExtent || v.cols >= kMaxExtent || v.batch >= kMaxExtent)
    throw Error(n + " (" + dims(v) + ") has a size of 2^31 or more");
  const int64_t elem = static_cast<int64_t>(dtype_size(v.dtype));
  if (v.row_stride != 0 && v.row_stride < v.cols)
    throw Error(n + ": row stride " + std::to_string(v.row_stride) + " is smaller than its " + std::to_string(v.cols) +
                " columns");
  if ((v.ld() * elem) % 16 != 0)
    throw Error(n + ": row stride of " + std::to_string(v.ld()) + " elements is " + std::to_string(v.ld() * elem) +
                " bytes, not a multiple of 16 (TMA needs 16-byte aligned strides; pad the rows)");
  if (reinterpret_cast<uintptr_t>(v.data) % 16 != 0) throw Error(n + ": base address is not 16-byte aligned");
  if (v.batch > 1) {
    if (v.batch_stride != 0 && v.batch_stride < v.rows * v.ld())
      throw Error(n + ": batch stride " + std::to_string(v.batch_stride) + " is smaller than one matrix (" +
                  std::to_string(v.rows * v.ld()) + " elements): batches would overlap");
    if ((v.batch_step() * elem) % 16 != 0) throw Error(n + ": batch stride is not a multiple of 16 bytes");
  }
  const PointerFacts f = where_is(v.data);
  if (!f.device_memory) throw Error(n + " is not in device memory of the current device");
}

// Byte range [first, last) that a view spans.
std::pair<uintptr_t, uintptr_t> span(const MatrixView& v) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(v.data);
  const int64_t elems = (v.batch - 1) * v.batch_step() + (v.rows - 1) * v.ld() + v.cols;
  return {first, first + static_cast<uintptr_t>(elems) * dtype_size(v.dtype)};
}

bool overlap(const MatrixView& x, const MatrixView& y) {
  const auto [a0, a1] = span(x);
  const auto [b0, b1] = span(y);
  return a0 < b1 && b0 < a1;
}

const char* layout_label(GemmLayout l) {
  static const char* const kLabels[] = {"NT", "NN", "TN", "TT"};
  return is_gemm_layout(l) ? kLabels[static_cast<unsigned>(l)] : "?";
}

// An operand of a dense GEMM as its layout reads the stored view: its M (or N) and K sizes, and
// its shape as an error names it ("A is [m=128, k=64]", or "A is [k=64, m=128]" stored MN-major).
struct Operand {
  bool mn_major = false;
  int64_t mn = 0, k = 0;
  std::string shape;
};

Operand operand(const char* name, const MatrixView& v, bool mn_major, const char* mn_letter) {
  Operand o;
  o.mn_major = mn_major;
  o.mn = mn_major ? v.cols : v.rows;
  o.k = mn_major ? v.rows : v.cols;
  const std::string mn = std::string(mn_letter) + "=" + std::to_string(o.mn), k = "k=" + std::to_string(o.k);
  o.shape = std::string(name) + " is [" + (mn_major ? k + ", " + mn : mn + ", " + k) + "]";
  return o;
}

const char* form_name(GemmType t) {
  switch (t) {
    case GemmType::kMGroupedContiguous: return "m-grouped contiguous";
    case GemmType::kMGroupedMasked: return "m-grouped masked";
    case GemmType::kKGroupedContiguous: return "k-grouped";
    default: return "gemm";
  }
}

// What the group array of a form is called in its signature, and how many int32 it holds.
struct GroupArray {
  const char* name;
  int64_t entries;
};

GroupArray group_array(const CallArgs& x) {
  const GroupArgs& g = x.group;
  switch (g.type) {
    case GemmType::kMGroupedContiguous:
      return g.layout == ContiguousLayout::kOffsets ? GroupArray{"layout.data (expert offsets)", x.b.batch + 1}
                                                    : GroupArray{"layout.data (expert of each row)", x.a.rows};
    case GemmType::kMGroupedMasked: return {"masked_m", x.a.batch};
    default: return {"k_sizes", x.d.batch};
  }
}

void check_group_array(const std::string& form, const CallArgs& x, PointerQuery where_is) {
  const GroupArray arr = group_array(x);
  const std::string n = form + ": " + arr.name;
  const void* p = x.group.data;
  if (p == nullptr) throw Error(n + " is null");
  if (reinterpret_cast<uintptr_t>(p) % alignof(int32_t) != 0) throw Error(n + " is not 4-byte aligned (int32)");
  const PointerFacts f = where_is(p);
  if (!f.device_memory)
    throw Error(n + " is not in device memory of the current device (the kernel reads it; the host never does)");
  const uint64_t bytes = static_cast<uint64_t>(arr.entries) * sizeof(int32_t);
  if (f.bytes_to_end != 0 && f.bytes_to_end < bytes)
    throw Error(n + " needs " + std::to_string(arr.entries) + " int32 (" + std::to_string(bytes) +
                " bytes), but its allocation ends " + std::to_string(f.bytes_to_end) + " bytes after it");
  const uintptr_t first = reinterpret_cast<uintptr_t>(p);
  const auto [d0, d1] = span(x.d);
  if (first < d1 && d0 < first + bytes) throw Error(n + " overlaps D, which the kernel writes while it reads them");
}

}  // namespace

plan::GemmDesc validate_grouped(const CallArgs& x, PointerQuery where_is) {
  const GroupArgs& g = x.group;
  const std::string form = form_name(g.type);
  const auto fail = [&](const std::string& what) { throw Error(form + ": " + what); };
  const MatrixView &a = x.a, &b = x.b, &d = x.d;
  if (g.type != GemmType::kMGroupedContiguous && g.type != GemmType::kMGroupedMasked &&
      g.type != GemmType::kKGroupedContiguous)
    fail("not a grouped gemm type");
  // The group count is a batch of one operand; name it before the generic empty-view check does.
  const char* counted = g.type == GemmType::kMGroupedContiguous ? "B" : g.type == GemmType::kMGroupedMasked ? "A" : "D";
  const int64_t groups = g.type == GemmType::kMGroupedContiguous ? b.batch : g.type == GemmType::kMGroupedMasked ? a.batch : d.batch;
  if (groups <= 0)
    fail(std::string(counted) + ".batch is " + std::to_string(groups) +
         ": it is the number of " + (g.type == GemmType::kKGroupedContiguous ? "groups" : "experts") +
         ", at least 1");
  if (g.type == GemmType::kMGroupedContiguous && g.layout != ContiguousLayout::kOffsets &&
      g.layout != ContiguousLayout::kRowIndex)
    fail("layout.kind " + std::to_string(static_cast<uint32_t>(g.layout)) + " is neither kOffsets nor kRowIndex");
  check_view(form + ": A", a, where_is);
  check_view(form + ": B", b, where_is);
  check_view(form + ": D", d, where_is);
  if (a.dtype != DType::kBF16) fail(std::string("A must be bf16, not ") + dtype_name(a.dtype));
  if (b.dtype != DType::kBF16) fail(std::string("B must be bf16, not ") + dtype_name(b.dtype));
  if (a.cols != b.cols)
    fail("A has k = " + std::to_string(a.cols) + " columns but B has " + std::to_string(b.cols) + ": K differs");
  if (d.cols != b.rows)
    fail("D has " + std::to_string(d.cols) + " columns, expected n = rows of B = " + std::to_string(b.rows));
  const auto must = [&](bool ok, const std::string& what) {
    if (!ok) fail(what);
  };
  switch (g.type) {
    case GemmType::kMGroupedContiguous:
      must(a.batch == 1, "A is every expert's rows in one matrix [rows, k]: batch must be 1, not " + std::to_string(a.batch));
      must(d.batch == 1, "D is every expert's rows in one matrix [rows, n]: batch must be 1, not " + std::to_string(d.batch));
      must(d.rows == a.rows, "D has " + std::to_string(d.rows) + " rows, A has " + std::to_string(a.rows) + ": they must match");
      break;
    case GemmType::kMGroupedMasked:
      must(b.batch == a.batch && d.batch == a.batch,
           "A, B and D hold one matrix per expert: batches differ (A " + std::to_string(a.batch) + ", B " +
               std::to_string(b.batch) + ", D " + std::to_string(d.batch) + ")");
      must(d.rows == a.rows, "D has " + std::to_string(d.rows) + " rows per expert, A has " + std::to_string(a.rows) +
                                 " (max_m): they must match");
      must(g.expected_m >= 1 && g.expected_m <= a.rows,
           "expected_m " + std::to_string(g.expected_m) + " is not in 1..max_m = " + std::to_string(a.rows));
      break;
    default:  // k-grouped
      must(a.batch == 1 && b.batch == 1, "A and B hold every group's columns side by side: their batch must be 1 (A " +
                                             std::to_string(a.batch) + ", B " + std::to_string(b.batch) + ")");
      must(d.rows == a.rows, "D has " + std::to_string(d.rows) + " rows, expected m = rows of A = " + std::to_string(a.rows));
      must(!x.has_c || (x.c == d), "accumulating reads D itself, no other C");
      break;
  }
  if (overlap(d, a) || overlap(d, b)) fail("D overlaps A or B in memory");
  check_group_array(form, x, where_is);
  plan::GemmDesc desc;
  switch (g.type) {
    case GemmType::kMGroupedContiguous:
      desc = plan::mgrouped_contiguous_desc(g.layout, a.rows, b.rows, a.cols, b.batch, d.dtype);
      break;
    case GemmType::kMGroupedMasked:
      desc = plan::mgrouped_masked_desc(a.rows, b.rows, a.cols, a.batch, g.expected_m, d.dtype);
      break;
    default:
      desc = plan::kgrouped_desc(a.rows, b.rows, a.cols, d.batch, d.dtype, g.accumulate);
      break;
  }
  desc.problem.group_data = g.data;  // for the kernel's parameters; the planner never reads it
  return desc;
}

plan::GemmDesc validate_call(const CallArgs& x, PointerQuery where_is) {
  if (x.group.type != GemmType::kNormal && x.layout != GemmLayout::kNT)
    throw Error(std::string(form_name(x.group.type)) + ": layout " + layout_label(x.layout) +
                " refused: the grouped GEMMs are NT only (A and B stored K-major)");
  if (x.group.type == GemmType::kNormal) {
    GemmEpilogue e;
    e.c = x.has_c ? &x.c : nullptr;
    e.alpha = x.alpha;
    e.beta = x.beta;
    e.bias = x.bias;
    return validate_gemm(x.a, x.b, x.d, e, where_is, x.layout);
  }
  // The grouped entry points give no epilogue of their own (k-grouped accumulates through C = D).
  if (x.alpha != 1.0f || x.beta != 1.0f || x.bias.data)
    throw Error(std::string(form_name(x.group.type)) + ": takes no alpha, beta or bias");
  return validate_grouped(x, where_is);
}

plan::GemmDesc validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GemmEpilogue& epilogue, PointerQuery where_is, GemmLayout layout) {
  const MatrixView* c = epilogue.c;
  if (!is_gemm_layout(layout))
    throw Error("layout " + std::to_string(static_cast<unsigned>(layout)) + " is not one of NT, NN, TN, TT");
  check_view("A", a, where_is);
  check_view("B", b, where_is);
  check_view("D", d, where_is);
  if (a.dtype != DType::kBF16) throw Error(std::string("A must be bf16, not ") + dtype_name(a.dtype));
  if (b.dtype != DType::kBF16) throw Error(std::string("B must be bf16, not ") + dtype_name(b.dtype));
  // The views are the stored matrices: the layout says which of their sizes are m, n and k.
  const Operand op_a = operand("A", a, a_mn_major(layout), "m"), op_b = operand("B", b, b_mn_major(layout), "n");
  const std::string stored_as =
      layout == GemmLayout::kNT ? "" : std::string(" (layout ") + layout_label(layout) + " stores A as " +
                                           (op_a.mn_major ? "[k, m]" : "[m, k]") + " and B as " +
                                           (op_b.mn_major ? "[k, n]" : "[n, k]") + ")";
  if (op_a.k != op_b.k) throw Error(op_a.shape + " but " + op_b.shape + ": K differs" + stored_as);
  if (d.rows != op_a.mn || d.cols != op_b.mn)
    throw Error("D is " + std::to_string(d.rows) + "x" + std::to_string(d.cols) + ", expected m x n = " +
                std::to_string(op_a.mn) + "x" + std::to_string(op_b.mn) + stored_as);
  if (a.batch != b.batch || a.batch != d.batch)
    throw Error("batch counts differ: A " + std::to_string(a.batch) + ", B " + std::to_string(b.batch) + ", D " +
                std::to_string(d.batch));
  if (overlap(d, a) || overlap(d, b)) throw Error("D overlaps A or B in memory");
  if (c) {
    check_view("C", *c, where_is);
    if (c->dtype != d.dtype)
      throw Error(std::string("C is ") + dtype_name(c->dtype) + " but D is " + dtype_name(d.dtype) +
                  ": C must have D's dtype");
    if (c->rows != d.rows || c->cols != d.cols || c->batch != d.batch)
      throw Error("C is " + dims(*c) + ", D is " + dims(d) + ": they must match");
    // D = D + A * B^T is fine (each element of C is read before the same element of D is
    // written); any other overlap of C and D is not.
    const bool same = c->data == d.data && c->ld() == d.ld() && c->batch_step() == d.batch_step();
    if (!same && overlap(*c, d)) throw Error("C overlaps D without being D itself");
  } else if (epilogue.beta != 1.0f) {
    throw Error("beta is " + std::to_string(epilogue.beta) + " but there is no C: beta scales C (give C, or leave beta at 1)");
  }
  const VectorView& bias = epilogue.bias;
  if (bias.data) {
    if (bias.dtype != DType::kBF16 && bias.dtype != DType::kFP32)
      throw Error("bias must be bf16 or fp32, not dtype " + std::to_string(static_cast<unsigned>(bias.dtype)));
    if (bias.length != d.cols)
      throw Error("bias has " + std::to_string(bias.length) + " elements but D has " + std::to_string(d.cols) +
                  " columns: one per column");
    if (reinterpret_cast<uintptr_t>(bias.data) % 16 != 0) throw Error("bias: base address is not 16-byte aligned (TMA)");
    if (!where_is(bias.data).device_memory) throw Error("bias is not in device memory of the current device");
    const uintptr_t b0 = reinterpret_cast<uintptr_t>(bias.data), b1 = b0 + bias.length * dtype_size(bias.dtype);
    const auto [d0, d1] = span(d);
    if (b0 < d1 && d0 < b1) throw Error("bias overlaps D in memory");
  } else if (bias.length != 0) {
    throw Error("bias has " + std::to_string(bias.length) + " elements but no data pointer");
  }
  plan::GemmDesc desc =
      plan::dense_desc(op_a.mn, op_b.mn, op_a.k, a.batch, d.dtype, c != nullptr && epilogue.beta != 0.0f, layout);
  desc.has_bias = bias.data != nullptr;
  desc.bias_type = desc.has_bias ? bias.dtype : DType::kFP32;
  return desc;
}

PointerFacts query_pointer(const void* p) {
  PointerFacts f;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer leaves a sticky-free error: clear it
    return f;
  }
  int current = -1;
  cudaGetDevice(&current);
  f.device = attr.device;
  f.device_memory = (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) && attr.device == current;
  if (f.device_memory) {
    // The allocation holding p (for a caching allocator's block, its whole segment: a bound, never
    // a false refusal). Unknown when the driver cannot say.
    try {
      const Driver& drv = Driver::get();
      CUdeviceptr base = 0;
      size_t size = 0;
      const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(p);
      if (drv.cuMemGetAddressRange(&base, &size, at) == CUDA_SUCCESS && at >= base && at < base + size)
        f.bytes_to_end = base + size - at;
    } catch (const Error&) {
    }
  }
  return f;
}

}  // namespace tilecast::api
