#include "cublas_odd.hpp"

#include <cstdio>
#include <string>

#include <cuda_runtime.h>

#include "tilecast_test/compare.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::bench {
namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The first rows x cols of each matrix of m (its own ld and batch step): where a copy of a
// smaller matrix goes, or the valid part of a padded output.
MatrixView corner(const MatrixView& m, int64_t rows, int64_t cols) {
  MatrixView v = m;
  v.rows = rows;
  v.cols = cols;
  return v;
}

// The roles of the extra rows (report.hpp's Row::baseline_role).
constexpr const char* kCareful = "careful";
constexpr const char* kDiagnostic = "diagnostic";

}  // namespace

// One copy of the problem's inputs at extents n x k (>= the problem's), zero beyond them, with
// rows padded to 16 bytes or tight.
struct OddSizeBaselines::Operands {
  int64_t n = 0, k = 0;
  test::DeviceMatrix a, b, c, d, bias;
  bool has_c = false, has_bias = false;

  Operands(const BenchProblem& p, int64_t n_to, int64_t k_to, bool tight) : n(n_to), k(k_to) {
    const int64_t batch = p.kind == Kind::kBatched ? p.groups : 1;
    auto make = [&](DType t, int64_t rows, int64_t cols) {
      return test::make_matrix(t, rows, cols, batch, tight ? cols : test::aligned_ld(cols, t));
    };
    a = make(DType::kBF16, p.m, k);
    b = make(DType::kBF16, n, k);
    d = make(p.out, p.m, n);
    has_c = p.with_c;
    has_bias = p.with_bias;
    if (has_c) c = make(p.out, p.m, n);
    if (has_bias) bias = test::make_matrix(p.out, 1, n, 1, test::aligned_ld(n, p.out));
  }

  // Zeros everything, then copies the workload's values into the corner they cover.
  void fill_from(const Workload& w, cudaStream_t stream) {
    for (test::DeviceMatrix* m : {&a, &b, &c, &bias})
      if (m->buffer.bytes()) TC_CUDA_CHECK(cudaMemsetAsync(m->alloc_begin(), 0, m->buffer.bytes(), stream));
    test::copy_convert(w.a.view, corner(a.view, w.a.view.rows, w.a.view.cols), stream);
    test::copy_convert(w.b.view, corner(b.view, w.b.view.rows, w.b.view.cols), stream);
    if (has_c) test::copy_convert(w.c.view, corner(c.view, w.c.view.rows, w.c.view.cols), stream);
    if (has_bias) test::copy_convert(w.bias.view, corner(bias.view, 1, w.bias.view.cols), stream);
  }

  VectorView bias_vector() const { return has_bias ? VectorView{bias.view.data, bias.view.dtype, n} : VectorView{}; }
};

struct OddSizeBaselines::Candidate {
  std::string group, role, name;
  std::shared_ptr<Operands> ops;
  std::shared_ptr<test::LtMatmul> mm;
};

OddSizeBaselines::OddSizeBaselines(test::CublasLt& lt, const BenchProblem& p, Workload& w) : problem_(p), w_(w) {
  const int64_t n8 = round_up(p.n, kOddPadElements), k8 = round_up(p.k, kOddPadElements);
  auto add = [&](const std::string& group, const char* role, int64_t n_to, int64_t k_to, bool tight, int ranks) {
    auto ops = std::make_shared<Operands>(p, n_to, k_to, tight);
    operands_.push_back(ops);
    for (int r = 0; r < ranks; ++r) {
      test::LtEpilogue e;
      e.bias = ops->bias_vector();
      std::shared_ptr<test::LtMatmul> mm;
      try {
        mm = std::make_shared<test::LtMatmul>(lt, ops->a.view, ops->b.view, ops->d.view, ops->has_c ? &ops->c.view : nullptr,
                                              e, GemmLayout::kNT, r);
      } catch (const test::CudaError&) {
        break;  // the heuristic had fewer algorithms than asked for
      }
      const std::string name = ranks > 1 ? "algo #" + std::to_string(r + 1) + " of the heuristic's" : "its first algo";
      candidates_.push_back({group, role, name, ops, mm});
    }
  };
  add("padded extents, best of " + std::to_string(kOddBestOfAlgorithms), kCareful, n8, k8, false, kOddBestOfAlgorithms);
  add("padded extents, first algo", kDiagnostic, n8, k8, false, 1);
  add("odd extents, best of " + std::to_string(kOddBestOfAlgorithms), kDiagnostic, p.n, p.k, false,
      kOddBestOfAlgorithms);
  add("odd extents, tight rows (ld = n, k)", kDiagnostic, p.n, p.k, true, 1);
  if (p.n != n8 && p.k != k8) {
    add("n padded only, first algo", kDiagnostic, n8, p.k, false, 1);
    add("k padded only, first algo", kDiagnostic, p.n, k8, false, 1);
  }
}

OddSizeBaselines::~OddSizeBaselines() = default;

std::vector<BaselineVariant> OddSizeBaselines::checked_variants(cudaStream_t stream) {
  for (const std::shared_ptr<Operands>& ops : operands_) ops->fill_from(w_, stream);
  const test::Tolerance tol = test::default_tolerance(problem_.out, DType::kFP32);
  std::vector<BaselineVariant> out;
  for (const Candidate& c : candidates_) {
    try {
      test::poison(c.ops->d, stream);
      c.mm->run(stream);
      const MatrixView valid = corner(c.ops->d.view, problem_.m, problem_.n);
      const test::CompareResult r = test::compare(valid, w_.d_check.view, stream, w_.rows_per_batch);
      if (!test::passes(r, tol)) {
        std::fprintf(stderr, "cuBLASLt %s, %s left out: its output failed the check (%s)\n", c.group.c_str(),
                     c.name.c_str(), test::failure_reason(r, tol).c_str());
        continue;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cuBLASLt %s, %s left out: %s\n", c.group.c_str(), c.name.c_str(), e.what());
      continue;
    }
    // The variant keeps its buffers alive: the OddSizeBaselines goes once they are checked.
    const std::shared_ptr<test::LtMatmul> mm = c.mm;
    const std::shared_ptr<Operands> ops = c.ops;
    out.push_back({c.name, mm->algo_summary(), [mm, ops](cudaStream_t s) { mm->run(s); }, c.group, c.role});
  }
  return out;
}

}  // namespace tilecast::bench
