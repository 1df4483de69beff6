#include "cublas_grouped.hpp"

#include <cublas_v2.h>

#include <vector>

#include "tilecast_test/cuda_check.hpp"

namespace tilecast::bench {
namespace {

cudaDataType_t cuda_type(DType t) { return t == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F; }

const char* at(const MatrixView& v, int64_t batch, int64_t row, int64_t col) {
  return static_cast<const char*>(v.data) +
         static_cast<size_t>(batch * v.batch_step() + row * v.ld() + col) * dtype_size(v.dtype);
}

}  // namespace

struct CublasGroupedBatched::Impl {
  cublasHandle_t handle = nullptr;
  std::vector<cublasOperation_t> trans_a, trans_b;
  std::vector<int> m, n, k, lda, ldb, ldc, group_size;
  std::vector<float> alpha, beta;
  test::DeviceBuffer pointers;  // A, B, C pointer arrays, one entry per problem each
  DType a_type = DType::kBF16, c_type = DType::kBF16;
  int count = 0;

  ~Impl() {
    if (handle) cublasDestroy(handle);
  }

  // One problem: our rows x n result over k, A rows from `a`, B from `b`, D rows at `d`.
  void add(const void* a, int64_t lda_, const void* b, int64_t ldb_, const void* d, int64_t ldd, int64_t rows, int64_t cols,
           int64_t depth, float beta_, std::vector<const void*>& as, std::vector<const void*>& bs,
           std::vector<const void*>& ds) {
    trans_a.push_back(CUBLAS_OP_T);
    trans_b.push_back(CUBLAS_OP_N);
    m.push_back(static_cast<int>(cols));
    n.push_back(static_cast<int>(rows));
    k.push_back(static_cast<int>(depth));
    lda.push_back(static_cast<int>(ldb_));  // cuBLAS's A is our B
    ldb.push_back(static_cast<int>(lda_));
    ldc.push_back(static_cast<int>(ldd));
    alpha.push_back(1.0f);
    beta.push_back(beta_);
    group_size.push_back(1);
    as.push_back(b);
    bs.push_back(a);
    ds.push_back(d);
    ++count;
  }
};

CublasGroupedBatched::CublasGroupedBatched(const BenchProblem& p, Workload& w) : impl_(std::make_unique<Impl>()) {
  Impl& x = *impl_;
  TC_CUBLAS_CHECK(cublasCreate(&x.handle));
  x.a_type = DType::kBF16;
  x.c_type = p.out;
  const MatrixView &a = w.a.view, &b = w.b.view, &d = w.d_cublas.view;
  std::vector<const void*> as, bs, ds;
  if (p.kind == Kind::kKGrouped) {
    int64_t base = 0;
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t kg = p.group_k[static_cast<size_t>(g)];
      if (kg > 0)
        x.add(at(a, 0, 0, base), a.ld(), at(b, 0, 0, base), b.ld(), at(d, g, 0, 0), d.ld(), p.m, p.n, kg,
              p.with_c ? 1.0f : 0.0f, as, bs, ds);
      base += kg;
    }
  } else {
    // m-grouped and masked: the experts' row spans of A and D (flattened for masked), B per expert.
    const MatrixView fa = test::flatten_batches(a), fd = test::flatten_batches(d);
    for (const test::GroupSpan& s : w.spans)
      if (s.row_end > s.row_begin)
        x.add(at(fa, 0, s.row_begin, 0), fa.ld(), at(b, s.group, 0, 0), b.ld(), at(fd, 0, s.row_begin, 0), fd.ld(),
              s.row_end - s.row_begin, p.n, p.k, 0.0f, as, bs, ds);
  }
  std::vector<const void*> all(as);
  all.insert(all.end(), bs.begin(), bs.end());
  all.insert(all.end(), ds.begin(), ds.end());
  x.pointers = test::DeviceBuffer(all.size() * sizeof(void*));
  if (!all.empty()) TC_CUDA_CHECK(cudaMemcpy(x.pointers.get(), all.data(), x.pointers.bytes(), cudaMemcpyHostToDevice));
}

CublasGroupedBatched::~CublasGroupedBatched() = default;

size_t CublasGroupedBatched::problems() const { return static_cast<size_t>(impl_->count); }

void CublasGroupedBatched::run(cudaStream_t stream) const {
  const Impl& x = *impl_;
  if (x.count == 0) return;
  const auto* ptrs = static_cast<void* const*>(x.pointers.get());
  TC_CUBLAS_CHECK(cublasSetStream(x.handle, stream));
  TC_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(
      x.handle, x.trans_a.data(), x.trans_b.data(), x.m.data(), x.n.data(), x.k.data(), x.alpha.data(),
      reinterpret_cast<const void* const*>(ptrs), cuda_type(x.a_type), x.lda.data(),
      reinterpret_cast<const void* const*>(ptrs + x.count), cuda_type(x.a_type), x.ldb.data(), x.beta.data(),
      const_cast<void* const*>(ptrs + 2 * x.count), cuda_type(x.c_type), x.ldc.data(), x.count, x.group_size.data(),
      CUBLAS_COMPUTE_32F));
}

}  // namespace tilecast::bench
