// The grid sync on its own, and its co-residency: a full GPU of CTAs over many rounds; a grid
// that cannot be co-resident refused with an error (cooperative launch) or ended by the timeout
// diagnostic (plain launch), never a hang; another stream's kernel holding SMs while the
// grid-sync kernel launches (cooperatively it must still complete; leaving the held SMs free
// must work too).
//
// Seen on our H200 (driver 580.159): a plain launch of a full grid behind a kernel that holds 8
// SMs did not start partially, it waited for that kernel, so the DeepGEMM hang needs a grid that
// can never fit, or a holder that waits for the grid; the oversized grid below is the former.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "emulated_world.cuh"

namespace tc = tilecast::comm;
using tc::testing::GridRoundArgs;
using tc::testing::RoundStats;

namespace {

// Enough dynamic shared memory that one CTA fills an SM.
constexpr size_t kFillSmSmem = 160 * 1024;

struct GridRig {
  uint32_t* counter = nullptr;
  uint32_t* slots = nullptr;
  RoundStats* stats = nullptr;
  int sms = 0;

  explicit GridRig(int max_ctas) {
    TC_CHECK_CUDA(cudaMalloc(&counter, 4));
    TC_CHECK_CUDA(cudaMemset(counter, 0, 4));
    TC_CHECK_CUDA(cudaMalloc(&slots, 8 * static_cast<size_t>(max_ctas)));
    TC_CHECK_CUDA(cudaMemset(slots, 0xA5, 8 * static_cast<size_t>(max_ctas)));
    TC_CHECK_CUDA(cudaMalloc(&stats, sizeof(RoundStats)));
    TC_CHECK_CUDA(cudaMemset(stats, 0, sizeof(RoundStats)));
    TC_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    TC_CHECK_CUDA(cudaFuncSetAttribute(tc::testing::grid_rounds_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(kFillSmSmem)));
    TC_CHECK_CUDA(cudaFuncSetAttribute(tc::testing::hog_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(kFillSmSmem)));
  }
  GridRoundArgs args(uint32_t rounds, uint64_t timeout_ns, uint64_t* start_ns = nullptr) const {
    return {counter, slots, rounds, tc::WaitPolicy{timeout_ns, nullptr}, stats, start_ns};
  }
  RoundStats read_stats() const {
    RoundStats s{};
    TC_CHECK_CUDA(cudaMemcpy(&s, stats, sizeof s, cudaMemcpyDeviceToHost));
    return s;
  }
};

// Host memory the device writes while it runs.
template <typename T>
T* mapped() {
  T* p = nullptr;
  TC_CHECK_CUDA(cudaHostAlloc(&p, sizeof(T), cudaHostAllocMapped));
  std::memset(p, 0, sizeof(T));
  return p;
}

// Starts the hog on `held` SMs and returns once it is running.
void start_hog(cudaStream_t s, int held, uint64_t ns, uint32_t* running, uint64_t* ended) {
  tc::testing::hog_kernel<<<held, 32, kFillSmSmem, s>>>(ns, running, ended);
  TC_CHECK_CUDA(cudaGetLastError());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (__atomic_load_n(running, __ATOMIC_ACQUIRE) == 0) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("the hog kernel never started");
    std::this_thread::yield();
  }
}

constexpr int kHeldSms = 8;
constexpr uint64_t kHogNs = 400'000'000;  // 400 ms, far past the grid sync's 100 ms timeout

}  // namespace

