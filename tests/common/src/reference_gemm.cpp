#include "tilecast_test/reference_gemm.hpp"

#include <optional>
#include <utility>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/naive_gemm.hpp"

namespace tilecast::test {
namespace {

cudaDataType_t cuda_type(DType t) { return t == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F; }

std::string dims(const MatrixView& v) {
  std::ostringstream os;
  os << dtype_name(v.dtype) << "[" << v.batch << "x" << v.rows << "x" << v.cols << ", ld "
     << v.ld() << ", batch step " << v.batch_step() << "]";
  return os.str();
}

// The column-major [rows, cols] layout that cuBLASLt sees for row-major view v: [v.cols, v.rows].
cublasLtMatrixLayout_t make_layout(const MatrixView& v) {
  cublasLtMatrixLayout_t layout = nullptr;
  TC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, cuda_type(v.dtype),
                                             static_cast<uint64_t>(v.cols),
                                             static_cast<uint64_t>(v.rows), v.ld()));
  if (v.batch > 1) {
    const int32_t count = static_cast<int32_t>(v.batch);
    const int64_t step = v.batch_step();
    TC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                     &count, sizeof count));
    TC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &step, sizeof step));
  }
  return layout;
}

// The alignment cuBLASLt may assume for a view's matrices: the largest power of two (up to 256,
// its default assumption) dividing the address and, for a batch, the byte step between matrices.
uint32_t alignment_of(const void* ptr, const MatrixView& v) {
  uint64_t bits = reinterpret_cast<uintptr_t>(ptr);
  if (v.batch > 1) bits |= static_cast<uint64_t>(v.batch_step()) * dtype_size(v.dtype);
  uint32_t align = 256;
  while (align > 1 && (bits & (align - 1))) align >>= 1;
  return align;
}

}  // namespace

void validate_gemm_views(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                         const MatrixView* c, GemmLayout layout) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("reference gemm: " + why + " (A " + dims(a) + ", B " + dims(b) +
                                ", D " + dims(d) + (c ? ", C " + dims(*c) : std::string()) + ")");
  };
  if (!a.data || !b.data || !d.data || (c && !c->data)) fail("null data pointer");
  // The stored views' m, n and k (gemm_layout.cuh).
  const int64_t m = a_mn_major(layout) ? a.cols : a.rows, k_a = a_mn_major(layout) ? a.rows : a.cols;
  const int64_t n = b_mn_major(layout) ? b.cols : b.rows, k_b = b_mn_major(layout) ? b.rows : b.cols;
  if (k_a != k_b) fail(std::string("A and B differ in K (layout ") + layout_name(layout) + ")");
  if (k_a <= 0) fail("K must be positive");
  if (d.rows != m || d.cols != n) fail(std::string("D is not [m, n] (layout ") + layout_name(layout) + ")");
  if (a.batch != d.batch || b.batch != d.batch) fail("batch counts differ");
  if (c && (c->rows != d.rows || c->cols != d.cols || c->batch != d.batch)) fail("C's shape is not D's");
  for (const MatrixView* v : {&a, &b, &d, c})
    if (v && (v->ld() < v->cols || (v->batch > 1 && v->batch_step() < v->rows * v->ld())))
      fail("a leading dimension < cols, or overlapping batches");
}

// ---------------------------------------------------------------------------------------------

CublasLt::CublasLt(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  TC_CUBLAS_CHECK(cublasLtCreate(&h));
  handle_ = h;
  if (workspace_bytes_) {
    const cudaError_t err = cudaMalloc(&workspace_, workspace_bytes_);
    if (err != cudaSuccess) {
      cublasLtDestroy(h);
      throw_cuda_error(err, "cudaMalloc(cuBLASLt workspace)", __FILE__, __LINE__);
    }
  }
}

