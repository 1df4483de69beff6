#include "api/validate.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "api/view_overlap.hpp"
#include "driver/driver.hpp"
#include "tilecast/device/ptx/wgmma_widths.cuh"

namespace tilecast::api {
namespace {

using u128 = unsigned __int128;

// TMA coordinates are signed 32-bit and its extents at most 2^32; keep every size well inside.
constexpr int64_t kMaxExtent = int64_t{1} << 31;
// cuTensorMapEncodeTiled refuses global strides of 2^40 bytes or more.
constexpr uint64_t kMaxTmaStrideBytes = uint64_t{1} << 40;
// TMA's alignment of a tensor's base address and of its strides.
constexpr uint64_t kTmaAlignment = 16;
// The smallest output tile any plan uses: block_m 64 (the planner's smaller block) by the
// narrowest WGMMA width. The tile scheduler numbers tiles (and units of them) in 32 bits.
constexpr uint64_t kSmallestTileRows = 64;
constexpr uint64_t kSmallestTileCols = kWgmmaBF16Widths[0];
constexpr u128 kMaxTiles = u128{1} << 32;

std::string dims(const MatrixView& v) {
  return std::to_string(v.batch) + "x" + std::to_string(v.rows) + "x" + std::to_string(v.cols);
}

// std::to_string has no 128-bit overload; sizes and spans are summed in 128 bits so none wraps.
std::string decimal(u128 x) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
    x /= 10;
  } while (x);
  return s;
}

bool valid_dtype(DType t) { return t == DType::kBF16 || t == DType::kFP32; }

// A DType cast from a bad integer would otherwise pass as fp32 (dtype_size and dtype_name treat
// anything but bf16 so).
void check_dtype(const std::string& n, DType t) {
  if (!valid_dtype(t))
    throw Error(n + ": dtype " + std::to_string(static_cast<unsigned>(t)) +
                " is not a tilecast::DType (kBF16 = 0, kFP32 = 1)");
}

// What a view must satisfy even in a call with nothing to do.
void check_sizes(const std::string& n, const MatrixView& v) {
  check_dtype(n, v.dtype);
  if (v.rows < 0 || v.cols < 0 || v.batch < 0)
    throw Error(n + " has a negative size (" + dims(v) + "): sizes are at least 0");
  if (v.rows >= kMaxExtent || v.cols >= kMaxExtent || v.batch >= kMaxExtent)
    throw Error(n + " (" + dims(v) + ") has a size of 2^31 or more (TMA coordinates are signed 32-bit)");
}

// Bytes from a view's base to one past its last element; wide, so that no size or stride wraps it.
u128 span_bytes(const MatrixView& v) {
  const u128 elem = dtype_size(v.dtype);
  return ((static_cast<u128>(v.batch) - 1) * static_cast<u128>(v.batch_step()) +
          (static_cast<u128>(v.rows) - 1) * static_cast<u128>(v.ld()) + static_cast<u128>(v.cols)) *
         elem;
}

// Where the query knows the allocation, no byte of [first, first + bytes) may lie outside it: the
// TMA would fault on it (or read and write a neighbour's memory) after the launch.
void check_within_allocation(const std::string& n, uintptr_t first, u128 bytes, const PointerFacts& f) {
  if (f.alloc_bytes == 0) return;
  const u128 alloc_end = static_cast<u128>(f.alloc_base) + f.alloc_bytes;
  if (first < f.alloc_base || first + bytes > alloc_end)
    throw Error(n + " reaches past its allocation: it spans " + decimal(bytes) + " bytes from its base, but its allocation (" +
                std::to_string(f.alloc_bytes) + " bytes) ends " + decimal(alloc_end - first) + " bytes after the base");
}

// The pointer facts every operand needs: device memory of the current device.
PointerFacts check_device_memory(const std::string& n, const void* p, PointerQuery where_is, const char* why = "") {
  const PointerFacts f = where_is(p);
  if (!f.device_memory)
    throw Error(n + " is not in device memory (a host pointer, or one CUDA does not know)" + why);
  if (f.device != f.current_device)
    throw Error(n + " is on device " + std::to_string(f.device) + ", but the call runs on device " +
                std::to_string(f.current_device) + " (the current one): cudaSetDevice to the tensor's device first");
  return f;
}