TEST(CommGridSync, FullGpuOfCtasManyRounds) {
  for (int per_sm : {1, 2}) {
    int sms = 0;
    TC_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int ctas = sms * per_sm;
    GridRig rig(ctas);
    const size_t smem = per_sm == 1 ? kFillSmSmem : 0;
    const uint32_t rounds = 20'000;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    tc::launch_cooperative(tc::testing::grid_rounds_kernel, ctas, 128, smem, nullptr, "grid rounds",
                           rig.args(rounds, 10'000'000'000ull));
    cudaEventRecord(b);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    const RoundStats s = rig.read_stats();
    EXPECT_EQ(s.errors, 0u) << "round " << s.round << " cta " << s.cta << " got " << s.got << " want " << s.want;
    uint32_t counter = 1;
    TC_CHECK_CUDA(cudaMemcpy(&counter, rig.counter, 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(counter & 0x7FFFFFFFu, 0u);
    EXPECT_EQ(counter >> 31, rounds & 1u);
    std::printf("grid sync, %d CTAs: %.3f us per round\n", ctas, 1000.0 * ms / rounds);
  }
}

TEST(CommGridSync, RefusesAGridThatCannotBeCoResident) {
  GridRig rig(1);
  const int too_many = rig.sms + 1;  // one CTA per SM at this shared-memory size
  try {
    tc::launch_cooperative(tc::testing::grid_rounds_kernel, too_many, 128, kFillSmSmem, nullptr, "grid rounds",
                           rig.args(1, 1'000'000'000ull));
    FAIL() << "a grid of " << too_many << " CTAs that fill an SM each was launched";
  } catch (const tilecast::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds at most " + std::to_string(rig.sms)), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

namespace {
// In a child process: if the cooperative launch started a partial grid, the grid sync would trap
// and take the context (and every later test of this binary) with it.
[[noreturn]] void cooperative_behind_hog_child() {
  ::dup2(2, 1);
  GridRig rig(256);
  auto* running = mapped<uint32_t>();
  auto* hog_end = mapped<uint64_t>();
  auto* start = mapped<uint64_t>();
  *start = ~0ull;
  cudaStream_t hog_stream, stream;
  TC_CHECK_CUDA(cudaStreamCreateWithFlags(&hog_stream, cudaStreamNonBlocking));
  TC_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  start_hog(hog_stream, kHeldSms, kHogNs, running, hog_end);
  // Every SM's worth of CTAs, cooperatively: the runtime must not start a partial grid.
  tc::launch_cooperative(tc::testing::grid_rounds_kernel, rig.sms, 128, kFillSmSmem, stream, "grid rounds",
                         rig.args(200, 100'000'000ull, start));
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "child: cooperative launch behind the hog failed: %s\n", cudaGetErrorString(e));
    std::fflush(nullptr);
    std::_Exit(4);
  }
  const uint32_t errors = rig.read_stats().errors;
  const double gap_ms = (static_cast<double>(*start) - static_cast<double>(*hog_end)) / 1e6;
  std::fprintf(stderr, "cooperative launch: its first CTA started %.3f ms %s the hog ended; %u errors\n",
               gap_ms < 0 ? -gap_ms : gap_ms, gap_ms < 0 ? "before" : "after", errors);
  std::fflush(nullptr);
  std::_Exit(errors == 0 ? 0 : 5);
}
}  // namespace

TEST(CommGridSyncDeathTest, CooperativeLaunchSurvivesAnotherStreamHoldingSms) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(cooperative_behind_hog_child(), ::testing::ExitedWithCode(0), "cooperative launch: its first CTA started");
}

TEST(CommGridSync, LeavingTheHeldSmsFreeWorks) {
  GridRig rig(256);
  auto* running = mapped<uint32_t>();
  auto* hog_end = mapped<uint64_t>();
  cudaStream_t hog_stream, stream;
  TC_CHECK_CUDA(cudaStreamCreateWithFlags(&hog_stream, cudaStreamNonBlocking));
  TC_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  start_hog(hog_stream, kHeldSms, kHogNs, running, hog_end);
  // A plain launch that reserves the held SMs (sglang's fix for DeepGEMM's hang).
  tc::testing::grid_rounds_kernel<<<rig.sms - kHeldSms, 128, kFillSmSmem, stream>>>(rig.args(200, 100'000'000ull));
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(__atomic_load_n(hog_end, __ATOMIC_ACQUIRE), 0u) << "the hog was expected to still run";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(rig.read_stats().errors, 0u);
}

namespace {
// A plain launch of more CTAs than the GPU can hold at once: the first wave waits in the grid
// sync for CTAs that can only start when the first wave exits, which it never does. DeepGEMM's
// grid sync hangs here; ours must end in the diagnostic.
[[noreturn]] void oversized_plain_launch_child() {
  ::dup2(2, 1);  // device printf goes to stdout; the death test reads stderr
  GridRig rig(512);
  tc::testing::grid_rounds_kernel<<<2 * rig.sms, 128, kFillSmSmem>>>(rig.args(20, 100'000'000ull));
  const cudaError_t e = cudaDeviceSynchronize();
  std::fprintf(stderr, "child: sync returned '%s'\n", cudaGetErrorString(e));
  std::fflush(nullptr);
  std::_Exit(e != cudaSuccess ? 3 : 1);  // no teardown of a context the trap has killed
}
}  // namespace

TEST(CommGridSyncDeathTest, OversizedPlainGridTimesOutWithTheDiagnostic) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(oversized_plain_launch_child(), ::testing::ExitedWithCode(3),
              "grid sync timed out after [0-9]+ ns: tag=test-grid rank=-1 .*ranks=[0-9]+ .*are all CTAs co-resident");
}
