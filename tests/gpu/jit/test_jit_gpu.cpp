// The JIT layer on a Hopper GPU: cluster launches, a TMA round trip through CUtensorMap, disk hits
// in a fresh runtime, occupancy, driver errors, and the host time of a cached launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gpu/jit/test_kernels.hpp"
#include "jit/build.hpp"
#include "jit/launch.hpp"
#include "jit/runtime.hpp"
#include "jit/tma.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

#define CUDA_OK(expr)                                                                  \
  do {                                                                                 \
    const cudaError_t err_ = (expr);                                                   \
    ASSERT_EQ(err_, cudaSuccess) << #expr << ": " << cudaGetErrorName(err_) << " ("    \
                                 << cudaGetErrorString(err_) << ")";                   \
  } while (0)

// A new empty folder under the system's temporary one.
std::filesystem::path make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  const char* made = ::mkdtemp(pattern.data());
  if (made == nullptr) throw Error("mkdtemp failed for " + pattern);
  return std::filesystem::path(made);
}

// A cache folder for this process, so the tests never read or write the user's cache.
const std::filesystem::path& test_cache_dir() {
  static const std::filesystem::path dir = make_temp_dir("tilecast-jit-gpu");
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(test_cache_dir(), ec);
    });
    return true;
  }();
  (void)cleanup_registered;
  return dir;
}

Runtime& runtime() {
  static Runtime* r = new Runtime(Compiler(), test_cache_dir());
  return *r;
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit DeviceBuffer(size_t n) : count(n) {
    void* p = nullptr;
    if (cudaMalloc(&p, n * sizeof(T)) == cudaSuccess) ptr = static_cast<T*>(p);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  size_t bytes() const { return count * sizeof(T); }
};

class JitGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int device = 0, major = 0;
    CUDA_OK(cudaGetDevice(&device));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major != 9) GTEST_SKIP() << "sm_90a kernels need a Hopper GPU (compute capability 9.x)";
    CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Launches an add_spec kernel (thread 0 of each block adds its value) on `blocks` blocks into a
  // zeroed counter and reads the counter back into `value`.
  void run_add_kernel(const Kernel& k, uint32_t blocks, uint32_t threads, int& value) {
    DeviceBuffer<int> counter(1);
    ASSERT_NE(counter.ptr, nullptr);
    CUDA_OK(cudaMemsetAsync(counter.ptr, 0, 4, stream_));
    LaunchConfig cfg;
    cfg.grid = dim3(blocks, 1, 1);
    cfg.block = dim3(threads, 1, 1);
    cfg.stream = stream_;
    launch_kernel(k, cfg, counter.ptr);
    CUDA_OK(cudaMemcpyAsync(&value, counter.ptr, 4, cudaMemcpyDeviceToHost, stream_));
    CUDA_OK(cudaStreamSynchronize(stream_));
  }

  cudaStream_t stream_ = nullptr;
};

// Launches the cluster-rank kernel on grid x cluster and checks every CTA's rank and cluster size.
void check_cluster_ranks(cudaStream_t stream, dim3 grid, dim3 cluster) {
  const Kernel& k = runtime().kernel(test::cluster_rank_spec());
  const uint32_t ctas = grid.x * grid.y;
  DeviceBuffer<uint32_t> out(2 * ctas);
  ASSERT_NE(out.ptr, nullptr);
  CUDA_OK(cudaMemsetAsync(out.ptr, 0xff, out.bytes(), stream));

  LaunchConfig cfg;
  cfg.grid = grid;
  cfg.block = dim3(32, 1, 1);
  cfg.cluster = cluster;
  cfg.stream = stream;
  launch_kernel(k, cfg, out.ptr);
  std::vector<uint32_t> host(2 * ctas);
  CUDA_OK(cudaMemcpyAsync(host.data(), out.ptr, out.bytes(), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));

  const uint32_t size = cluster.x * cluster.y * cluster.z;
  for (uint32_t y = 0; y < grid.y; ++y) {
    for (uint32_t x = 0; x < grid.x; ++x) {
      const uint32_t cta = y * grid.x + x;
      const uint32_t expected = (x % cluster.x) + (y % cluster.y) * cluster.x;
      EXPECT_EQ(host[2 * cta], expected) << "CTA (" << x << "," << y << ") cluster ("
                                         << cluster.x << "," << cluster.y << ")";
      EXPECT_EQ(host[2 * cta + 1], size) << "CTA (" << x << "," << y << ")";
    }
  }
}

