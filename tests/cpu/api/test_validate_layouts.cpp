// Argument checks of the NN, TN and TT layouts (tilecast::gemm with a GemmLayout), without a GPU:
// the views are the stored matrices, so the layout decides which of their sizes are m, n and k;
// shapes that disagree with the layout are refused naming the operand, the rule and the layout,
// the 16-byte row-pitch rule holds for whichever dimension is stored in rows, and the grouped
// forms refuse any layout but NT.
#include <gtest/gtest.h>

#include <string>

#include "api/validate.hpp"

namespace tilecast::api {
namespace {

// Every pointer below 2^40 is device memory of device 0, the current one; allocation ends unknown.
PointerFacts fake_device(const void* p) {
  PointerFacts f;
  f.device_memory = reinterpret_cast<uintptr_t>(p) < (uintptr_t{1} << 40);
  f.device = 0;
  f.current_device = 0;
  return f;
}

MatrixView view(uintptr_t addr, int64_t rows, int64_t cols, int64_t ld = 0, int64_t batch = 1) {
  MatrixView v;
  v.data = reinterpret_cast<void*>(addr);
  v.rows = rows;
  v.cols = cols;
  v.row_stride = ld;
  v.batch = batch;
  return v;
}

constexpr int64_t kM = 256, kN = 384, kK = 512;

// The stored views of an m x n x k problem in `layout`.
struct Problem {
  MatrixView a, b, d;
  explicit Problem(GemmLayout layout, int64_t batch = 1) {
    a = a_mn_major(layout) ? view(0x100000, kK, kM, 0, batch) : view(0x100000, kM, kK, 0, batch);
    b = b_mn_major(layout) ? view(0x800000, kK, kN, 0, batch) : view(0x800000, kN, kK, 0, batch);
    d = view(0x2000000, kM, kN, 0, batch);
  }
};

std::string error_of(const Problem& p, GemmLayout layout) {
  try {
    validate_gemm(p.a, p.b, p.d, {}, fake_device, layout);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr GemmLayout kLayouts[] = {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT};

TEST(LayoutValidation, EachLayoutReadsItsStoredShapes) {
  for (GemmLayout layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    for (int64_t batch : {int64_t{1}, int64_t{3}}) {
      const Problem p(layout, batch);
      const plan::GemmDesc d = validate_gemm(p.a, p.b, p.d, {}, fake_device, layout);
      EXPECT_EQ(d.problem.m, kM);
      EXPECT_EQ(d.problem.n, kN);
      EXPECT_EQ(d.problem.k, kK);
      EXPECT_EQ(d.problem.num_groups, static_cast<uint32_t>(batch));
      EXPECT_EQ(d.problem.type, batch > 1 ? GemmType::kBatched : GemmType::kNormal);
      EXPECT_EQ(d.layout, layout) << "the plan (and its cache key) carry the layout";
    }
  }
}

TEST(LayoutValidation, NTViewsInAnotherLayoutAreRefusedNamingTheLayout) {
  // NT's views, square in nothing: read as TN they give A k = 256, B k = 384.
  const Problem nt(GemmLayout::kNT);
  const std::string tn = error_of(nt, GemmLayout::kTN);
  EXPECT_NE(tn.find("A is [k=256, m=512] but B is [k=384, n=512]: K differs"), std::string::npos) << tn;
  EXPECT_NE(tn.find("layout TN stores A as [k, m] and B as [k, n]"), std::string::npos) << tn;
  const std::string nn = error_of(nt, GemmLayout::kNN);
  EXPECT_NE(nn.find("A is [m=256, k=512] but B is [k=384, n=512]: K differs"), std::string::npos) << nn;
  const std::string tt = error_of(nt, GemmLayout::kTT);
  EXPECT_NE(tt.find("A is [k=256, m=512] but B is [n=384, k=512]: K differs"), std::string::npos) << tt;
  // NT's own message is as it was.
  const std::string own = error_of(Problem(GemmLayout::kNN), GemmLayout::kNT);
  EXPECT_NE(own.find("A is [m=256, k=512] but B is [n=512, k=384]: K differs"), std::string::npos) << own;
  EXPECT_EQ(own.find("layout"), std::string::npos) << own;
}

TEST(LayoutValidation, DMustBeMByNInEveryLayout) {
  for (GemmLayout layout : {GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT}) {
    Problem p(layout);
    p.d = view(0x2000000, kN, kM);  // transposed D
    const std::string e = error_of(p, layout);
    EXPECT_NE(e.find("D is 384x256, expected m x n = 256x384"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("layout ") + (layout == GemmLayout::kNN ? "NN" : layout == GemmLayout::kTN ? "TN" : "TT")),
              std::string::npos)
        << e;
  }
}

// The rows of a stored [k, m] A are m long: m (not k) sets its row pitch, which must be a
// multiple of 16 bytes (8 BF16); padding the rows makes any m legal.
TEST(LayoutValidation, RowPitchRuleFollowsTheStoredRows) {
  Problem tn(GemmLayout::kTN);
  tn.a = view(0x100000, kK, 250);  // m = 250: 500-byte rows
  tn.d = view(0x2000000, 250, kN);
  const std::string e = error_of(tn, GemmLayout::kTN);
  EXPECT_NE(e.find("A: row stride of 250 elements is 500 bytes, not a multiple of 16"), std::string::npos) << e;
  tn.a.row_stride = 256;
  EXPECT_EQ(error_of(tn, GemmLayout::kTN), "");
  // K odd is fine where K is the row count (stored [k, m] and [k, n]), with m and n aligned.
  Problem odd_k(GemmLayout::kTN);
  odd_k.a = view(0x100000, 333, kM);
  odd_k.b = view(0x800000, 333, kN);
  EXPECT_EQ(error_of(odd_k, GemmLayout::kTN), "");
  // ... but not in NN, where A's rows are k long.
  Problem nn(GemmLayout::kNN);
  nn.a = view(0x100000, kM, 333);
  nn.b = view(0x800000, 333, kN);
  const std::string e2 = error_of(nn, GemmLayout::kNN);
  EXPECT_NE(e2.find("A: row stride of 333 elements"), std::string::npos) << e2;
  // B stored [k, n] with n = 100: its rows are 200 bytes; padded to 104 elements it is fine.
  Problem nb(GemmLayout::kNN);
  nb.b = view(0x800000, kK, 100);
  nb.d = view(0x2000000, kM, 100, 104);
  const std::string e3 = error_of(nb, GemmLayout::kNN);
  EXPECT_NE(e3.find("B: row stride of 100 elements is 200 bytes"), std::string::npos) << e3;
  nb.b.row_stride = 104;
  EXPECT_EQ(error_of(nb, GemmLayout::kNN), "");
}

// k = 0 is the epilogue alone in every layout (A and B never read, so null), and m = 0 or n = 0
// is nothing to do: the layout decides which of the stored sizes is k, m and n.
TEST(LayoutValidation, EmptySizesFollowTheStoredShapes) {
  for (GemmLayout layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    Problem k0(layout);
    k0.a = a_mn_major(layout) ? view(0, 0, kM) : view(0, kM, 0);
    k0.b = b_mn_major(layout) ? view(0, 0, kN) : view(0, kN, 0);
    const plan::GemmDesc d = validate_gemm(k0.a, k0.b, k0.d, {}, fake_device, layout);
    EXPECT_EQ(d.problem.k, 0u);
    EXPECT_EQ(d.problem.m, kM);
    EXPECT_EQ(d.problem.n, kN);
    EXPECT_TRUE(epilogue_only(d));
    Problem m0(layout);
    m0.a = a_mn_major(layout) ? view(0x100000, kK, 0) : view(0x100000, 0, kK);
    m0.d = view(0x2000000, 0, kN);
    EXPECT_TRUE(nothing_to_do(validate_gemm(m0.a, m0.b, m0.d, {}, fake_device, layout)));
  }
}

TEST(LayoutValidation, AnUnknownLayoutIsRefused) {
  const Problem p(GemmLayout::kNT);
  const std::string e = error_of(p, static_cast<GemmLayout>(7));
  EXPECT_NE(e.find("layout 7 is not one of NT, NN, TN, TT"), std::string::npos) << e;
}

TEST(LayoutValidation, GroupedFormsAreNTOnly) {
  CallArgs x;
  x.a = view(0x100000, 1000, kK);
  x.b = view(0x800000, kN, kK, 0, 8);
  x.d = view(0x2000000, 1000, kN);
  x.group.type = GemmType::kMGroupedContiguous;
  x.group.layout = ContiguousLayout::kOffsets;
  x.group.data = reinterpret_cast<const int32_t*>(0x4000000);
  x.layout = GemmLayout::kTN;
  try {
    validate_call(x, fake_device);
    FAIL() << "a grouped GEMM took layout TN";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m-grouped contiguous: layout TN refused: the grouped GEMMs are NT only"),
              std::string::npos)
        << e.what();
  }
  x.layout = GemmLayout::kNT;
  EXPECT_NO_THROW(validate_call(x, fake_device));
}

// A dense call's layout travels from CallArgs into the desc the planner and the plan cache see.
TEST(LayoutValidation, CallArgsCarryTheLayout) {
  const Problem p(GemmLayout::kTT);
  CallArgs x;
  x.a = p.a;
  x.b = p.b;
  x.d = p.d;
  x.layout = GemmLayout::kTT;
  EXPECT_EQ(validate_call(x, fake_device).layout, GemmLayout::kTT);
  CallArgs y = x;
  y.layout = GemmLayout::kNT;
  EXPECT_FALSE(x == y) << "the per-thread call cache tells the layouts apart";
}

}  // namespace
}  // namespace tilecast::api