CublasLt::~CublasLt() {
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

std::string CublasLt::version() {
  return "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " (cudart " +
         std::to_string(cublasLtGetCudartVersion()) + ")";
}

// ---------------------------------------------------------------------------------------------

struct LtMatmul::Impl {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t lay_a = nullptr, lay_b = nullptr, lay_c = nullptr, lay_d = nullptr;
  MatrixView view_a, view_b, view_c, view_d;  // as planned, for alignment checks in run()
  uint32_t align_a = 0, align_b = 0, align_c = 0, align_d = 0;  // our A, B, C, D
  cublasLtMatmulAlgo_t algo{};
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void* d = nullptr;
  bool has_c = false;
  float alpha = 1.0f, beta = 0.0f;

  ~Impl() {
    if (lay_d) cublasLtMatrixLayoutDestroy(lay_d);
    if (lay_c) cublasLtMatrixLayoutDestroy(lay_c);
    if (lay_b) cublasLtMatrixLayoutDestroy(lay_b);
    if (lay_a) cublasLtMatrixLayoutDestroy(lay_a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

LtMatmul::LtMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                   const MatrixView* c, const LtEpilogue& epilogue, GemmLayout layout, int algo_rank)
    : impl_(std::make_unique<Impl>()) {
  if (algo_rank < 0) throw std::invalid_argument("LtMatmul: algo_rank must be >= 0");
  validate_gemm_views(a, b, d, c, layout);
  if (a.dtype != b.dtype)
    throw std::invalid_argument("cuBLASLt reference: A and B must have the same dtype");
  if (c && c->dtype != d.dtype)
    throw std::invalid_argument("cuBLASLt reference: C must have D's dtype");
  Impl& p = *impl_;
  p.handle = static_cast<cublasLtHandle_t>(lt.handle());
  p.workspace = lt.workspace();
  p.workspace_bytes = lt.workspace_bytes();
  p.a = a.data;
  p.b = b.data;
  p.d = d.data;
  p.c = c ? c->data : d.data;
  p.has_c = c != nullptr;
  p.alpha = epilogue.alpha;
  p.beta = c ? epilogue.beta : 0.0f;
  p.view_a = a;
  p.view_b = b;
  p.view_d = d;
  p.view_c = c ? *c : d;
  p.align_a = alignment_of(a.data, a);
  p.align_b = alignment_of(b.data, b);
  p.align_c = alignment_of(p.c, p.view_c);
  p.align_d = alignment_of(d.data, d);

  // FP32 accumulation and FP32 alpha/beta, whatever the storage types.
  TC_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // cuBLAS's A is our B, transposed where B is K-major; cuBLAS's B is our A as stored where A is
  // K-major, transposed where it is M-major (see the header).
  const cublasOperation_t trans_a = b_mn_major(layout) ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t trans_b = a_mn_major(layout) ? CUBLAS_OP_T : CUBLAS_OP_N;
  TC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                 sizeof trans_a));
  TC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                 sizeof trans_b));
  if (epilogue.bias.data) {
    if (epilogue.bias.length != d.cols) throw std::invalid_argument("cuBLASLt reference: bias length is not D's columns");
    const cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bias_type = cuda_type(epilogue.bias.dtype);
    const void* bias = epilogue.bias.data;
    TC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind, sizeof kind));
    TC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    TC_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  p.lay_a = make_layout(b);  // NT: column-major [k, n], ld_b; op T gives [n, k]
  p.lay_b = make_layout(a);  // NT: column-major [k, m], ld_a
  p.lay_d = make_layout(d);  // [n, m], ld_d
  // Without C, beta is 0 and C aliases D with D's layout (cuBLASLt's in-place form).
  p.lay_c = make_layout(c ? *c : d);

  cublasLtMatmulPreference_t pref = nullptr;
  TC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = p.workspace_bytes;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(algo_rank) + 1);
  int found = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  // Only algorithms that work at the buffers' real alignment (cuBLASLt assumes 256 bytes unless
  // told): sub-views such as an expert's rows often start on 16 bytes only. cuBLAS's A is our B.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.align_d}};
  for (const auto& [attr, value] : aligns)
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof value);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(p.handle, p.op, p.lay_a, p.lay_b, p.lay_c, p.lay_d, pref,
                                        static_cast<int>(results.size()), results.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw_cublas_error(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  if (found <= algo_rank || results[static_cast<size_t>(algo_rank)].state != CUBLAS_STATUS_SUCCESS)
    throw CudaError("cuBLASLt has " + std::to_string(found) + " algorithm(s), none of rank " +
                    std::to_string(algo_rank) + ", for D " + dims(d) + " = A " + dims(a) + " * B " +
                    dims(b) + "^T" + (c ? " + C" : ""));
  p.algo = results[static_cast<size_t>(algo_rank)].algo;
}

LtMatmul::~LtMatmul() = default;
LtMatmul::LtMatmul(LtMatmul&&) noexcept = default;
LtMatmul& LtMatmul::operator=(LtMatmul&&) noexcept = default;

void LtMatmul::run(cudaStream_t stream) const { run(stream, impl_->a, impl_->b, impl_->d, impl_->c); }

void LtMatmul::run(cudaStream_t stream, const void* a, const void* b, void* d, const void* c) const {
  const Impl& p = *impl_;
  const float alpha = p.alpha, beta = p.beta;
  const void* c_ptr = p.has_c ? c : d;
  if (alignment_of(a, p.view_a) < p.align_a || alignment_of(b, p.view_b) < p.align_b ||
      alignment_of(c_ptr, p.view_c) < p.align_c || alignment_of(d, p.view_d) < p.align_d)
    throw std::invalid_argument("LtMatmul::run: a buffer is less aligned than the one planned for");
  TC_CUBLAS_CHECK(cublasLtMatmul(p.handle, p.op, &alpha, /*A=*/b, p.lay_a, /*B=*/a, p.lay_b, &beta,
                                 c_ptr, p.lay_c, d, p.lay_d, &p.algo, p.workspace,
                                 p.workspace_bytes, stream));
}

std::string LtMatmul::algo_summary() const {
  const cublasLtMatmulAlgo_t& algo = impl_->algo;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto zero) {
    decltype(zero) v = zero;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) !=
        CUBLAS_STATUS_SUCCESS)
      return std::string("?");
    return std::to_string(v);
  };
  return "algo " + get(CUBLASLT_ALGO_CONFIG_ID, int32_t{0}) +
         " tile " + get(CUBLASLT_ALGO_CONFIG_TILE_ID, uint32_t{0}) +
         " stages " + get(CUBLASLT_ALGO_CONFIG_STAGES_ID, uint32_t{0}) +
         " splitk " + get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32_t{0}) +
         " cluster " + get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, uint16_t{0});
}