// The rest of a view's rules, for a view the call reads or writes.
void check_view(const std::string& n, const MatrixView& v, PointerQuery where_is) {
  if (v.data == nullptr) throw Error(n + " is null");
  if (v.rows == 0 || v.cols == 0 || v.batch == 0)
    throw Error(n + " is empty (" + dims(v) + "): every size must be at least 1");
  const int64_t elem = static_cast<int64_t>(dtype_size(v.dtype));
  if (v.row_stride < 0) throw Error(n + ": row stride " + std::to_string(v.row_stride) + " is negative");
  if (v.row_stride != 0 && v.row_stride < v.cols)
    throw Error(n + ": row stride " + std::to_string(v.row_stride) + " is smaller than its " + std::to_string(v.cols) +
                " columns");
  const u128 row_bytes = static_cast<u128>(v.ld()) * static_cast<u128>(elem);
  if (row_bytes % kTmaAlignment != 0)
    throw Error(n + ": row stride of " + std::to_string(v.ld()) + " elements is " + decimal(row_bytes) +
                " bytes, not a multiple of 16 (TMA needs 16-byte aligned strides; pad the rows)");
  if (row_bytes >= kMaxTmaStrideBytes)
    throw Error(n + ": row stride of " + decimal(row_bytes) + " bytes is 2^40 or more (TMA's largest stride)");
  if (reinterpret_cast<uintptr_t>(v.data) % kTmaAlignment != 0)
    throw Error(n + ": base address is not 16-byte aligned");
  if (v.batch > 1) {
    if (v.batch_stride < 0) throw Error(n + ": batch stride " + std::to_string(v.batch_stride) + " is negative");
    if (v.batch_stride != 0 && v.batch_stride < v.rows * v.ld())
      throw Error(n + ": batch stride " + std::to_string(v.batch_stride) + " is smaller than one matrix (" +
                  std::to_string(v.rows * v.ld()) + " elements): batches would overlap");
    const u128 batch_bytes = static_cast<u128>(v.batch_step()) * static_cast<u128>(elem);
    if (batch_bytes % kTmaAlignment != 0) throw Error(n + ": batch stride is not a multiple of 16 bytes");
    if (batch_bytes >= kMaxTmaStrideBytes)
      throw Error(n + ": batch stride of " + decimal(batch_bytes) + " bytes is 2^40 or more (TMA's largest stride)");
  }
  const uintptr_t first = reinterpret_cast<uintptr_t>(v.data);
  const u128 bytes = span_bytes(v);
  if (first + bytes > static_cast<u128>(UINT64_MAX))
    throw Error(n + " spans " + decimal(bytes) + " bytes from its base: its end is past the 64-bit address space");
  const PointerFacts f = check_device_memory(n, v.data, where_is);
  check_within_allocation(n, first, bytes, f);
}

bool overlap(const MatrixView& x, const MatrixView& y) { return api::overlap(bytes_of(x), bytes_of(y)); }

// Whether two views of one shape and dtype name the same elements: a stride matters only where
// its count is above 1 (a single matrix's batch stride, or a single row's stride, may be anything).
bool same_elements(const MatrixView& x, const MatrixView& y) {
  return x.data == y.data && (x.rows == 1 || x.ld() == y.ld()) && (x.batch == 1 || x.batch_step() == y.batch_step());
}

void check_tile_count(const std::string& n, const MatrixView& d) {
  const auto ceil_div = [](u128 a, u128 b) { return (a + b - 1) / b; };
  const u128 tiles = ceil_div(static_cast<u128>(d.rows), kSmallestTileRows) *
                     ceil_div(static_cast<u128>(d.cols), kSmallestTileCols) * static_cast<u128>(d.batch);
  if (tiles >= kMaxTiles)
    throw Error(n + " (" + dims(d) + ") has " + decimal(tiles) + " tiles of " + std::to_string(kSmallestTileRows) + "x" +
                std::to_string(kSmallestTileCols) + ", 2^32 or more: the tile scheduler numbers them in 32 bits");
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
  const PointerFacts f = check_device_memory(n, p, where_is, " (the kernel reads it; the host never does)");
  const uint64_t bytes = static_cast<uint64_t>(arr.entries) * sizeof(int32_t);
  const uint64_t first = reinterpret_cast<uintptr_t>(p);
  if (f.alloc_bytes != 0 && f.alloc_base + f.alloc_bytes < first + bytes)
    throw Error(n + " needs " + std::to_string(arr.entries) + " int32 (" + std::to_string(bytes) +
                " bytes), but its allocation ends " + std::to_string(f.alloc_base + f.alloc_bytes - first) +
                " bytes after it");
  if (api::overlap(bytes_of(p, bytes), bytes_of(x.d)))
    throw Error(n + " overlaps D, which the kernel writes while it reads them");
}