TEST_F(JitGpu, ClusterRanksOf2And4) {
  check_cluster_ranks(stream_, dim3(16, 1, 1), dim3(2, 1, 1));
  check_cluster_ranks(stream_, dim3(16, 1, 1), dim3(4, 1, 1));
  check_cluster_ranks(stream_, dim3(4, 4, 1), dim3(2, 2, 1));
  check_cluster_ranks(stream_, dim3(8, 1, 1), dim3(1, 1, 1));  // no cluster attribute
  const Kernel& k = runtime().kernel(test::cluster_rank_spec());
  EXPECT_GT(k.num_registers(), 0);
  EXPECT_EQ(k.local_bytes(), 0);
  EXPECT_EQ(k.lowered_name(), "_ZN7tc_test12cluster_rankEPj");
}

// Element (b, r, c) of the test tensors: any 16-bit pattern (TMA copies bits).
uint16_t pattern(uint32_t b, uint32_t r, uint32_t c) {
  return static_cast<uint16_t>(b * 7919u + r * 131u + c * 3u + 1u);
}

struct TmaCase {
  uint32_t rank, box_rows, box_cols, swizzle;
  int batch, row0, col0;
};

TEST_F(JitGpu, TmaLoadsATileIntoSharedMemory) {
  // Up to 3 matrices of 200 x 136 bf16 with 144 elements (288 bytes) between rows.
  constexpr uint32_t kBatch = 3, kRows = 200, kCols = 136, kLd = 144;
  std::vector<uint16_t> host(size_t{kBatch} * kRows * kLd, 0xdead);
  for (uint32_t b = 0; b < kBatch; ++b)
    for (uint32_t r = 0; r < kRows; ++r)
      for (uint32_t c = 0; c < kCols; ++c) host[(size_t{b} * kRows + r) * kLd + c] = pattern(b, r, c);
  DeviceBuffer<uint16_t> tensor(host.size());
  ASSERT_NE(tensor.ptr, nullptr);
  // On the test's stream: it does not synchronise with the legacy default stream.
  CUDA_OK(cudaMemcpyAsync(tensor.ptr, host.data(), tensor.bytes(), cudaMemcpyHostToDevice,
                          stream_));

  const std::vector<TmaCase> cases = {
      {2, 64, 64, 128, 0, 0, 0},     {2, 64, 64, 128, 0, 64, 64},
      {2, 64, 64, 128, 0, 160, 96},  // rows 200.. and cols 136.. out of bounds: zeros
      {2, 64, 64, 128, 0, -8, -16},  // negative corner: zeros
      {2, 16, 40, 0, 0, 5, 8},       {2, 16, 40, 0, 0, 190, 120},
      {3, 32, 64, 128, 2, 48, 0},    {3, 32, 64, 128, 1, 180, 72},
  };
  for (const TmaCase& tc : cases) {
    SCOPED_TRACE("rank " + std::to_string(tc.rank) + " box " + std::to_string(tc.box_rows) + "x" +
                 std::to_string(tc.box_cols) + " swizzle " + std::to_string(tc.swizzle) +
                 " at (" + std::to_string(tc.batch) + "," + std::to_string(tc.row0) + "," +
                 std::to_string(tc.col0) + ")");
    const TmaSwizzle swizzle = tc.swizzle == 128 ? TmaSwizzle::k128B : TmaSwizzle::kNone;
    const TmaTensor t =
        tc.rank == 2 ? tma_2d(tensor.ptr, DType::kBF16, kRows, kCols, kLd, tc.box_rows,
                              tc.box_cols, swizzle)
                     : tma_3d(tensor.ptr, DType::kBF16, kBatch, kRows, kCols, kLd, 0, 1,
                              tc.box_rows, tc.box_cols, swizzle);
    const CUtensorMap map = make_tensor_map(t);
    const Kernel& k =
        runtime().kernel(test::tma_load_spec(tc.rank, tc.box_rows, tc.box_cols, tc.swizzle));

    const uint32_t n = tc.box_rows * tc.box_cols;
    DeviceBuffer<uint16_t> out(n);
    DeviceBuffer<uint32_t> status(1);
    ASSERT_NE(out.ptr, nullptr);
    ASSERT_NE(status.ptr, nullptr);
    CUDA_OK(cudaMemsetAsync(out.ptr, 0xab, out.bytes(), stream_));
    CUDA_OK(cudaMemsetAsync(status.ptr, 0xff, status.bytes(), stream_));
    LaunchConfig cfg;
    cfg.grid = dim3(1, 1, 1);
    cfg.block = dim3(128, 1, 1);
    cfg.stream = stream_;
    launch_kernel(k, cfg, map, tc.batch, tc.row0, tc.col0, out.ptr, status.ptr);

    std::vector<uint16_t> got(n);
    uint32_t smem_misalignment = 0;
    CUDA_OK(cudaMemcpyAsync(got.data(), out.ptr, out.bytes(), cudaMemcpyDeviceToHost, stream_));
    CUDA_OK(cudaMemcpyAsync(&smem_misalignment, status.ptr, 4, cudaMemcpyDeviceToHost, stream_));
    CUDA_OK(cudaStreamSynchronize(stream_));
    EXPECT_EQ(smem_misalignment, 0u) << "the shared tile is not 1024-byte aligned";

    int wrong = 0;
    for (uint32_t r = 0; r < tc.box_rows; ++r) {
      for (uint32_t c = 0; c < tc.box_cols; ++c) {
        const int64_t gr = int64_t{tc.row0} + r, gc = int64_t{tc.col0} + c;
        const bool inside = gr >= 0 && gr < kRows && gc >= 0 && gc < kCols;
        const uint16_t expected = inside ? pattern(tc.batch, static_cast<uint32_t>(gr),
                                                   static_cast<uint32_t>(gc))
                                         : 0;
        const uint16_t value = got[r * tc.box_cols + c];
        if (value != expected && ++wrong <= 5) {
          ADD_FAILURE() << "box (" << r << "," << c << "): got 0x" << std::hex << value
                        << ", expected 0x" << expected << std::dec;
        }
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST_F(JitGpu, FreshRuntimeLoadsFromDisk) {
  const KernelSpec spec = test::add_spec(2);
  runtime().kernel(spec);  // compiled (or already on disk) into the shared test cache

  Runtime fresh(Compiler(), test_cache_dir());
  const Kernel& k = fresh.kernel(spec);
  EXPECT_EQ(fresh.stats().disk_hits, 1u);
  EXPECT_EQ(fresh.stats().compiles, 0u);
  EXPECT_EQ(&fresh.kernel(spec), &k);
  EXPECT_EQ(fresh.stats().memory_hits, 1u);

  int value = 0;
  run_add_kernel(k, 10, 64, value);
  EXPECT_EQ(value, 20);
}

// With a GPU driver, NVRTC may take a program it compiled before from the driver's compute cache
// without running ptxas, leaving no resource report in its log: compiling the same kernel again
// (here into a second, empty disk cache) must still give a kernel that runs. It threw before.
TEST_F(JitGpu, SecondCompileOfAProgramStillGivesAKernel) {
  const std::filesystem::path other_dir = make_temp_dir("tilecast-jit-gpu-again");
  const KernelSpec spec = test::add_spec(5);
  runtime().kernel(spec);
  int value = 0;
  {
    Runtime again(Compiler(), other_dir);
    const Kernel& k = again.kernel(spec);
    EXPECT_EQ(again.stats().compiles, 1u);
    const BuildResult built = build_kernel(Compiler(), DiskCache(std::filesystem::path()), spec);
    EXPECT_FALSE(built.kernel.cubin.empty());
    if (!built.kernel.report.found) std::printf("[ note ] no ptxas report on a repeated compile (driver cache)\n");
    run_add_kernel(k, 3, 32, value);
  }
  std::error_code ec;
  std::filesystem::remove_all(other_dir, ec);
  EXPECT_EQ(value, 3 * 5);
}

TEST_F(JitGpu, DynamicSmemOccupancyAndDriverErrors) {
  const Kernel& k = runtime().kernel(test::add_spec(1));
  int sms = 0, device = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr uint32_t kSmem = 200 * 1024;  // one CTA per SM
  for (uint32_t cluster : {1u, 2u, 4u}) {
    const int clusters = max_active_clusters(k, cluster, dim3(384, 1, 1), kSmem);
    std::printf("max active clusters of %u x (384 threads, 200 KiB): %d (%d SMs)\n", cluster,
                clusters, sms);
    EXPECT_GT(clusters, 0);
    EXPECT_LE(clusters * static_cast<int>(cluster), sms);
  }

  DeviceBuffer<int> counter(1);
  ASSERT_NE(counter.ptr, nullptr);
  CUDA_OK(cudaMemsetAsync(counter.ptr, 0, 4, stream_));
  LaunchConfig cfg;
  cfg.grid = dim3(8, 1, 1);
  cfg.block = dim3(384, 1, 1);
  cfg.cluster = dim3(4, 1, 1);
  cfg.dynamic_smem_bytes = kSmem;
  cfg.stream = stream_;
  launch_kernel(k, cfg, counter.ptr);
  int value = 0;
  CUDA_OK(cudaMemcpyAsync(&value, counter.ptr, 4, cudaMemcpyDeviceToHost, stream_));
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(value, 8);

  // Refused by the driver (no SM has 1 MiB of shared memory): an Error naming the call.
  cfg.dynamic_smem_bytes = 1024 * 1024;
  try {
    launch_kernel(k, cfg, counter.ptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MAX_DYNAMIC_SHARED_SIZE_BYTES"), std::string::npos)
        << e.what();
  }
  // Refused before the driver: the grid is not a multiple of the cluster.
  cfg.dynamic_smem_bytes = 0;
  cfg.grid = dim3(6, 1, 1);
  EXPECT_THROW(launch_kernel(k, cfg, counter.ptr), Error);
  CUDA_OK(cudaStreamSynchronize(stream_));
  CUDA_OK(cudaGetLastError());
}

TEST_F(JitGpu, CachedLaunchHostTime) {
  const KernelSpec spec = test::add_spec(1);
  runtime().kernel(spec);  // compile or load once
  DeviceBuffer<int> counter(1);
  ASSERT_NE(counter.ptr, nullptr);
  CUDA_OK(cudaMemsetAsync(counter.ptr, 0, 4, stream_));
  LaunchConfig cfg;
  cfg.grid = dim3(1, 1, 1);
  cfg.block = dim3(32, 1, 1);
  cfg.stream = stream_;

  constexpr int kIters = 2000;
  using clock = std::chrono::steady_clock;
  std::vector<double> lookup_us, launch_us;
  const uint64_t hits_before = runtime().stats().memory_hits;
  for (int i = 0; i < kIters; ++i) {
    const auto t0 = clock::now();
    const Kernel& k = runtime().kernel(spec);
    const auto t1 = clock::now();
    launch_kernel(k, cfg, counter.ptr);
    const auto t2 = clock::now();
    lookup_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    launch_us.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
  }
  int value = 0;
  CUDA_OK(cudaMemcpyAsync(&value, counter.ptr, 4, cudaMemcpyDeviceToHost, stream_));
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(value, kIters);
  EXPECT_EQ(runtime().stats().memory_hits - hits_before, static_cast<uint64_t>(kIters));

  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double lookup = median(lookup_us), total = median(launch_us);
  std::printf("cached path, median of %d: key lookup %.2f us, lookup + launch %.2f us\n", kIters,
              lookup, total);
  EXPECT_LT(lookup, 50.0) << "a memory-cache hit should cost microseconds";
  EXPECT_LT(total, 200.0);
}

// Threads that ask for the same new kernel at once run NVRTC once: the others wait for it.
TEST_F(JitGpu, ThreadsAskingForOneNewKernelCompileItOnce) {
  const std::filesystem::path dir = make_temp_dir("tilecast-jit-gpu-threads");
  {
    Runtime fresh(Compiler(), dir);
    const KernelSpec spec = test::add_spec(11);
    CUDA_OK(cudaFree(nullptr));  // the context, before the threads ask for it
    std::vector<const Kernel*> got(8, nullptr);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < got.size(); ++t) threads.emplace_back([&, t] { got[t] = &fresh.kernel(spec); });
    for (std::thread& th : threads) th.join();
    for (const Kernel* k : got) EXPECT_EQ(k, got[0]);
    EXPECT_EQ(fresh.stats().compiles, 1u);
    EXPECT_EQ(fresh.stats().disk_hits, 0u);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// TILECAST_JIT_OPTIONS changed within the process gives another kernel from the memory cache,
// the one its disk key names, and the old one back once it is changed back.
TEST_F(JitGpu, ChangedJitOptionsGiveAnotherKernel) {
  const KernelSpec spec = test::add_spec(6);
  const char* before = std::getenv("TILECAST_JIT_OPTIONS");
  const std::string saved = before ? before : "";
  ::unsetenv("TILECAST_JIT_OPTIONS");
  const Kernel& plain = runtime().kernel(spec);
  ::setenv("TILECAST_JIT_OPTIONS", "-DTC_JIT_TEST_UNUSED_MACRO", 1);
  const Kernel& with = runtime().kernel(spec);
  EXPECT_NE(&with, &plain);
  EXPECT_EQ(with.key(), runtime().build(spec).key);
  ::unsetenv("TILECAST_JIT_OPTIONS");
  EXPECT_EQ(&runtime().kernel(spec), &plain);
  if (before) ::setenv("TILECAST_JIT_OPTIONS", saved.c_str(), 1);
}

TEST_F(JitGpu, ProcessRuntimeUsesTheEnvironment) {
  const std::filesystem::path dir = test_cache_dir() / "instance";
  ::setenv("TILECAST_CACHE_DIR", dir.c_str(), 1);
  Runtime& r = Runtime::instance();
  EXPECT_EQ(r.disk_cache().dir(), dir);
  const Kernel& k = r.kernel(test::add_spec(4));
  EXPECT_TRUE(std::filesystem::exists(r.disk_cache().entry_path(k.key())));
}

}  // namespace
}  // namespace tilecast::jit