void reference_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                    cudaStream_t stream, const MatrixView* c, const LtEpilogue& epilogue, GemmLayout layout) {
  LtMatmul(lt, a, b, d, c, epilogue, layout).run(stream);
}

// ---------------------------------------------------------------------------------------------

std::vector<GroupSpan> spans_from_offsets(std::span<const int64_t> offsets) {
  std::vector<GroupSpan> spans;
  for (size_t g = 0; g + 1 < offsets.size(); ++g) {
    if (offsets[g + 1] < offsets[g]) throw std::invalid_argument("spans_from_offsets: decreasing");
    spans.push_back({offsets[g], offsets[g + 1], static_cast<int64_t>(g)});
  }
  return spans;
}

std::vector<GroupSpan> spans_from_masked(std::span<const int64_t> valid_rows, int64_t max_m) {
  std::vector<GroupSpan> spans;
  for (size_t g = 0; g < valid_rows.size(); ++g) {
    if (valid_rows[g] < 0 || valid_rows[g] > max_m)
      throw std::invalid_argument("spans_from_masked: valid rows out of [0, max_m]");
    const int64_t base = static_cast<int64_t>(g) * max_m;
    spans.push_back({base, base + valid_rows[g], static_cast<int64_t>(g)});
  }
  return spans;
}

std::vector<GroupSpan> spans_from_row_index(std::span<const int32_t> expert_of_row) {
  std::vector<GroupSpan> spans;
  const int64_t rows = static_cast<int64_t>(expert_of_row.size());
  for (int64_t r = 0; r < rows;) {
    const int32_t g = expert_of_row[r];
    int64_t end = r + 1;
    while (end < rows && expert_of_row[end] == g) ++end;
    if (g >= 0) spans.push_back({r, end, g});
    r = end;
  }
  return spans;
}