// Where a view's rows start, for the cost model (GemmDesc::a_row_alignment).
uint8_t rows_alignment(const MatrixView& v) {
  const uint64_t elem = dtype_size(v.dtype);
  return plan::row_alignment(reinterpret_cast<uintptr_t>(v.data), static_cast<uint64_t>(v.ld()) * elem,
                             v.batch > 1 ? static_cast<uint64_t>(v.batch_step()) * elem : 0);
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
  check_sizes(form + ": A", a);
  check_sizes(form + ": B", b);
  check_sizes(form + ": D", d);
  if (g.type == GemmType::kMGroupedContiguous && g.layout != ContiguousLayout::kOffsets &&
      g.layout != ContiguousLayout::kRowIndex)
    fail("layout.kind " + std::to_string(static_cast<uint32_t>(g.layout)) + " is neither kOffsets nor kRowIndex");
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
      must(a.rows == 0 || (g.expected_m >= 1 && g.expected_m <= a.rows),
           "expected_m " + std::to_string(g.expected_m) + " is not in 1..max_m = " + std::to_string(a.rows));
      break;
    default:  // k-grouped
      must(a.batch == 1 && b.batch == 1, "A and B hold every group's columns side by side: their batch must be 1 (A " +
                                             std::to_string(a.batch) + ", B " + std::to_string(b.batch) + ")");
      must(d.rows == a.rows, "D has " + std::to_string(d.rows) + " rows, expected m = rows of A = " + std::to_string(a.rows));
      must(!x.has_c || (x.c == d), "accumulating reads D itself, no other C");
      break;
  }
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
  // No rows (no token routed this step), no columns or no group: D has no element to write, as
  // for cuBLAS's grouped GEMM with a group count of 0.
  if (nothing_to_do(desc)) return desc;
  if (a.cols == 0)
    fail(std::string("k is 0 (A is ") + dims(a) + "): every product would be empty; give A and B at least one column");
  check_tile_count(form + ": D", d);
  check_view(form + ": A", a, where_is);
  check_view(form + ": B", b, where_is);
  check_view(form + ": D", d, where_is);
  if (overlap(d, a) || overlap(d, b)) fail("D overlaps A or B in memory");
  check_group_array(form, x, where_is);
  desc.problem.group_data = g.data;  // for the kernel's parameters; the planner never reads it
  desc.a_row_alignment = rows_alignment(a);
  desc.b_row_alignment = rows_alignment(b);
  return desc;
}

