// The comm device headers must compile under NVRTC (kernels that use them are JIT-compiled),
// for sm_90a, with no spills. No GPU needed.
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <string>
#include <vector>

namespace {

struct Compiled {
  nvrtcResult result;
  std::string log;
  size_t cubin_bytes;
};

Compiled compile(const std::string& source) {
  nvrtcProgram prog{};
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "comm_probe.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const std::string inc_project = std::string("-I") + TILECAST_SOURCE_INCLUDE;
  const std::string inc_cccl = std::string("-I") + TILECAST_CCCL_INCLUDE;
  const char* opts[] = {"-arch=sm_90a", "-std=c++20", inc_project.c_str(), inc_cccl.c_str(), "-Xptxas=-v"};
  Compiled c{nvrtcCompileProgram(prog, 5, opts), "", 0};
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::vector<char> log(n + 1, '\0');
  nvrtcGetProgramLog(prog, log.data());
  c.log = log.data();
  if (c.result == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &c.cubin_bytes);
  nvrtcDestroyProgram(&prog);
  return c;
}

}  // namespace

TEST(CommNvrtc, BarriersCompileForSm90aWithoutSpills) {
  const Compiled c = compile(R"(
#include "tilecast/device/comm/comm.cuh"
using namespace tilecast::comm;
extern "C" __global__ void probe(BarrierState s, WaitPolicy policy, unsigned rounds) {
  const GridGroup g = whole_grid(s.grid_counter);
  for (unsigned i = 0; i < rounds; ++i) {
    phase_sign_barrier(s, g, policy, "probe-ps");
    epoch_barrier(s, g, policy, "probe-epoch");
    grid_sync(g, policy, "probe-grid");
  }
}
)");
  ASSERT_EQ(c.result, NVRTC_SUCCESS) << c.log;
  EXPECT_GT(c.cubin_bytes, 0u);
  EXPECT_NE(c.log.find("Compiling entry function 'probe' for 'sm_90a'"), std::string::npos) << c.log;
  // Every function's report (the kernel and the out-of-line timeout reporter) says no spills.
  int reports = 0;
  for (size_t at = c.log.find(" bytes spill stores"); at != std::string::npos;
       at = c.log.find(" bytes spill stores", at + 1), ++reports) {
    EXPECT_EQ(c.log.compare(at - 2, 2, " 0"), 0) << c.log;
    const std::string none = " bytes spill stores, 0 bytes spill loads";
    EXPECT_EQ(c.log.compare(at, none.size(), none), 0) << c.log;
  }
  EXPECT_GE(reports, 1) << c.log;
  std::printf("%s", c.log.c_str());
}
