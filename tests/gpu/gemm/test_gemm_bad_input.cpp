// Bad input that only a GPU can show (README.md, "Bad input"; the CPU tests in
// tests/cpu/api/test_validate.cpp prove every rule with a fake pointer query): the real driver's
// allocation ranges, virtual memory that spans chunks, tensors and streams of another device,
// empty problems that launch nothing, and k = 0 (D = beta * C + bias). Every refused call leaves D
// as it was.
#include <gtest/gtest.h>

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "api/validate.hpp"
#include "driver/driver.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"

namespace tilecast::test {
namespace {

// Bytes that no GEMM writes: a bf16 NaN in every element.
constexpr int kPoisonByte = 0xFF;
constexpr uint16_t kPoisonBf16 = 0xFFFF;
// bf16 1.0.
constexpr float kOne = 1.0f;

MatrixView view_of(void* data, DType t, int64_t rows, int64_t cols, int64_t ld = 0) {
  MatrixView v;
  v.data = data;
  v.dtype = t;
  v.rows = rows;
  v.cols = cols;
  v.row_stride = ld;
  return v;
}

std::vector<uint16_t> bf16_bits(const MatrixView& v) {
  TC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> out(static_cast<size_t>(v.rows * v.cols));
  TC_CUDA_CHECK(cudaMemcpy2D(out.data(), v.cols * 2, v.data, v.ld() * 2, v.cols * 2, v.rows, cudaMemcpyDeviceToHost));
  return out;
}

bool all_equal(const std::vector<uint16_t>& bits, uint16_t value) {
  for (uint16_t b : bits)
    if (b != value) return false;
  return true;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GemmBadInput, TheDriverGivesEachAllocationsRange) {
  DeviceBuffer buf(3 << 20);
  const api::PointerFacts f = api::query_pointer(static_cast<char*>(buf.get()) + 4096);
  EXPECT_TRUE(f.device_memory);
  EXPECT_EQ(f.device, f.current_device);
  EXPECT_EQ(f.alloc_base, reinterpret_cast<uintptr_t>(buf.get()));
  EXPECT_GE(f.alloc_bytes, buf.bytes());
  std::printf("[ measured ] cuMemGetAddressRange of a %zu-byte cudaMalloc: %llu bytes\n", buf.bytes(),
              static_cast<unsigned long long>(f.alloc_bytes));
  std::vector<char> host(64);
  EXPECT_FALSE(api::query_pointer(host.data()).device_memory);
}

TEST(GemmBadInput, AViewPastItsAllocationIsRefusedAndDKeepsItsValues) {
  constexpr int64_t kM = 256, kN = 256, kK = 512;
  // A's allocation holds exactly kM rows; the view claims far more (past any rounding of the size).
  constexpr int64_t kClaimedRows = kM + 8192;
  DeviceBuffer a_buf(kM * kK * 2);
  DeviceMatrix b = make_matrix(DType::kBF16, kN, kK);
  DeviceBuffer d_buf(kClaimedRows * kN * 2);
  const MatrixView a = view_of(a_buf.get(), DType::kBF16, kClaimedRows, kK);
  const MatrixView d = view_of(d_buf.get(), DType::kBF16, kClaimedRows, kN);
  TC_CUDA_CHECK(cudaMemset(d.data, kPoisonByte, d_buf.bytes()));
  const std::string e = error_of([&] { gemm(a, b.view, d, nullptr); });
  EXPECT_NE(e.find("A reaches past its allocation"), std::string::npos) << e;
  EXPECT_TRUE(all_equal(bf16_bits(d), kPoisonBf16)) << "a refused call wrote D";
  // The rows that fit: accepted.
  MatrixView a_fits = a, d_fits = d;
  a_fits.rows = d_fits.rows = kM;
  EXPECT_NO_THROW(gemm(a_fits, b.view, d_fits, nullptr));
  TC_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(GemmBadInput, InterleavedCAndDInOneBufferRun) {
  // D the left half of each row of one buffer, C the right half: no element shared, so legal. With
  // A = 0, D = C exactly, and C is only read.
  constexpr int64_t kM = 256, kN = 128, kK = 64;
  DeviceMatrix a = make_matrix(DType::kBF16, kM, kK), b = make_matrix(DType::kBF16, kN, kK);
  TC_CUDA_CHECK(cudaMemset(a.view.data, 0, kM * kK * 2));
  TC_CUDA_CHECK(cudaMemset(b.view.data, 0, kN * kK * 2));
  DeviceMatrix buf = make_matrix(DType::kBF16, kM, 2 * kN);
  const MatrixView d = view_of(buf.view.data, DType::kBF16, kM, kN, 2 * kN);
  const MatrixView c = view_of(static_cast<uint16_t*>(buf.view.data) + kN, DType::kBF16, kM, kN, 2 * kN);
  from_host(c, std::vector<float>(kM * kN, kOne));
  TC_CUDA_CHECK(cudaMemset2D(d.data, 2 * kN * 2, kPoisonByte, kN * 2, kM));
  ASSERT_NO_THROW(gemm(a.view, b.view, d, nullptr, &c));
  EXPECT_TRUE(all_equal(bf16_bits(d), float_to_bf16_bits(kOne))) << "D = 0 + C";
  EXPECT_TRUE(all_equal(bf16_bits(c), float_to_bf16_bits(kOne))) << "C was written";
  // C shifted by one column shares D's last column of each row: refused, D untouched.
  TC_CUDA_CHECK(cudaMemset2D(d.data, 2 * kN * 2, kPoisonByte, kN * 2, kM));
  MatrixView c_shifted = c;
  c_shifted.data = static_cast<uint16_t*>(c.data) - 8;  // 16 bytes: still TMA-aligned
  const std::string e = error_of([&] { gemm(a.view, b.view, d, nullptr, &c_shifted); });
  EXPECT_NE(e.find("C overlaps D without being D itself"), std::string::npos) << e;
  EXPECT_TRUE(all_equal(bf16_bits(d), kPoisonBf16));
}

// Virtual memory mapped from two physical chunks side by side (as PyTorch's expandable segments
// map it): cuMemGetAddressRange reports one chunk, so the range is left unknown and a view over
// both chunks must run, not be refused.
TEST(GemmBadInput, AViewOverTwoMappedChunksRuns) {
  const Driver& drv = Driver::get();
  int dev = 0;
  TC_CUDA_CHECK(cudaGetDevice(&dev));
  TC_CUDA_CHECK(cudaFree(nullptr));  // the primary context, current
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t chunk = 0;
  drv.check(drv.cuMemGetAllocationGranularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
  CUmemGenericAllocationHandle h[2];
  CUdeviceptr base = 0;
  drv.check(drv.cuMemAddressReserve(&base, 2 * chunk, 0, 0, 0), "cuMemAddressReserve");
  for (int i = 0; i < 2; ++i) {
    drv.check(drv.cuMemCreate(&h[i], chunk, &prop, 0), "cuMemCreate");
    drv.check(drv.cuMemMap(base + i * chunk, chunk, 0, h[i], 0), "cuMemMap");
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  drv.check(drv.cuMemSetAccess(base, 2 * chunk, &access, 1), "cuMemSetAccess");

  constexpr int64_t kK = 1024, kN = 128;
  const int64_t rows = static_cast<int64_t>(2 * chunk) / (kK * 2);  // A fills both chunks
  void* a_ptr = reinterpret_cast<void*>(base);
  TC_CUDA_CHECK(cudaMemset(a_ptr, 0, 2 * chunk));
  const api::PointerFacts f = api::query_pointer(a_ptr);
  EXPECT_TRUE(f.device_memory);
  EXPECT_EQ(f.alloc_bytes, 0u) << "virtual memory's range must stay unknown";
  DeviceMatrix b = make_matrix(DType::kBF16, kN, kK);
  TC_CUDA_CHECK(cudaMemset(b.view.data, 0, kN * kK * 2));  // finite: 0 * NaN would not be 0
  DeviceMatrix d = make_matrix(DType::kBF16, rows, kN);
  TC_CUDA_CHECK(cudaMemset(d.view.data, kPoisonByte, rows * kN * 2));
  EXPECT_NO_THROW(gemm(view_of(a_ptr, DType::kBF16, rows, kK), b.view, d.view, nullptr));
  EXPECT_TRUE(all_equal(bf16_bits(d.view), 0)) << "D = 0 * B^T over both chunks";

  TC_CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < 2; ++i) {
    drv.check(drv.cuMemUnmap(base + i * chunk, chunk), "cuMemUnmap");
    drv.check(drv.cuMemRelease(h[i]), "cuMemRelease");
  }
  drv.check(drv.cuMemAddressFree(base, 2 * chunk), "cuMemAddressFree");
}

// The stream-ordered allocator's blocks (cudaMallocAsync) lie in a pool: whatever range the driver
// reports for one must bound it, never refuse a view that fits.
TEST(GemmBadInput, AStreamOrderedAllocationThatFitsRuns) {
  constexpr int64_t kM = 512, kN = 256, kK = 256;
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* a_ptr = nullptr;
  TC_CUDA_CHECK(cudaMallocAsync(&a_ptr, kM * kK * 2, stream));
  TC_CUDA_CHECK(cudaMemsetAsync(a_ptr, 0, kM * kK * 2, stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  const api::PointerFacts f = api::query_pointer(a_ptr);
  EXPECT_TRUE(f.device_memory);
  std::printf("[ measured ] cuMemGetAddressRange of a %lld-byte cudaMallocAsync block: %llu bytes from %lld bytes "
              "before it\n",
              static_cast<long long>(kM * kK * 2), static_cast<unsigned long long>(f.alloc_bytes),
              static_cast<long long>(reinterpret_cast<uintptr_t>(a_ptr) - f.alloc_base));
  DeviceMatrix b = make_matrix(DType::kBF16, kN, kK), d = make_matrix(DType::kBF16, kM, kN);
  TC_CUDA_CHECK(cudaMemset(b.view.data, 0, kN * kK * 2));
  TC_CUDA_CHECK(cudaMemset(d.view.data, kPoisonByte, kM * kN * 2));
  EXPECT_NO_THROW(gemm(view_of(a_ptr, DType::kBF16, kM, kK), b.view, d.view, stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(all_equal(bf16_bits(d.view), 0));
  TC_CUDA_CHECK(cudaFreeAsync(a_ptr, stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  TC_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(GemmBadInput, EmptyProblemsLaunchNothing) {
  // Null pointers, m = 0 (then n = 0, then no batch), captured: the graph must hold no node.
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int which = 0; which < 3; ++which) {
    MatrixView a = view_of(nullptr, DType::kBF16, 128, 64), b = view_of(nullptr, DType::kBF16, 128, 64),
               d = view_of(nullptr, DType::kBF16, 128, 128);
    if (which == 0) a.rows = d.rows = 0;
    if (which == 1) b.rows = d.cols = 0;
    if (which == 2) a.batch = b.batch = d.batch = 0;
    EXPECT_NO_THROW(prepare(a, b, d));
    cudaGraph_t graph;
    TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const std::string e = error_of([&] { gemm(a, b, d, stream); });
    TC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    EXPECT_EQ(e, "") << "case " << which;
    size_t nodes = 1;
    TC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    EXPECT_EQ(nodes, 0u) << "case " << which << ": an empty problem launched something";
    TC_CUDA_CHECK(cudaGraphDestroy(graph));
  }
  TC_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Small integers: every sum below is exact in bf16 and fp32, so the results compare exactly.
std::vector<float> small_integers(size_t count, int range, int salt) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + salt) % (2 * range + 1)) - range);
  return v;
}

// k = 0: D = beta * C + bias, as cuBLAS writes it, with A and B null (never read).
TEST(GemmBadInput, KZeroWritesBetaCPlusBias) {
  constexpr int64_t kBatch = 2, kM = 100, kN = 72;
  constexpr float kBeta = 2.0f;
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (DType out : {DType::kBF16, DType::kFP32}) {
    SCOPED_TRACE(dtype_name(out));
    MatrixView a = view_of(nullptr, DType::kBF16, kM, 0), b = view_of(nullptr, DType::kBF16, kN, 0);
    a.batch = b.batch = kBatch;
    DeviceMatrix d = make_matrix(out, kM, kN, kBatch, /*ld=*/kN + 8), c = make_matrix(out, kM, kN, kBatch, kN + 24);
    DeviceMatrix bias = make_matrix(DType::kFP32, 1, kN);
    const std::vector<float> cv = small_integers(kBatch * kM * kN, 8, 1), bv = small_integers(kN, 4, 3);
    from_host(c.view, cv);
    from_host(bias.view, bv);
    GemmEpilogue e{&c.view, /*alpha=*/3.0f, kBeta, {bias.view.data, DType::kFP32, kN}};
    const auto expect_d = [&](const std::function<float(size_t)>& want, const char* what) {
      const std::vector<float> got = to_host(d.view);
      size_t wrong = 0;
      for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != want(i);
      EXPECT_EQ(wrong, 0u) << what;
    };
    // Prepared, then captured: one kernel node, replayed.
    const auto poison_d = [&] { TC_CUDA_CHECK(cudaMemset(d.alloc_begin(), kPoisonByte, d.buffer.bytes())); };
    poison_d();
    ASSERT_NO_THROW(prepare(a, b, d.view, e));
    cudaGraph_t graph;
    TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const std::string err = error_of([&] { gemm(a, b, d.view, stream, e); });
    TC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    ASSERT_EQ(err, "");
    size_t nodes = 0;
    TC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    EXPECT_EQ(nodes, 1u);
    cudaGraphExec_t exec;
    TC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    TC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    TC_CUDA_CHECK(cudaStreamSynchronize(stream));
    expect_d([&](size_t i) { return kBeta * cv[i] + bv[i % kN]; }, "D = beta * C + bias");
    TC_CUDA_CHECK(cudaGraphExecDestroy(exec));
    TC_CUDA_CHECK(cudaGraphDestroy(graph));
    // beta = 0 never reads C, even NaN.
    TC_CUDA_CHECK(cudaMemset(c.alloc_begin(), kPoisonByte, c.buffer.bytes()));
    poison_d();
    e.beta = 0.0f;
    gemm(a, b, d.view, stream, e);
    expect_d([&](size_t i) { return bv[i % kN]; }, "D = bias");
    // Neither C nor bias: D = 0.
    poison_d();
    gemm(a, b, d.view, stream);
    expect_d([](size_t) { return 0.0f; }, "D = 0");
    // In place: D = beta * D + bias.
    from_host(d.view, cv);
    GemmEpilogue in_place{&d.view, 1.0f, kBeta, {bias.view.data, DType::kFP32, kN}};
    gemm(a, b, d.view, stream, in_place);
    expect_d([&](size_t i) { return kBeta * cv[i] + bv[i % kN]; }, "D = beta * D + bias");
  }
  TC_CUDA_CHECK(cudaStreamDestroy(stream));
}

int device_count() {
  int n = 0;
  TC_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

TEST(GemmBadInput, AStreamOfAnotherDeviceIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  cudaStream_t other;
  TC_CUDA_CHECK(cudaSetDevice(1));
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  TC_CUDA_CHECK(cudaSetDevice(0));
  DeviceMatrix a = make_matrix(DType::kBF16, 128, 64), b = make_matrix(DType::kBF16, 128, 64),
               d = make_matrix(DType::kBF16, 128, 128);
  TC_CUDA_CHECK(cudaMemset(d.view.data, kPoisonByte, 128 * 128 * 2));
  gemm(a.view, b.view, d.view, nullptr);  // cached now: the stream is checked on the fast path too
  TC_CUDA_CHECK(cudaMemset(d.view.data, kPoisonByte, 128 * 128 * 2));
  const std::string e = error_of([&] { gemm(a.view, b.view, d.view, other); });
  EXPECT_NE(e.find("stream belongs to device 1, but the call runs on device 0"), std::string::npos) << e;
  EXPECT_TRUE(all_equal(bf16_bits(d.view), kPoisonBf16));
  TC_CUDA_CHECK(cudaStreamDestroy(other));
}

TEST(GemmBadInput, ATensorOfAnotherDeviceIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  TC_CUDA_CHECK(cudaSetDevice(1));
  DeviceMatrix b_on_1 = make_matrix(DType::kBF16, 128, 64);
  TC_CUDA_CHECK(cudaSetDevice(0));
  DeviceMatrix a = make_matrix(DType::kBF16, 128, 64), d = make_matrix(DType::kBF16, 128, 128);
  TC_CUDA_CHECK(cudaMemset(d.view.data, kPoisonByte, 128 * 128 * 2));
  const std::string e = error_of([&] { gemm(a.view, b_on_1.view, d.view, nullptr); });
  EXPECT_NE(e.find("B is on device 1, but the call runs on device 0"), std::string::npos) << e;
  EXPECT_TRUE(all_equal(bf16_bits(d.view), kPoisonBf16));
}

}  // namespace
}  // namespace tilecast::test