plan::GemmDesc validate_call(const CallArgs& x, PointerQuery where_is) {
  plan::check_overrides(x.config);
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

bool nothing_to_do(const plan::GemmDesc& desc) {
  const GemmProblem& p = desc.problem;
  return p.m == 0 || p.n == 0 || p.num_groups == 0;
}

bool epilogue_only(const plan::GemmDesc& desc) { return !nothing_to_do(desc) && desc.problem.k == 0; }

plan::GemmDesc validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GemmEpilogue& epilogue, PointerQuery where_is, GemmLayout layout) {
  const MatrixView* c = epilogue.c;
  const VectorView& bias = epilogue.bias;
  if (!is_gemm_layout(layout))
    throw Error("layout " + std::to_string(static_cast<unsigned>(layout)) + " is not one of NT, NN, TN, TT");
  check_sizes("A", a);
  check_sizes("B", b);
  check_sizes("D", d);
  if (c) check_sizes("C", *c);
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
  if (c) {
    if (c->dtype != d.dtype)
      throw Error(std::string("C is ") + dtype_name(c->dtype) + " but D is " + dtype_name(d.dtype) +
                  ": C must have D's dtype");
    if (c->rows != d.rows || c->cols != d.cols || c->batch != d.batch)
      throw Error("C is " + dims(*c) + ", D is " + dims(d) + ": they must match");
  } else if (epilogue.beta != 1.0f) {
    throw Error("beta is " + std::to_string(epilogue.beta) + " but there is no C: beta scales C (give C, or leave beta at 1)");
  }
  if (bias.data) {
    if (!valid_dtype(bias.dtype))
      throw Error("bias must be bf16 or fp32, not dtype " + std::to_string(static_cast<unsigned>(bias.dtype)));
    if (bias.length != d.cols)
      throw Error("bias has " + std::to_string(bias.length) + " elements but D has " + std::to_string(d.cols) +
                  " columns: one per column");
  } else if (bias.length != 0) {
    throw Error("bias has " + std::to_string(bias.length) + " elements but no data pointer");
  }
  plan::GemmDesc desc =
      plan::dense_desc(op_a.mn, op_b.mn, op_a.k, a.batch, d.dtype, c != nullptr && epilogue.beta != 0.0f, layout);
  desc.has_bias = bias.data != nullptr;
  desc.bias_type = desc.has_bias ? bias.dtype : DType::kFP32;
  // m = 0, n = 0 or no batch: cuBLAS returns without touching anything, and so does the call.
  if (nothing_to_do(desc)) return desc;
  // k = 0: A * B^T is an empty sum, so A and B are never read (cuBLAS allows them null), and
  // D = beta * C + bias (epilogue_only).
  const bool reads_ab = op_a.k != 0;
  check_tile_count("D", d);
  if (reads_ab) {
    check_view("A", a, where_is);
    check_view("B", b, where_is);
  }
  check_view("D", d, where_is);
  if (reads_ab && (overlap(d, a) || overlap(d, b))) throw Error("D overlaps A or B in memory");
  if (reads_ab) {
    desc.a_row_alignment = rows_alignment(a);
    desc.b_row_alignment = rows_alignment(b);
  }
  if (c) {
    check_view("C", *c, where_is);
    // D = D + A * B^T is fine (each element of C is read before the same element of D is
    // written); any other overlap of C and D is not.
    if (!same_elements(*c, d) && overlap(*c, d)) throw Error("C overlaps D without being D itself");
  }
  if (bias.data) {
    if (reinterpret_cast<uintptr_t>(bias.data) % kTmaAlignment != 0)
      throw Error("bias: base address is not 16-byte aligned (TMA)");
    const PointerFacts f = check_device_memory("bias", bias.data, where_is);
    const uint64_t bytes = static_cast<uint64_t>(bias.length) * dtype_size(bias.dtype);
    check_within_allocation("bias", reinterpret_cast<uintptr_t>(bias.data), bytes, f);
    if (api::overlap(bytes_of(bias.data, bytes), bytes_of(d))) throw Error("bias overlaps D in memory");
  }
  return desc;
}

void check_stream(cudaStream_t stream, int current_device, StreamQuery device_of) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return;
  const int device = device_of(stream);
  if (device >= 0 && device != current_device)
    throw Error("stream belongs to device " + std::to_string(device) + ", but the call runs on device " +
                std::to_string(current_device) + " (the current one): cudaSetDevice to the stream's device first");
}

PointerFacts query_pointer(const void* p) {
  PointerFacts f;
  cudaGetDevice(&f.current_device);
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer leaves a sticky-free error: clear it
    return f;
  }
  f.device_memory = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
  // Managed memory migrates to whichever device touches it.
  f.device = attr.type == cudaMemoryTypeManaged ? f.current_device : attr.device;
  if (f.device_memory && f.device == f.current_device) {
    // The allocation holding p (for a caching allocator's block, its whole segment: a bound, never
    // a false refusal). Unknown when the driver cannot say.
    try {
      const Driver& drv = Driver::get();
      CUdeviceptr base = 0;
      size_t size = 0;
      const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(p);
      // NOTES: for virtual memory (cuMemCreate + cuMemMap: PyTorch's expandable segments, comm's
      // heap) the range is the one physical chunk holding p, while a tensor may span several
      // chunks mapped side by side; such memory stays unknown rather than falsely refused. Only
      // cudaMalloc's memory is legacy-IPC capable, which the driver answers without an error for
      // any device pointer (asking for p's allocation handle instead fails for cudaMalloc's
      // memory, and compute-sanitizer reports every such failed call as an error).
      int legacy_ipc = 0;
      const bool from_cuda_malloc =
          drv.cuPointerGetAttribute(&legacy_ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, at) == CUDA_SUCCESS &&
          legacy_ipc != 0;
      if (from_cuda_malloc && drv.cuMemGetAddressRange(&base, &size, at) == CUDA_SUCCESS && at >= base &&
          at < base + size) {
        f.alloc_base = base;
        f.alloc_bytes = size;
      }
    } catch (const Error&) {
    }
  }
  return f;
}

int query_stream_device(cudaStream_t stream) {
  int device = -1;
  const cudaError_t e = cudaStreamGetDevice(stream, &device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error(std::string("stream: cudaStreamGetDevice failed: ") + cudaGetErrorString(e) +
                " (a destroyed stream, or not a stream)");
  }
  return device;
}

}  // namespace tilecast::api
