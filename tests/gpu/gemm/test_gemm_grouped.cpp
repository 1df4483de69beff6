// The grouped GEMMs (tilecast/grouped.hpp) against per-group cuBLASLt loops: every form and cluster
// shape, BF16 and FP32 out, rows no group owns left untouched, empty experts and zero-K groups;
// the masked form captured in a CUDA graph and replayed with new masks; bad arguments that need
// real pointers; group data the kernel must trap on (death tests: a trap ends the CUDA context, so
// each runs in a child process).
//
//   --gtest_filter='GroupedSmall.*'   the compute-sanitizer subset (one case per form and shape)
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "grouped_cases.hpp"
#include "tilecast/diagnostics.hpp"
#include "tilecast_test/cuda_check.hpp"
#include "tilecast_test/device_matrix.hpp"
#include "tilecast_test/fill.hpp"

namespace tilecast::test {
namespace {

using GroupedTest = StreamTest<GroupedCase>;

std::string case_name(const ::testing::TestParamInfo<GroupedCase>& info) {
  return info.param.name() + "_" + std::to_string(info.index);
}

using GroupedCorrectness = GroupedTest;
TEST_P(GroupedCorrectness, MatchesPerGroupCublas) { EXPECT_TRUE(run_grouped_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(AllClusters, GroupedCorrectness, ::testing::ValuesIn(grouped_correctness_cases()), case_name);

using GroupedHeuristic = GroupedTest;
TEST_P(GroupedHeuristic, DefaultConfigMatchesPerGroupCublas) { EXPECT_TRUE(run_grouped_case(GetParam(), stream_)); }
INSTANTIATE_TEST_SUITE_P(Shapes, GroupedHeuristic, ::testing::ValuesIn(grouped_heuristic_cases()), case_name);

// The compute-sanitizer subset: small problems, every cluster shape, one test per form (so that a
// slow tool can take them one at a time: --gtest_filter='GroupedSmall.Masked*').
void run_small_cases(GroupedForm form) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const GroupedCase& c : grouped_small_cases()) {
    if (c.form == form) {
      EXPECT_TRUE(run_grouped_case(c, stream)) << c.name();
    }
  }
  cudaStreamDestroy(stream);
}
TEST(GroupedSmall, OffsetsEveryClusterShape) { run_small_cases(GroupedForm::kOffsets); }
TEST(GroupedSmall, RowIndexEveryClusterShape) { run_small_cases(GroupedForm::kRowIndex); }
TEST(GroupedSmall, MaskedEveryClusterShape) { run_small_cases(GroupedForm::kMasked); }
TEST(GroupedSmall, KGroupedEveryClusterShape) { run_small_cases(GroupedForm::kKGrouped); }

// Decode under CUDA graphs: prepared, captured once, replayed with new masks in the same device
// array (all empty, one row each, every row, random), each replay checked against its reference.
TEST(GroupedGraph, MaskedCallReplaysWithNewMasks) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::mt19937_64 rng(seed_base());
  for (const GroupedCase& c : masked_graph_cases()) {
    GroupedRun run(c, stream);
    run.prepare();
    cudaGraph_t graph = nullptr;
    TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      run.call();
    } catch (const Error& e) {
      cudaStreamEndCapture(stream, &graph);
      FAIL() << c.name() << ": the prepared call was refused under capture: " << e.what();
    }
    TC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    TC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int64_t groups = static_cast<int64_t>(c.sizes.size()), max_m = c.rows;
    std::vector<std::vector<int64_t>> masks = {std::vector<int64_t>(groups, 0), std::vector<int64_t>(groups, 1),
                                               std::vector<int64_t>(groups, max_m), c.sizes};
    for (int i = 0; i < 3; ++i) {
      std::vector<int64_t> m;
      for (int64_t g = 0; g < groups; ++g) m.push_back(std::uniform_int_distribution<int64_t>(0, max_m)(rng));
      masks.push_back(m);
    }
    for (const std::vector<int64_t>& mask : masks) {
      run.set_sizes(mask);
      run.reset_output();
      TC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      std::string text;
      for (int64_t v : mask) text += std::to_string(v) + " ";
      EXPECT_TRUE(run.check()) << c.name() << " replayed with masks " << text;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// A capture of a call whose kernels are not loaded yet is refused, naming prepare.
TEST(GroupedGraph, UnpreparedCallUnderCaptureIsRefused) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // A shape no other test plans: its plan cannot be cached yet.
  const GroupedCase c{"unprepared", GroupedForm::kMasked, {3, 9}, 136, 72, 40, 8};
  GroupedRun run(c, stream);
  TC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string error;
  try {
    run.call();
  } catch (const Error& e) {
    error = e.what();
  }
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream, &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  EXPECT_NE(error.find("tilecast::prepare"), std::string::npos) << error;
  cudaStreamDestroy(stream);
}

// Errors only real pointers can show: a group array in host memory, one whose allocation ends
// before its last entry.
TEST(GroupedErrors, HostAndShortGroupArraysAreRefused) {
  DeviceMatrix a = make_matrix(DType::kBF16, 64, 64, 4);
  DeviceMatrix b = make_matrix(DType::kBF16, 64, 64, 4);
  DeviceMatrix d = make_matrix(DType::kBF16, 64, 64, 4);
  std::vector<int32_t> host(4, 1);
  try {
    gemm_mgrouped_masked(a.view, b.view, d.view, host.data(), 1, nullptr);
    ADD_FAILURE() << "a host array was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("masked_m is not in device memory"), std::string::npos) << e.what();
  }
  // 2 MiB (a whole number of the allocator's pages, so the driver reports it exactly); its last
  // 8 bytes hold 2 of the 4 counts.
  DeviceBuffer block(size_t{2} << 20);
  const auto* tail = reinterpret_cast<const int32_t*>(static_cast<const char*>(block.get()) + (size_t{2} << 20) - 8);
  try {
    gemm_mgrouped_masked(a.view, b.view, d.view, tail, 1, nullptr);
    ADD_FAILURE() << "a short array was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("masked_m needs 4 int32 (16 bytes), but its allocation ends 8 bytes"),
              std::string::npos)
        << e.what();
  }
}

// Group data the problem cannot mean makes the kernel trap; the report names the entry. Each case
// runs in a child process (the trap ends its CUDA context), which prints the report and exits 3.
void run_expecting_a_trap(const GroupedCase& c, const std::vector<int64_t>& bad_sizes) {
  cudaStream_t stream;
  TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GroupedRun run(c, stream);
  run.prepare();
  run.set_sizes(bad_sizes);
  run.reset_output();
  run.call();
  const cudaError_t err = cudaStreamSynchronize(stream);
  const auto report = take_layout_fault_report();
  std::fprintf(stderr, "kernel: %s; report: %s\n", cudaGetErrorString(err), report ? report->c_str() : "none");
  std::exit(err != cudaSuccess && report ? 3 : 1);
}

class GroupedLayoutFaultDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(GroupedLayoutFaultDeathTest, MaskedCountAboveMaxM) {
  const GroupedCase c{"fault", GroupedForm::kMasked, {1, 2, 3}, 128, 64, 100, 10};
  EXPECT_EXIT(run_expecting_a_trap(c, {5, 100, 101}), ::testing::ExitedWithCode(3),
              "masked_m\\[2\\] = 101 is outside \\[0, max_m = 100\\]");
}

TEST_F(GroupedLayoutFaultDeathTest, DecreasingExpertOffsets) {
  // 50 + 40 + 20 = 110 rows; the bad offsets go 0, 50, 30, ... (set_sizes only writes sizes, so the
  // case's own offsets are overwritten through a negative size).
  const GroupedCase c{"fault", GroupedForm::kOffsets, {50, 40, 20}, 128, 64, 110};
  EXPECT_EXIT(run_expecting_a_trap(c, {50, -20, 20}), ::testing::ExitedWithCode(3),
              "expert offsets\\[2\\] = 30 \\(after 50\\)");
}

TEST_F(GroupedLayoutFaultDeathTest, KSizesPastTheTotalK) {
  const GroupedCase c{"fault", GroupedForm::kKGrouped, {64, 64}, 128, 128, 64};
  EXPECT_EXIT(run_expecting_a_trap(c, {64, 72}), ::testing::ExitedWithCode(3),
              "k_sizes\\[1\\] = 72 after 64 columns of the groups before it passes K = 128");
}

TEST_F(GroupedLayoutFaultDeathTest, KSizeNoMultipleOfEight) {
  // Group 1 would start at column 60 of A and B: no TMA load may start there.
  const GroupedCase c{"fault", GroupedForm::kKGrouped, {64, 64}, 128, 128, 64};
  EXPECT_EXIT(run_expecting_a_trap(c, {60, 64}), ::testing::ExitedWithCode(3),
              "k_sizes\\[0\\] = 60 is not a multiple of 8");
}

TEST_F(GroupedLayoutFaultDeathTest, RowIndexBlockHoldingTwoExperts) {
  // Expert 1's run starts at row 100, inside expert 0's 128-row run (not a multiple of 128).
  const auto trap_on_unaligned_runs = [&] {
    cudaStream_t stream;
    TC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    DeviceMatrix a = make_matrix(DType::kBF16, 256, 64);
    DeviceMatrix b = make_matrix(DType::kBF16, 128, 64, 2);
    DeviceMatrix d = make_matrix(DType::kBF16, 256, 128);
    fill_uniform(a.view, 1, stream);
    fill_uniform(b.view, 2, stream);
    std::vector<int32_t> rows(256, -1);
    for (int r = 0; r < 200; ++r) rows[r] = r < 100 ? 0 : 1;
    DeviceBuffer layout(rows.size() * sizeof(int32_t));
    TC_CUDA_CHECK(cudaMemcpy(layout.get(), rows.data(), layout.bytes(), cudaMemcpyHostToDevice));
    GemmConfig config;
    config.block_m = 128;
    gemm_mgrouped_contiguous(a.view, b.view, d.view,
                             {ContiguousLayout::kRowIndex, static_cast<const int32_t*>(layout.get())}, stream, config);
    const cudaError_t err = cudaStreamSynchronize(stream);
    const auto report = take_layout_fault_report();
    std::fprintf(stderr, "kernel: %s; report: %s\n", cudaGetErrorString(err), report ? report->c_str() : "none");
    std::exit(err != cudaSuccess && report ? 3 : 1);
  };
  EXPECT_EXIT(trap_on_unaligned_runs(), ::testing::ExitedWithCode(3), "row 100 holds expert 1 after row 99's 0");
}

}  // namespace
}  // namespace tilecast::test