LtGroupedMatmul::LtGroupedMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b,
                                 const MatrixView& d, std::span<const GroupSpan> spans,
                                 const MatrixView* c) {
  const MatrixView fa = flatten_batches(a), fd = flatten_batches(d);
  std::optional<MatrixView> fc;
  if (c) fc = flatten_batches(*c);
  if (fa.rows != fd.rows || (fc && fc->rows != fd.rows))
    throw std::invalid_argument("grouped reference: A, D (and C) must have the same rows");
  for (const GroupSpan& s : spans) {
    if (s.row_begin < 0 || s.row_end < s.row_begin || s.row_end > fd.rows || s.group < 0 ||
        s.group >= b.batch)
      throw std::invalid_argument("grouped reference: span out of range (rows [" +
                                  std::to_string(s.row_begin) + ", " + std::to_string(s.row_end) +
                                  "), group " + std::to_string(s.group) + ")");
    if (s.row_end == s.row_begin) continue;
    const MatrixView sub_c = fc ? rows_of(*fc, s.row_begin, s.row_end) : MatrixView{};
    matmuls_.emplace_back(lt, rows_of(fa, s.row_begin, s.row_end), batch_of(b, s.group),
                          rows_of(fd, s.row_begin, s.row_end), fc ? &sub_c : nullptr);
  }
}

void LtGroupedMatmul::run(cudaStream_t stream) const {
  for (const LtMatmul& mm : matmuls_) mm.run(stream);
}

LtKGroupedMatmul::LtKGroupedMatmul(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                                   std::span<const int64_t> k_sizes, bool accumulate) {
  if (static_cast<int64_t>(k_sizes.size()) != d.batch)
    throw std::invalid_argument("k-grouped reference: one K per batch of D");
  if (a.batch != 1 || b.batch != 1) throw std::invalid_argument("k-grouped reference: A and B are single matrices");
  int64_t k_base = 0;
  for (size_t g = 0; g < k_sizes.size(); ++g) {
    const int64_t kg = k_sizes[g];
    if (kg < 0 || k_base + kg > a.cols || a.cols != b.cols)
      throw std::invalid_argument("k-grouped reference: group " + std::to_string(g) + " passes K");
    const MatrixView dg = batch_of(d, static_cast<int64_t>(g));
    if (kg == 0) {
      if (!accumulate) zeroed_.push_back(dg);
      continue;
    }
    // Group g's columns: the same rows, starting k_base elements in.
    const auto columns = [&](const MatrixView& v) {
      MatrixView s = v;
      s.data = static_cast<char*>(v.data) + static_cast<size_t>(k_base) * dtype_size(v.dtype);
      s.cols = kg;
      s.row_stride = v.ld();
      return s;
    };
    try {
      matmuls_.emplace_back(lt, columns(a), columns(b), dg, accumulate ? &dg : nullptr);
    } catch (const CudaError&) {
      naive_.push_back({columns(a), columns(b), dg, accumulate});  // no algorithm at this alignment
    }
    k_base += kg;
  }
}

void LtKGroupedMatmul::run(cudaStream_t stream) const {
  for (const MatrixView& z : zeroed_)
    TC_CUDA_CHECK(cudaMemset2DAsync(z.data, static_cast<size_t>(z.ld()) * dtype_size(z.dtype), 0,
                                    static_cast<size_t>(z.cols) * dtype_size(z.dtype), static_cast<size_t>(z.rows),
                                    stream));
  for (const LtMatmul& mm : matmuls_) mm.run(stream);
  for (const NaiveGroup& g : naive_) naive_gemm(g.a, g.b, g.d, stream, g.accumulate ? &g.d : nullptr);
}

void reference_kgrouped_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b, const MatrixView& d,
                             std::span<const int64_t> k_sizes, bool accumulate, cudaStream_t stream) {
  LtKGroupedMatmul(lt, a, b, d, k_sizes, accumulate).run(stream);
}

void reference_grouped_gemm(CublasLt& lt, const MatrixView& a, const MatrixView& b,
                            const MatrixView& d, std::span<const GroupSpan> spans,
                            cudaStream_t stream, const MatrixView* c) {
  LtGroupedMatmul(lt, a, b, d, spans, c).run(stream);
}

}  // namespace tilecast::test
